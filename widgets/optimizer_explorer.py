"""``OptimizerExplorer``: real optimizers racing across a 2-D loss surface, side by side.

Every optimizer here is the real ``learntorch.optim`` class, updating a real
leaf tensor ``p = torch.tensor(start, requires_grad=True)`` with gradients from
the real autograd -- the very loop you write to train a network::

    optimizer.zero_grad()
    loss = surface(p)
    loss.backward()
    optimizer.step()

only with two parameters instead of millions, so that the path can be drawn.

The explorer is a state object (``step``, ``reset``, ``goto``, ``set_hyper``,
``select``, ``set_surface``; ``trajectories`` and ``losses`` hold the paths) with
a thin ipywidgets view.  Its rule: the paths always show every selected
optimizer, with its current hyperparameters, after ``step_count`` steps from the
surface's start.  So when you change a learning rate, the surface or the set of
optimizers, the changed runs are replayed from the start to the current step,
and you see at once what the change does.

Example::

    >>> explorer = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Adam"])
    >>> explorer.step(10)
    >>> explorer
    OptimizerExplorer(surface='rosenbrock', step 10, runs: SGD 5.91e+00, Adam 7.09e+00)
    >>> explorer.trajectories["Adam"].shape
    (11, 2)
"""
import contextlib
import html
import inspect
import time
import types
import warnings

import numpy as np

import learntorch

from . import _optimizer_plots as plots
from ._base import Widget, figure_to_svg
from ._momentum_phase import momentum_phase_diagram
from ._surfaces import SURFACES, make_surface, quadratic

__all__ = ["OptimizerExplorer", "OPTIMIZERS", "momentum_phase_diagram"]


class OptimizerChoice:
    """One entry of the menu: a ``learntorch.optim`` class with fixed options.

    ``knob`` names the second hyperparameter the view gives a slider (besides
    ``lr``): ``"momentum"``, ``"alpha"`` (RMSprop's averaging), ``"beta1"``
    (Adam's first ``betas`` entry) or None.
    """

    def __init__(self, optimizer_class, options, knob=None):
        self.optimizer_class = optimizer_class
        self.options = options
        self.knob = knob

    def hyperparameter_names(self):
        """The keyword arguments the optimizer class takes (``lr``, ``momentum``, ...)."""
        parameters = inspect.signature(self.optimizer_class.__init__).parameters
        return [name for name in parameters if name not in ("self", "params")]


OPTIMIZERS = {
    "SGD": OptimizerChoice(learntorch.optim.SGD, {}),
    "Momentum": OptimizerChoice(learntorch.optim.SGD, {"momentum": 0.9}, "momentum"),
    "Nesterov": OptimizerChoice(learntorch.optim.SGD, {"momentum": 0.9, "nesterov": True},
                                "momentum"),
    "RMSprop": OptimizerChoice(learntorch.optim.RMSprop, {"alpha": 0.99}, "alpha"),
    "Adagrad": OptimizerChoice(learntorch.optim.Adagrad, {}),
    "Adam": OptimizerChoice(learntorch.optim.Adam, {"betas": (0.9, 0.999)}, "beta1"),
    "AdamW": OptimizerChoice(learntorch.optim.AdamW, {"betas": (0.9, 0.999),
                                                      "weight_decay": 0.01}, "beta1"),
}

DEFAULT_SELECTION = ("SGD", "Momentum", "Adam")


