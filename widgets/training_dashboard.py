"""TrainingDashboard: live loss/accuracy curves, progress, ETA and gradient norms.

A callback for an ordinary training loop -- two calls, ``step`` after each batch
and ``epoch_end`` after each epoch::

    dash = TrainingDashboard(epochs=5, steps_per_epoch=len(loader), model=model, grad_norms=True)
    for epoch in range(5):
        for xb, yb in loader:
            opt.zero_grad()
            out = model(xb)
            loss = F.cross_entropy(out, yb)
            loss.backward()
            opt.step()
            accuracy = (out.argmax(1) == yb).float().mean().item()
            dash.step(loss=loss.item(), accuracy=accuracy, batch_size=len(xb))
        dash.epoch_end(val_loss=..., val_accuracy=...)
    dash.close()

In a Jupyter kernel it shows an ipywidgets view (progress bar, curves, one bar per
layer for the gradient norms); anywhere else -- a plain ``python train.py`` -- it
prints a text progress line instead (rewritten in place with ``\\r`` on a
terminal, one line per epoch in a log file).

Why it stays cheap: drawing is *throttled*.  ``step`` only appends numbers to
lists; the progress line is redrawn at most every ``redraw_every`` seconds of
wall time, and the curves at most that often and never more than ``PLOT_BUDGET``
of the time: a render that took 30 ms is not repeated within the next 0.3 s.
The curves are SVG text written here (``widgets._svg_chart``), a millisecond or
two even for thousands of steps, and the browser draws them; the same SVG is the
static picture an exported notebook keeps.  Time comes from ``clock``
(``time.perf_counter``); pass a fake clock to test ETA and throttling exactly.
In a notebook, the end of each cell also redraws what the throttle skipped, so a cell
that trains always leaves its final numbers on screen, and in the output's static
picture as well.
"""
import math
import sys
import time
from html import escape

import numpy as np

from ._base import Widget

PLOT_BUDGET = 0.1   # the curves may take at most this fraction of the wall time


