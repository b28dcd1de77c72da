"""The optimizer explorer's two pictures: paths on a contour map, and loss per step.

Both are drawn with matplotlib ``Figure`` objects of their own (never pyplot's
global figures, so nothing leaks between widgets) on the Agg canvas.

Speed matters here: a Play frame must redraw in about 0.1 s.  Drawing filled
contours is by far the slowest part of the picture, and it never changes while
the optimizers move; encoding a PNG costs ~10 ms and drawing long paths with Agg
about as much.  So each live picture is two layers: a **background** PNG (the
contours and legend; the loss plot's axes, whose limits move in coarse steps)
rendered only when it changes, and an **overlay** of the moving lines written as
SVG text in the background's pixel coordinates (matplotlib's ``transData`` maps
data to pixels), which the browser draws on top.  A frame sends only the overlay.
The lines are kept as matplotlib ``Line2D`` objects (``lines``, ``heads``): their
data is what the overlay draws, and tests read it.

``draw_contours`` / ``draw_paths`` / ``draw_losses`` are also used to draw the
static SVG picture, so the live view and the saved picture show the same thing.
"""
import io

import numpy as np

# one fixed colour per optimizer, so a name keeps its colour in every picture
COLOURS = {"SGD": "#1f77b4", "Momentum": "#ff7f0e", "Nesterov": "#2ca02c", "RMSprop": "#d62728",
           "Adagrad": "#9467bd", "Adam": "#8c564b", "AdamW": "#e377c2"}
OTHER_COLOUR = "#7f7f7f"


def colour(name):
    return COLOURS.get(name, OTHER_COLOUR)


def contour_levels(values, count=24):
    """Contour levels spaced evenly on a log scale above the lowest value.

    Loss surfaces span many orders of magnitude (Rosenbrock: 0 at the minimum,
    thousands at the corners); evenly spaced levels would put every line on the
    walls and none in the valley where the optimizers are.
    """
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        raise ValueError("the surface is not finite anywhere in its window (every value is "
                         "inf or nan): check the function, or pass a window where it is defined")
    low, high = float(finite.min()), float(finite.max())
    span = high - low
    if span <= 0:
        return np.array([low - 1.0, low, low + 1.0])
    return low + np.concatenate([[0.0], np.geomspace(span * 1e-4, span, count)])


def draw_contours(ax, grid, surface):
    """Filled contours of a ``ContourGrid``, the known minima (x) and the start (o).

    Returns the marker lines, for the legend.
    """
    from matplotlib.colors import LogNorm

    xs, ys, values, levels = grid.xs, grid.ys, grid.values, grid.levels
    # > 0 for the log colours; points where the loss is not finite are left blank
    shifted = np.ma.masked_invalid(np.clip(values - levels[0], levels[1] - levels[0], None))
    ax.contourf(xs, ys, shifted, levels=levels[1:] - levels[0], cmap="YlGnBu_r",
                norm=LogNorm(), alpha=0.55, extend="both")
    ax.contour(xs, ys, shifted, levels=levels[1:] - levels[0], colors="#555555",
               linewidths=0.4, alpha=0.6)
    markers = ax.plot([surface.start[0]], [surface.start[1]], "o", color="white",
                      markeredgecolor="black", markersize=7, label="start")
    if surface.minima:
        minima = np.array(surface.minima)
        markers += ax.plot(minima[:, 0], minima[:, 1], "x", color="black", markersize=9, mew=2,
                           label="minimum" if len(minima) == 1 else "minima")
    x_min, x_max, y_min, y_max = surface.window
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(y_min, y_max)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(surface.label, fontsize=10)
    return markers


def path_legend(ax, handles):
    """The legend under the contour axes (inside, it would hide part of the surface)."""
    return ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3,
                     fontsize=8, frameon=False)


def legend_label(name, run):
    return name if run.diverged_at is None else f"{name} (diverged at step {run.diverged_at})"


def draw_paths(ax, runs, markers):
    """Each run's path as a line with a dot at its current point; a legend names them."""
    handles = list(markers)
    for name, run in runs.items():
        path = run.positions
        handles += ax.plot(path[:, 0], path[:, 1], "-", color=colour(name), linewidth=1.6,
                           label=legend_label(name, run))
        ax.plot(path[-1:, 0], path[-1:, 1], "o", color=colour(name), markersize=5)
    path_legend(ax, handles)


def loss_axis(surface):
    """How the loss axis reads: the gap to the known minimum on a log scale, or the loss."""
    if surface.min_value is None:
        return "loss (symmetric log scale)", lambda losses: losses
    return (f"loss - minimum ({surface.min_value:g}), log scale",
            lambda losses: np.where(losses - surface.min_value > 0,
                                    losses - surface.min_value, np.nan))


def draw_losses(ax, runs, surface, last_step):
    """The loss of every run at every step."""
    label, transform = loss_axis(surface)
    for name, run in runs.items():
        ax.plot(np.arange(len(run.losses)), transform(run.losses), color=colour(name),
                linewidth=1.4, label=legend_label(name, run))
    _finish_loss_axes(ax, label, surface, last_step)
    _rescale(ax, [transform(run.losses) for run in runs.values()], last_step)