class OptimizerRun:
    """One optimizer descending one surface from its start: the real training loop, recorded.

    ``positions`` is an array ``(n + 1, 2)`` of the points visited (the start
    first), ``losses`` the loss at each of them.  A run that reaches a non-finite
    point or loss is stopped and keeps ``diverged_at`` = the step that failed;
    its recorded path ends at the last finite point.

    Example::

        >>> run = OptimizerRun(make_surface("saddle"), learntorch.optim.SGD, {"lr": 0.05})
        >>> run.step(); run.positions.shape
        (2, 2)
    """

    def __init__(self, surface, optimizer_class, hyper):
        self.surface = surface
        # built before anything else, so bad hyperparameters raise the optimizer's own error
        self.point = learntorch.tensor(surface.start, requires_grad=True)
        self.optimizer = optimizer_class([self.point], **hyper)
        self.diverged_at = None
        self._positions = []
        self._losses = []
        with _quiet_overflow():
            self._loss = self._forward()
            self._record(self._loss)

    def _forward(self):
        loss = self.surface(self.point)
        if not isinstance(loss, learntorch.Tensor) or loss.dim() != 0:
            shape = tuple(loss.shape) if isinstance(loss, learntorch.Tensor) else type(loss)
            raise RuntimeError(
                f"the surface function must return a scalar tensor (shape ()), but for p of "
                f"shape (2,) it returned {shape}: reduce it, e.g. with .sum()")
        return loss

    def _record(self, loss):
        position = self.point.detach().numpy().astype(np.float64)
        value = loss.item()
        if np.isfinite(position).all() and np.isfinite(value):
            self._positions.append(position)
            self._losses.append(value)
        else:
            self.diverged_at = len(self._positions)
            self._loss = None  # nothing sensible to differentiate any more

    @property
    def steps_taken(self):
        return len(self._positions) - 1

    @property
    def positions(self):
        return np.array(self._positions)

    @property
    def losses(self):
        return np.array(self._losses)

    def step(self):
        """One step of the training loop (nothing once diverged)."""
        if self.diverged_at is not None:
            return
        with _quiet_overflow():
            self.optimizer.zero_grad()
            self._loss.backward()
            self.optimizer.step()
            # the loss at the new point: recorded now, differentiated at the next step
            # (p is not changed in between, so this is the usual loop, reordered)
            self._loss = self._forward()
            self._record(self._loss)


@contextlib.contextmanager
def _quiet_overflow():
    """Diverging runs overflow: no numpy warnings for that (the run is marked instead)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


class ContourGrid:
    """The loss on a grid over the surface's window, with the contour levels (computed once)."""

    def __init__(self, surface, resolution):
        self.xs, self.ys, self.values = surface.values_on_grid(resolution)
        self.levels = plots.contour_levels(self.values)


