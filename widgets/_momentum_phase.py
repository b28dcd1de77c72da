"""Where SGD with momentum converges, oscillates or diverges on a quadratic bowl.

For the bowl ``0.5 * (x**2 + condition_number * y**2)`` the answer depends only
on the learning rate ``lr`` and the momentum ``beta``.  Theory (heavy-ball
momentum, as in Distill's "Why Momentum Really Works"): along an axis of
curvature ``h`` the error ``e`` follows

    e[t+1] = (1 + beta - lr * h) * e[t] - beta * e[t-1]

which converges exactly when ``0 <= beta < 1`` and ``0 < lr * h < 2 * (1 + beta)``,
and swings to and fro (the recurrence has complex or negative roots) unless
``1 + beta - lr * h >= 2 * sqrt(beta)``.

This module does not use that theory to draw the picture: it *runs* the real
``learntorch.optim.SGD`` at every grid point and classifies what the parameter
did.  The theory is drawn on top as a dashed line, so the learner sees the
experiment agree with the formula.

Example::

    >>> diagram = momentum_phase_diagram(condition_number=10, lrs=[0.05, 0.5],
    ...                                  momentums=[0.0, 0.9], steps=100)
    >>> diagram.names()
    [['converges', 'diverges'], ['oscillates', 'diverges']]
"""
import warnings

import numpy as np

import learntorch

from ._base import figure_to_svg

CONVERGES, OSCILLATES, DIVERGES = 0, 1, 2
CLASS_NAMES = ("converges", "oscillates", "diverges")
CLASS_COLOURS = ("#4c9f70", "#f2b134", "#d1495b")


class MomentumPhaseDiagram:
    """The result of ``momentum_phase_diagram``: a class for every (momentum, lr) grid point.

    ``classes[i, j]`` is ``CONVERGES`` (0), ``OSCILLATES`` (1) or ``DIVERGES`` (2)
    for ``momentums[i]`` and ``lrs[j]``; ``final_errors[i, j]`` is the distance to
    the minimum after the last step (inf once a run overflowed).  Displayed in
    Jupyter, it draws itself as an image with a legend.

    Example::

        >>> d = momentum_phase_diagram(1.0, lrs=[0.5], momentums=[0.0], steps=50)
        >>> d.classes.tolist(), d.final_errors.shape
        ([[0]], (1, 1))
    """

    def __init__(self, condition_number, lrs, momentums, steps, classes, final_errors):
        self.condition_number = condition_number
        self.lrs = lrs
        self.momentums = momentums
        self.steps = steps
        self.classes = classes
        self.final_errors = final_errors

    def names(self):
        """The classes as words, a list of rows (one per momentum)."""
        return [[CLASS_NAMES[c] for c in row] for row in self.classes]

    def counts(self):
        """How many grid points fell in each class: ``{"converges": n, ...}``."""
        return {name: int((self.classes == c).sum()) for c, name in enumerate(CLASS_NAMES)}

    def __repr__(self):
        counts = ", ".join(f"{n} {name}" for name, n in self.counts().items())
        return (f"MomentumPhaseDiagram(condition_number={self.condition_number:g}, "
                f"{len(self.momentums)} momentums x {len(self.lrs)} lrs, {self.steps} steps: "
                f"{counts})")

    def draw(self, ax, marker=None):
        """Draw the classes on matplotlib axes ``ax``, with the theoretical boundary dashed.

        ``marker`` = ``(lr, momentum)`` adds a point (the explorer's Momentum run).
        """
        from matplotlib.colors import BoundaryNorm, ListedColormap
        from matplotlib.patches import Patch

        ax.pcolormesh(_edges(self.lrs, log=True), _edges(self.momentums, log=False),
                      self.classes, cmap=ListedColormap(CLASS_COLOURS),
                      norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5], 3), shading="flat")
        ax.set_xscale("log")
        ax.set_xlim(*_edges(self.lrs, log=True)[[0, -1]])
        ax.set_ylim(*_edges(self.momentums, log=False)[[0, -1]])
        # theory along the steep axis (curvature = condition_number), the stricter one:
        # divergence past lr = 2(1 + beta) / kappa, swinging past lr = (1 - sqrt(beta))^2 / kappa
        beta = np.linspace(max(self.momentums.min(), 0.0), min(self.momentums.max(), 1.0), 200)
        ax.plot(2 * (1 + beta) / self.condition_number, beta, "k--", linewidth=1.2,
                label="theory: diverges past lr = 2(1 + momentum) / condition number")
        ax.plot((1 - np.sqrt(beta)) ** 2 / self.condition_number, beta, "k:", linewidth=1.2,
                label="theory: swings past lr = (1 - \N{SQUARE ROOT}momentum)\N{SUPERSCRIPT TWO}"
                      " / condition number")
        if marker is not None:
            ax.plot([marker[0]], [marker[1]], marker="*", markersize=14, color="white",
                    markeredgecolor="black")
        ax.set_xlabel("learning rate (log scale)")
        ax.set_ylabel("momentum")
        ax.set_title(f"SGD with momentum on a quadratic, condition number "
                     f"{self.condition_number:g} ({self.steps} steps)", fontsize=10)
        handles = [Patch(color=colour, label=name)
                   for colour, name in zip(CLASS_COLOURS, CLASS_NAMES)]
        handles += ax.lines[:2]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
                  fontsize=8, frameon=False)

    def figure(self, marker=None):
        """A new matplotlib ``Figure`` of the diagram (not registered with pyplot)."""
        from matplotlib.figure import Figure

        figure = Figure(figsize=(6.4, 5.0))
        self.draw(figure.add_subplot(), marker=marker)
        figure.tight_layout()
        return figure

    def static_svg(self):
        """The diagram as SVG text (deterministic)."""
        return figure_to_svg(self.figure())

    def _repr_svg_(self):
        return self.static_svg()