def _finish_loss_axes(ax, label, surface, last_step):
    from matplotlib.ticker import NullLocator

    if surface.min_value is None:
        ax.set_yscale("symlog", linthresh=1e-3)
    else:
        ax.set_yscale("log")
    ax.yaxis.set_minor_locator(NullLocator())  # minor log ticks: slow to lay out, little use
    ax.set_xlim(0, max(last_step, 1))
    ax.set_xlabel("step")
    ax.set_ylabel(label, fontsize=9)
    ax.set_title("loss per step", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)


def figure_png(figure, canvas=None):
    """The figure's current Agg pixels as PNG bytes (no re-render; fast, light compression)."""
    from PIL import Image

    canvas = canvas or figure.canvas
    width, height = canvas.get_width_height(physical=True)
    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    image = image.convert("RGB")  # the background is opaque: alpha would only add bytes
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def line_overlay(figure, ax, artists, clip_id):
    """SVG text of ``artists`` (Line2D: a line, or ``"o"`` markers) at the pixels where Agg
    would draw them in ``figure``, clipped to ``ax``: the same size as the figure's PNG, so
    the browser can lay it exactly over that picture."""
    width, height = figure.canvas.get_width_height()
    px_per_pt = figure.dpi / 72
    x0, y0, x1, y1 = ax.bbox.extents        # display pixels, origin at the bottom left
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" style="display:block">',
             f'<clipPath id="{clip_id}"><rect x="{x0:.1f}" y="{height - y1:.1f}" '
             f'width="{x1 - x0:.1f}" height="{y1 - y0:.1f}"/></clipPath>',
             f'<g clip-path="url(#{clip_id})" fill="none">']
    for artist in artists:
        xy = np.asarray(artist.get_xydata(), dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            pixels = ax.transData.transform(xy) if len(xy) else np.zeros((0, 2))
        pixels = pixels[np.isfinite(pixels).all(axis=1)]   # log axes: values <= 0 drop out
        pixels[:, 1] = height - pixels[:, 1]                # SVG's y axis points down
        colour_ = artist.get_color()
        if artist.get_marker() == "o":
            radius = artist.get_markersize() * px_per_pt / 2
            parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="{colour_}"/>'
                      for x, y in pixels]
        elif len(pixels) > 1:
            points = " ".join(f"{x:.1f},{y:.1f}" for x, y in pixels)
            parts.append(f'<polyline points="{points}" stroke="{colour_}" '
                         f'stroke-width="{artist.get_linewidth() * px_per_pt:.2f}" '
                         f'stroke-linejoin="round"/>')
    parts.append("</g></svg>")
    return "".join(parts)


class ContourPlot:
    """The live contour picture: contours drawn once per surface, paths as an SVG overlay.

    ``lines[name]`` / ``heads[name]`` are the matplotlib lines of each path and
    its current point; their data is what ``update`` last set (tests read it).
    The legend belongs to the background: it is re-rendered only when its
    labels change (a run selected, hidden or diverged).
    """

    def __init__(self, figsize=(5.2, 5.0), dpi=80):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self.ax = self.figure.add_subplot()
        # fixed margins, with room for the legend below the axes
        self.figure.subplots_adjust(left=0.12, right=0.97, bottom=0.26, top=0.94)
        self.markers = []
        self.lines = {}
        self.heads = {}
        self.legend = None
        self.legend_labels = None
        self.surface_key = None
        self.background = None  # PNG bytes of the contours and legend, once rendered
        self.full_draws = 0  # how often the background was rendered (tests check the caching)

    def show_surface(self, grid, surface):
        """Draw the contours of a new surface (the only slow call); paths are cleared."""
        self.ax.clear()
        self.markers = draw_contours(self.ax, grid, surface)
        self.lines, self.heads, self.legend, self.legend_labels = {}, {}, None, None
        self.surface_key = surface.key
        self.background = None

    def update(self, runs):
        """Set each run's path as line data; lines of runs no longer shown are removed."""
        for name in list(self.lines):
            if name not in runs:
                self.lines.pop(name).remove()
                self.heads.pop(name).remove()
        for name, run in runs.items():
            if name not in self.lines:
                (self.lines[name],) = self.ax.plot([], [], "-", color=colour(name), linewidth=1.6,
                                                   animated=True)
                (self.heads[name],) = self.ax.plot([], [], "o", color=colour(name), markersize=5,
                                                  animated=True)
            path = run.positions
            self.lines[name].set_data(path[:, 0], path[:, 1])
            self.heads[name].set_data(path[-1:, 0], path[-1:, 1])
        labels = tuple(legend_label(name, run) for name, run in runs.items())
        if labels != self.legend_labels:
            if self.legend is not None:
                self.legend.remove()
            for name, label in zip(runs, labels):
                self.lines[name].set_label(label)
            self.legend = path_legend(self.ax, self.markers + [self.lines[n] for n in runs])
            self.legend_labels = labels
            self.background = None

    def png(self):
        """PNG bytes of the background: contours, markers, legend (the same bytes until
        the surface or the legend changes)."""
        if self.background is None:
            self.canvas.draw()  # animated artists (the paths) are left out of a full draw
            self.background = figure_png(self.figure, self.canvas)
            self.full_draws += 1
        return self.background

    def overlay(self):
        """SVG of the paths and their current points, to lay over ``png()``."""
        self.png()  # the pixel mapping is the background's
        return line_overlay(self.figure, self.ax, [*self.lines.values(), *self.heads.values()],
                            f"paths{id(self)}")