class OptimizerExplorer(Widget):
    """Real ``learntorch.optim`` optimizers side by side on a 2-D loss surface.

    ``surface``: ``"quadratic"``, ``"rosenbrock"``, ``"beale"``, ``"himmelblau"``,
    ``"saddle"``, a ``Surface``, or your own function of a tensor ``p`` of shape
    (2,) written with learntorch operations (give it a ``window`` and ``start``).
    ``optimizers``: the names from ``OPTIMIZERS`` that start selected.
    ``hyper``: hyperparameters per optimizer, e.g. ``{"Adam": {"lr": 0.05}}``;
    the rest are the surface's defaults.  ``condition_number`` shapes the quadratic.
    ``max_steps`` is where the Play control stops.

    Example::

        >>> explorer = OptimizerExplorer(lambda p: (p[0] - 1) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2,
        ...                              optimizers=["Adam"], hyper={"Adam": {"lr": 0.1}})
        >>> explorer.step(300)
        >>> explorer.trajectories["Adam"][-1].round(2)
        array([0.99, 0.98])
    """

    def __init__(self, surface="rosenbrock", optimizers=DEFAULT_SELECTION, *, hyper=None,
                 condition_number=None, start=None, window=None, max_steps=300):
        self.surface = make_surface(surface, condition_number=condition_number, start=start,
                                    window=window)
        self._choices = {self.surface.name: self.surface}  # the surfaces offered in the view
        self.selected = self._check_names(optimizers)
        self.max_steps = int(max_steps)
        self.step_count = 0
        self._hyper = self._default_hyper(self.surface)
        for name, options in (hyper or {}).items():
            self._hyper[self._check_names([name])[0]].update(
                self._checked_hyper(name, options))
        self._grids = {}  # surface key -> ContourGrid: contours are computed once per surface
        self.contour_plot = self.loss_plot = self.controls = None
        self.last_redraw_seconds = None  # how long the last redraw of the live view took
        self._rebuild(self.selected)

    # ------------------------------------------------------------------ state
    def step(self, n=1):
        """Take ``n`` steps with every selected optimizer."""
        for _ in range(int(n)):
            for run in self.runs.values():
                run.step()
            self.step_count += 1
        self._refresh()

    def reset(self):
        """Every run back at the start (step 0), hyperparameters kept."""
        self.step_count = 0
        self._rebuild(self.selected)
        self._refresh()

    def goto(self, step):
        """Show the runs after ``step`` steps (going back replays from the start)."""
        step = int(step)
        if step < 0:
            raise ValueError(f"step must be >= 0, but got {step}")
        if step < self.step_count:
            self.step_count = 0
            self._rebuild(self.selected)
        self.step(step - self.step_count)

    def hyper(self, name):
        """The keyword arguments ``name``'s optimizer is built with (a copy)."""
        return dict(self._hyper[self._check_names([name])[0]])

    def set_hyper(self, name, **options):
        """Change hyperparameters of one optimizer and replay its run to the current step.

        Takes the optimizer class's own keyword names (``lr``, ``momentum``,
        ``betas``, ``alpha``, ``weight_decay``, ...).

        Example::

            >>> explorer = OptimizerExplorer("quadratic", optimizers=["Adam"])
            >>> explorer.set_hyper("Adam", lr=0.05, betas=(0.8, 0.999))
            >>> explorer.hyper("Adam")["lr"]
            0.05
        """
        (name,) = self._check_names([name])
        hyper = dict(self._hyper[name], **self._checked_hyper(name, options))
        if name in self.selected:
            run = self._replayed(name, hyper)  # raises before anything changed if hyper is bad
            self.runs[name] = run
        else:
            OPTIMIZERS[name].optimizer_class([learntorch.zeros(2, requires_grad=True)], **hyper)
        self._hyper[name] = hyper
        self._refresh()

    def select(self, name, selected=True):
        """Show (``True``) or hide an optimizer; one newly shown catches up to the current step."""
        (name,) = self._check_names([name])
        chosen = set(self.selected) | {name} if selected else set(self.selected) - {name}
        self.selected = tuple(n for n in OPTIMIZERS if n in chosen)
        if selected and name not in self.runs:
            self.runs[name] = self._replayed(name, self._hyper[name])
        elif not selected:
            self.runs.pop(name, None)
        self.runs = {n: self.runs[n] for n in self.selected}
        self._refresh()

    def set_surface(self, surface, *, condition_number=None, start=None, window=None):
        """Descend another surface: lrs take its defaults; runs replay to the current step."""
        if isinstance(surface, str) and surface in self._choices and surface not in SURFACES:
            surface = self._choices[surface]  # your own function, chosen again in the view
        new = make_surface(surface, condition_number=condition_number, start=start,
                           window=window)
        defaults = self._default_hyper(new)
        hyper = {name: dict(options, lr=defaults[name]["lr"])
                 for name, options in self._hyper.items()}
        self._switch(new, hyper)

    def set_condition_number(self, condition_number):
        """Reshape the quadratic bowl (hyperparameters kept: watch SGD's limit lr < 2/kappa)."""
        if self.surface.name != "quadratic":
            raise ValueError(f"condition_number only applies to the 'quadratic' surface; this "
                             f"explorer shows {self.surface.name!r}: set_surface('quadratic', "
                             f"condition_number={condition_number}) switches to it")
        angle = self.surface.options.get("angle", 0.0)
        new = make_surface(quadratic(condition_number, angle), start=self.surface.start,
                           window=self.surface.window)
        self._switch(new, self._hyper)

    def _switch(self, surface, hyper):
        """Replay every run on another surface; nothing changes if one of them fails."""
        runs = {name: self._replayed(name, hyper[name], surface) for name in self.selected}
        self.surface, self._hyper, self.runs = surface, hyper, runs
        self._choices[surface.name] = surface
        self._refresh(new_surface=True)

    @property
    def trajectories(self):
        """``{name: array (n + 1, 2)}``: every point each selected optimizer visited."""
        return {name: run.positions for name, run in self.runs.items()}

    @property
    def losses(self):
        """``{name: array (n + 1,)}``: the loss at each of those points."""
        return {name: run.losses for name, run in self.runs.items()}

    @property
    def history(self):
        """``{name: {"positions", "losses", "diverged_at"}}`` for every selected optimizer."""
        return {name: {"positions": run.positions, "losses": run.losses,
                       "diverged_at": run.diverged_at} for name, run in self.runs.items()}

    def contour_grid(self, resolution=120):
        """The surface's values on a grid (computed on first use, then cached per surface)."""
        key = (self.surface.key, resolution)
        if key not in self._grids:
            self._grids[key] = ContourGrid(self.surface, resolution)
        return self._grids[key]

    def momentum_phase(self, lrs=None, momentums=None, steps=200):
        """Where SGD with momentum converges on this quadratic: see ``momentum_phase_diagram``."""
        if self.surface.name != "quadratic":
            raise ValueError(f"the momentum phase diagram is computed for the 'quadratic' "
                             f"surface, but this explorer shows {self.surface.name!r}: "
                             f"call set_surface('quadratic') first, or use "
                             f"momentum_phase_diagram(condition_number=...)")
        return momentum_phase_diagram(self.surface.options["condition_number"], lrs=lrs,
                                      momentums=momentums, steps=steps)

    def __repr__(self):
        runs = []
        for name, run in self.runs.items():
            runs.append(f"{name} diverged at step {run.diverged_at}"
                        if run.diverged_at is not None else f"{name} {run.losses[-1]:.2e}")
        return (f"OptimizerExplorer(surface={self.surface.label!r}, step {self.step_count}, "
                f"runs: {', '.join(runs) if runs else 'none'})")

    # ------------------------------------------------------------------ helpers
    def _check_names(self, names):
        if isinstance(names, str):
            names = [names]
        names = list(names)
        unknown = [n for n in names if n not in OPTIMIZERS]
        if unknown:
            raise ValueError(f"unknown optimizer {unknown[0]!r}: choose from "
                             f"{', '.join(OPTIMIZERS)}")
        return tuple(n for n in OPTIMIZERS if n in names)

    def _checked_hyper(self, name, options):
        options = dict(options)
        allowed = OPTIMIZERS[name].hyperparameter_names()
        for key in options:
            if key not in allowed:
                raise TypeError(f"{name} ({OPTIMIZERS[name].optimizer_class.__name__}) has no "
                                f"hyperparameter {key!r}: choose from {', '.join(allowed)}")
        return options

    def _default_hyper(self, surface):
        return {name: dict(choice.options, lr=surface.learning_rates[name])
                for name, choice in OPTIMIZERS.items()}

    def _replayed(self, name, hyper, surface=None):
        """A new run of ``name`` from the start, stepped to the current step."""
        run = OptimizerRun(surface or self.surface, OPTIMIZERS[name].optimizer_class, hyper)
        for _ in range(self.step_count):
            run.step()
        return run

    def _rebuild(self, names):
        """Fresh runs at step 0."""
        self.runs = {name: OptimizerRun(self.surface, OPTIMIZERS[name].optimizer_class,
                                        self._hyper[name])
                     for name in names}

    # ------------------------------------------------------------------ pictures
    def figure(self):
        """A new matplotlib ``Figure``: the paths on the contours, and the loss per step."""
        from matplotlib.figure import Figure

        figure = Figure(figsize=(10, 5.0))
        contour_ax, loss_ax = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.15, 1]})
        markers = plots.draw_contours(contour_ax, self.contour_grid(), self.surface)
        plots.draw_paths(contour_ax, self.runs, markers)
        plots.draw_losses(loss_ax, self.runs, self.surface, self.step_count)
        figure.subplots_adjust(left=0.07, right=0.98, bottom=0.26, top=0.94, wspace=0.25)
        return figure

    def static_svg(self):
        return figure_to_svg(self.figure())

    def _refresh(self, new_surface=False):
        """Redraw the live view, if it has been built (a no-op for a state object alone)."""
        if self.controls is None:
            return
        started = time.perf_counter()
        if new_surface or self.contour_plot.surface_key != self.surface.key:
            self.contour_plot.show_surface(self.contour_grid(), self.surface)
        self.contour_plot.update(self.runs)
        self.loss_plot.update(self.runs, self.surface, max(self.step_count, 1))
        # the backgrounds are the same bytes on most frames (no change: nothing is sent);
        # the moving lines are the SVG overlays
        self.controls.contour_image.value = self.contour_plot.png()
        self.controls.contour_paths.value = self.contour_plot.overlay()
        self.controls.loss_image.value = self.loss_plot.png()
        self.controls.loss_lines.value = self.loss_plot.overlay()
        self.last_redraw_seconds = time.perf_counter() - started
        self._sync_controls()
        self.controls.status.value = _status_html(self)

    def _sync_controls(self):
        """Make the controls show the state (without their handlers acting on it)."""
        c = self.controls
        c.syncing = True
        try:
            c.surface.value = self.surface.name
            c.condition_number.layout.display = None if self.surface.name == "quadratic" \
                else "none"
            if self.surface.name == "quadratic":
                c.condition_number.value = self.surface.options["condition_number"]
            c.play.max = c.scrub.max = max(self.max_steps, self.step_count)
            c.play.value = c.scrub.value = self.step_count
            for name in OPTIMIZERS:
                c.selected[name].value = name in self.selected
                c.lr[name].value = self._hyper[name]["lr"]
                if name in c.knob:
                    c.knob[name].value = _knob_value(name, self._hyper[name])
        finally:
            c.syncing = False

    def _build_view(self):
        import ipywidgets as w

        c = self.controls = types.SimpleNamespace(syncing=False, selected={}, lr={}, knob={})
        options = list(SURFACES) + [n for n in self._choices if n not in SURFACES]
        c.surface = w.Dropdown(options=options, value=self.surface.name, description="surface",
                               tooltip="the loss surface the optimizers descend")
        c.condition_number = w.FloatLogSlider(
            value=10.0, base=10, min=0, max=2.5, step=0.05, description="condition",
            tooltip="condition number of the quadratic: steep curvature / flat curvature",
            continuous_update=False)
        c.play = w.Play(value=0, min=0, max=self.max_steps, interval=100, description="play",
                        tooltip="play: one step of every optimizer per frame")
        c.scrub = w.IntSlider(value=0, min=0, max=self.max_steps, description="step",
                              tooltip="jump to a step (going back replays from the start)",
                              continuous_update=False)
        w.link((c.play, "value"), (c.scrub, "value"))
        c.step = w.Button(description="Step", tooltip="one step of every selected optimizer",
                          icon="step-forward")
        c.reset = w.Button(description="Reset", tooltip="back to the start, step 0",
                           icon="undo")
        c.status = w.HTML()
        rows = []
        for name, choice in OPTIMIZERS.items():
            c.selected[name] = w.Checkbox(value=name in self.selected, description=name,
                                          indent=False, layout=w.Layout(width="110px"),
                                          tooltip=f"show {name}")
            c.lr[name] = w.FloatLogSlider(value=self._hyper[name]["lr"], base=10, min=-5,
                                          max=1, step=0.05, description="lr",
                                          readout_format=".2e", continuous_update=False,
                                          tooltip=f"{name}'s learning rate")
            row = [c.selected[name], c.lr[name]]
            if choice.knob is not None:
                low = 0.5 if choice.knob == "alpha" else 0.0
                c.knob[name] = w.FloatSlider(value=_knob_value(name, self._hyper[name]),
                                             min=low, max=0.999, step=0.01,
                                             description=choice.knob, readout_format=".3f",
                                             continuous_update=False,
                                             tooltip=f"{name}'s {choice.knob}")
                row.append(c.knob[name])
            rows.append(w.HBox(row))
        c.contour_image, c.contour_paths, contour_picture = _layered(w)
        c.loss_image, c.loss_lines, loss_picture = _layered(w)
        c.phase_button = w.Button(description="Draw phase diagram",
                                  tooltip="run SGD with momentum over a grid of learning rates "
                                          "and momentums on this quadratic",
                                  layout=w.Layout(width="200px"))
        # the picture joins the panel once there is one to show: an Image with no bytes is
        # a broken image to the browser (even in a closed accordion)
        c.phase_image = w.Image(format="png")
        c.phase_panel = w.VBox([c.phase_button])
        phase = w.Accordion(children=[c.phase_panel])
        phase.set_title(0, "learning rate x momentum: where does SGD with momentum converge? "
                           "(quadratic)")
        self.contour_plot = plots.ContourPlot()
        self.loss_plot = plots.LossPlot()

        c.surface.observe(self._on_surface, "value")
        c.condition_number.observe(self._on_condition_number, "value")
        c.play.observe(self._on_play, "value")
        c.step.on_click(lambda _: self.step())
        c.reset.on_click(lambda _: self.reset())
        c.phase_button.on_click(lambda _: self._draw_phase())
        for name in OPTIMIZERS:
            c.selected[name].observe(self._handler(self.select, name), "value")
            c.lr[name].observe(self._handler(lambda n, v: self.set_hyper(n, lr=v), name),
                               "value")
            if name in c.knob:
                c.knob[name].observe(self._handler(self._set_knob, name), "value")
        view = w.VBox([w.HBox([c.surface, c.condition_number]),
                       w.HBox([c.play, c.scrub, c.step, c.reset, c.status]),
                       *rows, w.HBox([contour_picture, loss_picture]), phase])
        self._refresh(new_surface=True)
        return view

    def _handler(self, action, name):
        def handle(change):
            if not self.controls.syncing:
                self._guarded(action, name, change["new"])
        return handle

    def _guarded(self, action, *args):
        """Run a control's action; a refused value is explained and the control set back."""
        try:
            action(*args)
        except (ValueError, TypeError) as error:
            self._sync_controls()
            self.controls.status.value = (
                _status_html(self) + "<br><span style='color: #b00020'>"
                f"{html.escape(str(error))}</span>")

    def _on_surface(self, change):
        if not self.controls.syncing:
            condition = self.controls.condition_number.value if change["new"] == "quadratic" \
                else None
            self._guarded(lambda: self.set_surface(change["new"], condition_number=condition))

    def _on_condition_number(self, change):
        if not self.controls.syncing and self.surface.name == "quadratic":
            self._guarded(self.set_condition_number, change["new"])

    def _on_play(self, change):
        if not self.controls.syncing:
            self._guarded(self.goto, change["new"])

    def _set_knob(self, name, value):
        knob = OPTIMIZERS[name].knob
        if knob == "beta1":
            self.set_hyper(name, betas=(value, self._hyper[name]["betas"][1]))
        else:
            self.set_hyper(name, **{knob: value})

    def _draw_phase(self):
        """Compute the phase diagram for the current quadratic; mark the Momentum run on it."""
        c = self.controls
        if self.surface.name != "quadratic":
            c.phase_panel.children = (c.phase_button,)
            c.phase_image.value = b""
            c.phase_button.description = "Choose the quadratic first"
            return
        diagram = self.momentum_phase()
        momentum = self._hyper["Momentum"]
        figure = diagram.figure(marker=(momentum["lr"], momentum["momentum"]))
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(figure)
        figure.set_dpi(80)
        canvas.draw()
        c.phase_image.value = plots.figure_png(figure, canvas)
        c.phase_panel.children = (c.phase_button, c.phase_image)
        c.phase_button.description = "Draw phase diagram"


def _layered(w):
    """``(image, overlay, box)``: a PNG with an SVG drawn over it, both in one grid cell
    (CSS grid stacks children placed in the same area; the later one is on top)."""
    cell = w.Layout(grid_area="picture", margin="0", padding="0")
    image = w.Image(format="png", layout=cell)
    overlay = w.HTML(layout=cell)
    box = w.GridBox([image, overlay], layout=w.Layout(grid_template_areas='"picture"',
                                                      align_items="flex-start"))
    return image, overlay, box


def _knob_value(name, hyper):
    knob = OPTIMIZERS[name].knob
    return hyper["betas"][0] if knob == "beta1" else hyper[knob]


def _status_html(explorer):
    diverged = [name for name, run in explorer.runs.items() if run.diverged_at is not None]
    text = f"step {explorer.step_count}"
    if diverged:
        text += " &mdash; diverged: " + ", ".join(diverged)
    return f"<span style='font-family: monospace'>{text}</span>"