def momentum_phase_diagram(condition_number=10.0, lrs=None, momentums=None, steps=200):
    """Run ``SGD(lr, momentum)`` on the quadratic for every grid point and classify the runs.

    Every run starts at (1, 1) and takes ``steps`` steps of a real
    ``learntorch.optim.SGD``; all the runs advance together (see the comment in
    the code for how one optimizer runs the whole grid).  Then a run

    * **diverges** -- it overflowed, or its error is still growing and bigger
      than at the start (the largest error in the last quarter of the run is
      bigger than in the quarter before, and bigger than the first error);
    * **oscillates** -- it converges, but the error along some axis changes sign
      again and again (at least twice: the point overshoots the minimum back
      and forth);
    * **converges** -- it converges without swinging back and forth.

    ``lrs`` defaults to 60 rates spaced evenly on a log scale from 0.01/kappa to
    10/kappa, ``momentums`` to 50 values from 0 to 0.98.

    Example::

        >>> momentum_phase_diagram(4.0, lrs=[0.1, 1.5], momentums=[0.5], steps=100).names()
        [['oscillates', 'diverges']]
    """
    kappa = float(condition_number)
    if not kappa >= 1.0:
        raise ValueError(f"condition_number must be >= 1, but got {condition_number}")
    lrs = np.geomspace(0.01 / kappa, 10.0 / kappa, 60) if lrs is None else \
        np.asarray(lrs, dtype=float).reshape(-1)
    momentums = np.linspace(0.0, 0.98, 50) if momentums is None else \
        np.asarray(momentums, dtype=float).reshape(-1)
    if steps < 8:
        raise ValueError(f"steps must be at least 8 to tell a growing error from a shrinking "
                         f"one, but got {steps}")

    # Learning rate and curvature only ever appear multiplied: SGD's step is
    # lr * (momentum-averaged h * e).  So a run at learning rate lr on curvature h is
    # the same run as one at learning rate 1 on curvature lr * h.  That lets one real
    # SGD run the whole grid at once: one parameter group per momentum, whose point
    # holds one (x, y) per learning rate, on a bowl whose curvatures are scaled by
    # that learning rate.  (A spec test checks a cell against a plain SGD(lr, momentum).)
    rows = [learntorch.ones((len(lrs), 2), dtype=learntorch.float64, requires_grad=True)
            for _ in momentums]
    optimizer = learntorch.optim.SGD(
        [{"params": [row], "momentum": float(beta)} for row, beta in zip(rows, momentums)], lr=1.0)
    curvature = learntorch.tensor(lrs[:, None] * np.array([1.0, kappa]))  # (lrs, 2)

    # errors[t, i, j] = the point of momentum i and learning rate j after t steps
    errors = np.empty((steps + 1, len(momentums), len(lrs), 2))  # the minimum is at 0
    errors[0] = 1.0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow of diverging runs
        for t in range(1, steps + 1):
            optimizer.zero_grad()
            points = learntorch.stack(rows)  # (momentums, lrs, 2)
            (0.5 * (curvature * points * points)).sum().backward()
            optimizer.step()
            errors[t] = np.stack([row.detach().numpy() for row in rows])
        final = np.sqrt((errors[-1] ** 2).sum(axis=-1))

    classes = classify_runs(errors.reshape(steps + 1, -1, 2)).reshape(len(momentums), len(lrs))
    final[~np.isfinite(final)] = np.inf
    return MomentumPhaseDiagram(kappa, lrs, momentums, steps, classes, final)


def classify_runs(errors):
    """Classify runs from their errors, an array ``(steps + 1, runs, axes)``; one class per run."""
    steps = errors.shape[0] - 1
    size = np.abs(errors).max(axis=-1)  # (steps + 1, runs)
    with np.errstate(invalid="ignore"):
        earlier = size[steps // 2: 3 * steps // 4].max(axis=0)
        later = size[3 * steps // 4:].max(axis=0)
        finite = np.isfinite(errors).all(axis=(0, 2))
        # growing, and bigger than at the start: a converging run with momentum may swing
        # wider than its start for a while, but then it shrinks again
        diverges = ~finite | ((later > earlier) & (later > size[0]))
    # a sign change is a step where the error crosses zero; an error that lands exactly
    # on zero (it can: 0.5 - 0.5) keeps the sign it had, so + 0 - still counts as a crossing
    signs = np.sign(np.nan_to_num(errors))
    steps_index = np.arange(len(signs)).reshape(-1, *[1] * (signs.ndim - 1))
    last_nonzero = np.maximum.accumulate(np.where(signs != 0, steps_index, 0), axis=0)
    signs = np.take_along_axis(signs, last_nonzero, axis=0)
    crossings = ((signs[1:] * signs[:-1]) < 0).sum(axis=0).max(axis=-1)
    classes = np.where(crossings >= 2, OSCILLATES, CONVERGES)
    classes[diverges] = DIVERGES
    return classes


def _edges(centres, log):
    """Cell edges around sorted grid values (midpoints, in log space for a log axis)."""
    values = np.log(centres) if log else np.asarray(centres, dtype=float)
    if len(values) == 1:
        half = 0.5 if log else 0.05
        edges = np.array([values[0] - half, values[0] + half])
    else:
        middle = (values[1:] + values[:-1]) / 2
        edges = np.concatenate([[2 * values[0] - middle[0]], middle,
                                [2 * values[-1] - middle[-1]]])
    return np.exp(edges) if log else edges