def _cell_number():
    """The number of the notebook cell running now (None outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return getattr(shell, "execution_count", None)


def in_notebook():
    """True inside a Jupyter kernel with ipywidgets available (where a live view can show).

    >>> in_notebook()   # a plain Python process
    False
    """
    try:
        from IPython import get_ipython
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def smoothed(values, smoothing):
    """Exponential moving average with TensorBoard's bias correction (the first points are
    not dragged toward 0); ``smoothing`` 0 gives the values back.

    >>> smoothed([1.0, 1.0, 4.0], 0.5).round(3).tolist()
    [1.0, 1.0, 2.714]
    """
    out, average = np.empty(len(values)), 0.0
    for k, v in enumerate(values):
        average = smoothing * average + (1 - smoothing) * v
        out[k] = average / (1 - smoothing ** (k + 1)) if smoothing else v
    return out


def duration(seconds):
    """``m:ss`` or ``h:mm:ss``, like a progress bar shows it.

    >>> duration(75.4), duration(3725)
    ('1:15', '1:02:05')
    """
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def layer_grad_norms(model):
    """``{layer name: L2 norm of all its parameters' gradients}`` (one entry per module that owns
    parameters; a parameter without ``.grad`` counts as 0).

    >>> import learntorch as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    >>> model(torch.ones(4, 2)).sum().backward()
    >>> sorted(layer_grad_norms(model))
    ['0', '2']
    """
    squares = {}
    for name, p in model.named_parameters():
        layer = name.rsplit(".", 1)[0] if "." in name else name
        grad = 0.0
        if p.grad is not None:
            g = np.asarray(p.grad.detach().cpu().numpy(), dtype=np.float64).reshape(-1)
            grad = float(g @ g)
        squares[layer] = squares.get(layer, 0.0) + grad
    return {layer: math.sqrt(s) for layer, s in squares.items()}


class TrainingDashboard(Widget):
    """Live view of a training run: ``step(...)`` per batch, ``epoch_end(...)`` per epoch.

    Arguments: ``epochs`` and ``steps_per_epoch`` (for the progress bar and ETA;
    either may be None), ``model`` and ``grad_norms=True`` to record the gradient
    norm of every layer at each step (call ``step`` after ``backward``, before the
    next ``zero_grad``).  Keywords: ``mode`` ("auto": a widget in a Jupyter kernel,
    text elsewhere; "widget"; "text"), ``stream`` for the text (sys.stdout),
    ``clock`` (time.perf_counter), ``redraw_every`` (seconds, 0.2), ``smoothing``
    of the per-step curves (0.8), ``display`` (show the widget at once, True; a cell that
    also ends with the dashboard still shows it once).

    ``history`` holds everything logged, a dict of lists: per step ``loss``,
    ``accuracy``, ``batch_size``, ``epoch`` (and ``grad_norms``, one dict per step;
    and any extra keyword given to ``step``); per epoch ``epoch_loss`` and
    ``epoch_accuracy`` (the training means), ``val_loss``, ``val_accuracy``,
    ``epoch_step`` (the step count when the epoch ended; and any extra keyword
    given to ``epoch_end``).  Missing values are None.

    >>> import io
    >>> dash = TrainingDashboard(epochs=2, steps_per_epoch=3, mode="text", stream=io.StringIO())
    >>> for epoch in range(2):
    ...     for k in range(3):
    ...         dash.step(loss=1.0 / (1 + k + 3 * epoch), batch_size=32)
    ...     dash.epoch_end(val_loss=0.5)
    >>> dash
    TrainingDashboard(2/2 epochs done, step 6, loss 0.1667, val_loss 0.5000)
    >>> dash.history["epoch_step"]
    [3, 6]
    """

    STEP_KEYS = ("loss", "accuracy", "batch_size", "epoch")
    EPOCH_KEYS = ("epoch_loss", "epoch_accuracy", "val_loss", "val_accuracy", "epoch_step")

    def __init__(self, epochs=None, steps_per_epoch=None, model=None, grad_norms=False, *,
                 mode="auto", stream=None, clock=time.perf_counter, redraw_every=0.2,
                 smoothing=0.8, display=True):
        if mode not in ("auto", "widget", "text"):
            raise ValueError(f"mode must be 'auto', 'widget' or 'text', got {mode!r}")
        if grad_norms and model is None:
            raise ValueError("grad_norms=True needs the model: TrainingDashboard(..., model=model, "
                             "grad_norms=True)")
        self.epochs, self.steps_per_epoch = epochs, steps_per_epoch
        self.model, self.grad_norms = model, grad_norms
        self.mode = ("widget" if in_notebook() else "text") if mode == "auto" else mode
        self.stream = sys.stdout if stream is None else stream
        self.clock, self.redraw_every = clock, redraw_every
        self.set_smoothing(smoothing)
        self._handle = None
        self._shown_in_cell = None
        self.reset()
        self._shell = None
        if self.mode == "widget":
            self._catch_cell_ends()
            if display:
                from IPython.display import display as show
                # the bundle itself (raw), not the object: showing the object calls
                # _ipython_display_, which this cell's own display must get past
                self._handle = show(self._repr_mimebundle_(), raw=True, display_id=True)
                self._shown_in_cell = _cell_number()

    def _ipython_display_(self):
        """Show the dashboard -- unless it showed itself in this very cell: a cell that makes
        one and ends with ``dash`` shows one dashboard, not two (a later cell shows it again)."""
        if self._shown_in_cell is not None and self._shown_in_cell == _cell_number():
            return
        from IPython.display import display as show
        show(self._repr_mimebundle_(), raw=True)

    def _catch_cell_ends(self):
        """Redraw when a notebook cell finishes.  The throttle may have skipped the last
        steps of a cell that trains (they came too soon after a redraw), and no step follows
        to catch up until the next cell runs: IPython's post_run_cell event is that moment."""
        try:
            from IPython import get_ipython
        except ImportError:
            return
        self._shell = get_ipython()
        if self._shell is not None and hasattr(self._shell, "events"):
            self._shell.events.register("post_run_cell", self._on_cell_end)
        else:
            self._shell = None

    def _on_cell_end(self, result=None):
        if self._view is not None and self._plotted != self._logged:
            now = self.clock()
            self._update_progress(now)
            self._redraw_curves()
            if self._handle is not None:
                # the output's static picture too: a notebook saved now (an exported one,
                # one reopened without its kernel) shows the curves as far as they got
                self._handle.update(self._repr_mimebundle_(), raw=True)

    # ---- state --------------------------------------------------------------------

    def reset(self):
        """Forget everything logged and restart the clock."""
        self.history = {key: [] for key in self.STEP_KEYS + self.EPOCH_KEYS}
        if self.grad_norms:
            self.history["grad_norms"] = []
        self.steps = self.samples = self.epoch = self.step_in_epoch = 0
        self.redraws = self.plot_redraws = 0
        self.closed = False
        self._step_extras, self._epoch_extras = set(), set()
        self._start = self._last_draw = self._last_plot = self.clock()
        self._plot_cost = 0.0
        self._open_line = False   # a \r-updated line on a terminal that needs its newline
        self._logged = self._plotted = 0   # calls logged in all / when the curves were drawn

    def step(self, loss, accuracy=None, batch_size=None, **metrics):
        """Log one training step (numbers or one-element tensors); redraws when it is time."""
        h = self.history
        h["loss"].append(float(loss))
        h["accuracy"].append(None if accuracy is None else float(accuracy))
        h["batch_size"].append(batch_size)
        h["epoch"].append(self.epoch)
        self._log_extras(metrics, self._step_extras, self.steps)
        if self.grad_norms:
            h["grad_norms"].append(layer_grad_norms(self.model))
        self.steps += 1
        self._logged += 1
        self.step_in_epoch += 1
        self.samples += batch_size or 0
        now = self.clock()
        if now - self._last_draw >= self.redraw_every:
            self._draw(now)

    def _log_extras(self, metrics, known, count):
        """Extra named numbers: a new name gets None for the ``count`` earlier entries, a known
        name that is missing this time gets None, so every list stays aligned."""
        h = self.history
        for key in known - set(metrics):
            h[key].append(None)
        for key, value in metrics.items():
            if key not in known:
                if key in h:
                    raise ValueError(f"{key!r} is a name the dashboard logs itself; give your "
                                     f"metric another name")
                h[key] = [None] * count
                known.add(key)
            h[key].append(None if value is None else float(value))

    def epoch_end(self, val_loss=None, val_accuracy=None, **metrics):
        """Close an epoch: the training means of its steps, the validation numbers; always redraws."""
        h = self.history
        start = h["epoch_step"][-1] if h["epoch_step"] else 0
        h["epoch_loss"].append(self._epoch_mean("loss", start))
        h["epoch_accuracy"].append(self._epoch_mean("accuracy", start))
        h["val_loss"].append(None if val_loss is None else float(val_loss))
        h["val_accuracy"].append(None if val_accuracy is None else float(val_accuracy))
        h["epoch_step"].append(self.steps)
        self._log_extras(metrics, self._epoch_extras, len(h["epoch_step"]) - 1)
        self.epoch += 1
        self._logged += 1
        self.step_in_epoch = 0
        self._draw(self.clock(), epoch_line=True)

    def _epoch_mean(self, key, start):
        """The mean of ``key`` over this epoch's steps, weighted by batch size where given."""
        pairs = [(v, b or 1) for v, b in zip(self.history[key][start:], self.history["batch_size"][start:])
                 if v is not None]
        if not pairs:
            return None
        return sum(v * b for v, b in pairs) / sum(b for _, b in pairs)

    def set_smoothing(self, smoothing):
        """How much the per-step curve is smoothed: 0 (raw) up to, not including, 1."""
        if not 0 <= smoothing < 1:
            raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
        self.smoothing = float(smoothing)
        if self._view is not None:
            self._show_picture()

    def close(self):
        """Final redraw (and a final newline in text mode); leaves the finished picture behind."""
        if self.closed:
            return
        self._draw(self.clock(), final=True)
        self.closed = True
        if self._shell is not None:
            self._shell.events.unregister("post_run_cell", self._on_cell_end)
            self._shell = None
        if self._handle is not None:  # the output keeps the finished curves as its static picture
            self._handle.update(self._repr_mimebundle_(), raw=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- derived numbers ----------------------------------------------------------

    @property
    def total_steps(self):
        """epochs * steps_per_epoch, or None when either is unknown."""
        if self.epochs is None or self.steps_per_epoch is None:
            return None
        return self.epochs * self.steps_per_epoch

    @property
    def elapsed(self):
        return self.clock() - self._start

    def throughput(self, now=None):
        """Samples per second since the start (steps per second when no batch size was given)."""
        elapsed = (self.clock() if now is None else now) - self._start
        if elapsed <= 0 or not self.steps:
            return None
        return (self.samples or self.steps) / elapsed

    def eta(self, now=None):
        """Seconds left, from the average time per step so far; None when the total is unknown."""
        elapsed = (self.clock() if now is None else now) - self._start
        if self.total_steps is None or not self.steps:
            return None
        return max(self.total_steps - self.steps, 0) * elapsed / self.steps

    def _latest(self, key):
        values = [v for v in self.history[key] if v is not None]
        return values[-1] if values else None

    def progress_line(self, now=None, bar=True):
        """The text progress line: epoch, bar, step, metrics, throughput, ETA (``bar=False``:
        without the text bar, which the widget draws as a progress bar of its own)."""
        now = self.clock() if now is None else now
        parts = []
        if self.epochs:
            parts.append(f"epoch {min(self.epoch + (1 if self.step_in_epoch else 0), self.epochs)}"
                         f"/{self.epochs}")
        if self.steps_per_epoch:
            shown = self.step_in_epoch if self.step_in_epoch or not self.epoch else self.steps_per_epoch
            filled = int(20 * min(shown / self.steps_per_epoch, 1))
            text_bar = f"[{'#' * filled}{'.' * (20 - filled)}] " if bar else "step "
            parts.append(f"{text_bar}{shown}/{self.steps_per_epoch}")
        else:
            parts.append(f"step {self.steps}")
        for key, label, form in (("loss", "loss", "{:.4f}"), ("accuracy", "acc", "{:.3f}"),
                                 ("val_loss", "val_loss", "{:.4f}"), ("val_accuracy", "val_acc", "{:.3f}")):
            value = self._latest(key)
            if value is not None:
                parts.append(f"{label} {form.format(value)}")
        rate = self.throughput(now)
        if rate is not None:
            parts.append(f"{rate:.1f} {'samples' if self.samples else 'steps'}/s")
        eta = self.eta(now)
        if eta is not None:
            parts.append(f"ETA {duration(eta)}")
        return "  ".join(parts)

    def __repr__(self):
        loss = self._latest("loss")
        where = (f"{self.epoch}/{self.epochs} epochs done, step {self.steps}"
                 if self.epochs and self.epoch >= self.epochs else
                 f"epoch {self.epoch + 1}{'/' + str(self.epochs) if self.epochs else ''}, "
                 f"step {self.step_in_epoch}{'/' + str(self.steps_per_epoch) if self.steps_per_epoch else ''}")
        parts = [where]
        if loss is not None:
            parts.append(f"loss {loss:.4f}")
        val = self._latest("val_loss")
        if val is not None:
            parts.append(f"val_loss {val:.4f}")
        return f"TrainingDashboard({', '.join(parts)})"

    # ---- drawing ------------------------------------------------------------------

    def _draw(self, now, epoch_line=False, final=False):
        """One redraw: the text line, or the progress widgets and (when its budget allows, and
        always at the end) the curves.  An epoch end does not force the curves: with short
        epochs that would make the plot, not the model, the slow part of training."""
        self.redraws += 1
        self._last_draw = now
        if self.mode == "text":
            self._write_text(now, epoch_line, final)
            return
        if self._view is None:
            return
        self._update_progress(now)
        if final or now - self._last_plot >= max(self.redraw_every, self._plot_cost / PLOT_BUDGET):
            self._redraw_curves()

    def _redraw_curves(self):
        # measured from the start of one render to the start of the next, the renders
        # fill at most PLOT_BUDGET of the time
        began = self.clock()
        self._show_picture()
        self.plot_redraws += 1
        self._plotted = self._logged
        self._last_plot = began
        self._plot_cost = self.clock() - began

    def _write_text(self, now, epoch_line, final):
        """On a terminal: rewrite one line with \\r, keep a line per epoch.  Elsewhere (a log
        file, a test's StringIO): a line per epoch, and the last line at close."""
        line = self.progress_line(now)
        tty = getattr(self.stream, "isatty", lambda: False)()
        if tty:
            if final and not self._open_line and not self.step_in_epoch:
                return  # the last epoch's line is already complete
            self.stream.write("\r" + line + "\x1b[K")   # \x1b[K: clear what a longer line left
            self._open_line = True
            if epoch_line or final:
                self.stream.write("\n")
                self._open_line = False
        elif epoch_line or (final and self.step_in_epoch):
            self.stream.write(line + "\n")
        self.stream.flush()

    def _update_progress(self, now):
        self._bar.max = self.total_steps or max(self.steps, 1)
        self._bar.value = min(self.steps, self._bar.max)
        # one line that never breaks ("ETA" and its time stay together); where the output is
        # narrow, the whole line moves under the bar (the row wraps, the line does not)
        self._status.value = (f"<code style='white-space:nowrap'>"
                              f"{escape(self.progress_line(now, bar=False))}</code>")

    # the curves: SVG text written here (widgets._svg_chart), a millisecond or two per redraw

    def _curves(self):
        """Every plotted line as ``name -> (x, y)``: x in epochs (steps when the epoch length
        is unknown), steps or epochs without a value left out."""
        h = self.history
        scale = self.steps_per_epoch or 1
        x_step = np.arange(1, self.steps + 1) / scale
        x_epoch = np.asarray(h["epoch_step"], dtype=float) / scale
        curves = {}
        for metric in ("loss", "accuracy"):
            values = np.array([np.nan if v is None else v for v in h[metric]], dtype=float)
            known = ~np.isnan(values)
            curves[metric] = (x_step[known], values[known])
            curves[metric + "_smooth"] = (x_step[known], smoothed(values[known], self.smoothing))
            for key in ("epoch_" + metric, "val_" + metric):
                ys = np.array([np.nan if v is None else v for v in h[key]], dtype=float)
                curves[key] = (x_epoch[~np.isnan(ys)], ys[~np.isnan(ys)])
        return curves

    def _layer_labels(self):
        """``[(layer name, "name (Linear)"), ...]`` for the gradient bars, in the model's order."""
        kinds = {name: type(module).__name__ for name, module in self.model.named_modules()}
        return [(layer, f"{layer} ({kinds[layer]})" if layer in kinds else layer)
                for layer in layer_grad_norms(self.model)]

    def _render_svg(self):
        """The picture: loss and accuracy panels (and the gradient bars), as SVG text."""
        from ._svg_chart import C0, C1, C2, BarChart, Line, LineChart, svg_document

        curves = self._curves()
        xlabel = "epoch" if self.steps_per_epoch else "step"
        panels = []
        for metric in ("loss", "accuracy"):
            lines = [Line(metric, *curves[metric], C0, width=1, opacity=0.25, label="train (step)"),
                     Line(metric + "_smooth", *curves[metric + "_smooth"], C0, width=1.8,
                          label="train (smoothed)"),
                     Line("epoch_" + metric, *curves["epoch_" + metric], C1, marker="o",
                          label="train (epoch)"),
                     Line("val_" + metric, *curves["val_" + metric], C2, marker="s",
                          label="validation")]
            # the same four lines on both panels: one legend is enough
            panels.append(LineChart(metric, xlabel, lines, width=380, height=260,
                                    legend=metric == "loss"))
        if self.grad_norms:
            latest = self.history["grad_norms"][-1] if self.history["grad_norms"] else {}
            bars = [(label, latest.get(layer, 0.0)) for layer, label in self._layer_labels()]
            title = (f"gradient norm per layer (step {self.steps})" if latest
                     else "gradient norm per layer")
            panels.append(BarChart(title, "||grad||", bars, width=380, height=260))
        return svg_document(panels)

    def _show_picture(self):
        from ._svg_fit import fit_width

        self._plot.value = fit_width(self._render_svg())   # shrinks to a narrow output area

    def curve_data(self, name):
        """``(x, y)`` arrays of one plotted line, e.g. ``"loss"``, ``"loss_smooth"``, ``"val_accuracy"``."""
        x, y = self._curves()[name]
        return np.asarray(x), np.asarray(y)

    def static_svg(self):
        """The curves (and gradient bars) of everything logged so far."""
        return self._render_svg()

    def _build_view(self):
        import ipywidgets as w

        self._bar = w.IntProgress(value=0, min=0, max=1, description="progress",
                                  tooltip="steps done out of epochs x steps_per_epoch")
        self._status = w.HTML()
        self._plot = w.HTML(layout=w.Layout(width="100%"))
        self._smoothing = w.FloatSlider(value=self.smoothing, min=0.0, max=0.99, step=0.01,
                                        description="smoothing", continuous_update=False,
                                        tooltip="exponential smoothing of the per-step curves")
        self._smoothing.observe(lambda change: self.set_smoothing(change["new"]), names="value")
        self._update_progress(self.clock())
        self._show_picture()
        progress = w.HBox([self._bar, self._status],
                          layout=w.Layout(flex_flow="row wrap", align_items="center"))
        return w.VBox([progress, self._plot, self._smoothing])