class LossPlot:
    """The live loss-per-step picture: one line per run.

    Drawing the axes (ticks, log-scale labels) is most of a render, so the limits move
    in coarse steps (``_rescale``: the step axis to the next of 1, 1.5, 2, 3, 4, 5, 6, 8
    x 10^k, a log axis to whole decades) and stay put for many frames.  The axes are
    the background PNG, re-rendered only when the limits move (``full_draws`` counts
    them); the lines are the SVG overlay, as in ``ContourPlot``.
    """

    def __init__(self, figsize=(4.4, 5.0), dpi=80):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self.ax = self.figure.add_subplot()
        # fixed margins: tight_layout on every frame would cost more than the drawing
        self.figure.subplots_adjust(left=0.2, right=0.96, bottom=0.26, top=0.94)
        self.lines = {}
        self.surface_key = None
        self.background = None   # PNG bytes of the axes, and the limits they were drawn with
        self.background_limits = None
        self.full_draws = 0

    def update(self, runs, surface, last_step):
        """Set each run's losses as line data and rescale the axes."""
        label, transform = loss_axis(surface)
        if surface.key != self.surface_key or list(runs) != list(self.lines):
            self.ax.clear()
            self.lines = {name: self.ax.plot([], [], color=colour(name), linewidth=1.4,
                                             animated=True)[0]
                          for name in runs}
            _finish_loss_axes(self.ax, label, surface, last_step)
            self.surface_key = surface.key
            self.background = None
        for name, run in runs.items():
            self.lines[name].set_data(np.arange(len(run.losses)), transform(run.losses))
        _rescale(self.ax, [transform(run.losses) for run in runs.values()], last_step)

    def png(self):
        """PNG bytes of the axes (the same bytes while the limits hold)."""
        limits = (self.ax.get_xlim(), self.ax.get_ylim())
        if self.background is None or limits != self.background_limits:
            self.canvas.draw()  # the axes; the lines are animated, left out of a full draw
            self.background = figure_png(self.figure, self.canvas)
            self.background_limits = limits
            self.full_draws += 1
        return self.background

    def overlay(self):
        """SVG of the loss lines, to lay over ``png()``."""
        self.png()
        return line_overlay(self.figure, self.ax, list(self.lines.values()), f"losses{id(self)}")


def coarse_step_limit(last_step):
    """The step axis's right end: at least 10, then the first of 1, 1.5, 2, 3, 4, 5, 6, 8
    x 10^k at or past ``last_step``, so the axis is redrawn 8 times per decade of steps,
    not on every frame (nor on each of the first ten).

    >>> [coarse_step_limit(n) for n in (1, 7, 15, 16, 101)]
    [10.0, 10.0, 15.0, 20.0, 150.0]
    """
    last_step = max(last_step, 10)
    power = 10.0 ** np.floor(np.log10(last_step))
    for mantissa in (1, 1.5, 2, 3, 4, 5, 6, 8, 10):
        if mantissa * power >= last_step - 1e-9:
            return float(mantissa * power)


def _rescale(ax, series, last_step):
    """Limits that hold the plottable values (a log axis needs positive ones).

    A run that is blowing up would squash every other line into the bottom of
    the plot, so the top is capped at 10 000 times the highest starting value:
    the diverging line leaves the plot, the others stay readable.
    """
    series = [np.asarray(s, dtype=float) for s in series]
    values = np.concatenate(series or [np.zeros(0)])
    values = values[np.isfinite(values)]
    if ax.get_yscale() == "log":
        values = values[values > 0]
    if len(values):
        low, high = values.min(), values.max()
        starts = np.abs([s[0] for s in series if len(s) and np.isfinite(s[0])])
        cap = 1e4 * starts.max() if len(starts) and starts.max() > 0 else None
        if cap:
            high = min(high, cap)
        if ax.get_yscale() == "log":
            # whole decades, so the axis stays put while the losses fall within one
            low = 10.0 ** np.floor(np.log10(low / 2))
            high = min(10.0 ** np.ceil(np.log10(high * 2)), 2 * cap) if cap else \
                10.0 ** np.ceil(np.log10(high * 2))
        else:
            pad = 0.05 * (high - low) or 1.0
            low, high = _coarse(low - pad, down=True), _coarse(high + pad, down=False)
        ax.set_ylim(low, high)
    ax.set_xlim(0, coarse_step_limit(last_step))


def _coarse(value, down):
    """``value`` moved outward to one significant digit (-0.37 -> -0.4, 123 -> 200 going up)."""
    if value == 0 or not np.isfinite(value):
        return value
    power = 10.0 ** np.floor(np.log10(abs(value)))
    rounded = (np.floor if down else np.ceil)(value / power) * power
    return float(rounded)
