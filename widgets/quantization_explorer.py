"""QuantizationExplorer: a layer's weights, the int8 grid laid over them, and the error.

An int8 tensor stores codes ``q`` in ``[-128, 127]`` (qint8) or ``[0, 255]`` (quint8)
and means ``scale * (q - zero_point)``.  The codes are therefore a *grid* of 256
evenly spaced values, ``scale`` apart, with ``zero_point`` the code that stands for
0.0.  Quantizing a weight moves it to the nearest grid value (the rounding error,
at most ``scale / 2``) -- or, when it lies beyond the grid's ends, to the end
(the **clipping** error, which can be as large as the weight itself).

The widget draws a histogram of the values with the grid over it (the region
the grid cannot reach shaded red), and beside it each value's error
``dequantize(quantize(w)) - w``.  Sliders move ``scale`` and ``zero_point``: a
small scale makes a fine grid that clips the outliers, a large one reaches every
value but rounds coarsely.  ``fit()`` puts the grid where an observer would
(``learntorch.ao.quantization.MinMaxObserver``).  Every number comes from the
engine: ``learntorch.quantize_per_tensor`` and ``dequantize``.

    >>> import learntorch as torch
    >>> from widgets import QuantizationExplorer
    >>> weights = torch.tensor([-1.0, -0.5, 0.0, 0.26, 1.0, 3.0])
    >>> explorer = QuantizationExplorer(weights, scale=0.01, zero_point=0)
    >>> explorer.grid_range()
    (-1.28, 1.27)
    >>> explorer.clipped_count()          # 3.0 lies beyond the grid's top end
    1
    >>> round(explorer.max_error(), 4)    # clipped to 1.27
    1.73
    >>> explorer.fit()                    # min/max observer, symmetric: the grid reaches 3.0
    >>> explorer
    QuantizationExplorer(qint8, 6 values in [-1, 3], scale 0.023529, zero_point 0, grid [-3.0118, 2.9882], clipped 0, max |error| 0.011765, mean |error| 0.0071)
"""
import math
from html import escape

import numpy as np

import learntorch

from ._base import Widget
from ._svg_chart import C0, C3, FONT, HistogramPanel, LineChart, Line, _text, nice_ticks, \
    svg_document, tick_text

CODE_RANGES = {"qint8": (-128, 127), "quint8": (0, 255)}
MIN_GRID_SPACING = 3.0  # pixels: closer grid lines are thinned to every k-th


class QuantizationExplorer(Widget):
    """A tensor's values quantized with a chosen scale and zero point.

    * ``values`` -- the float values (a numpy copy of the tensor, flattened);
    * ``dtype`` -- ``"qint8"`` or ``"quint8"``; ``scale``, ``zero_point`` -- the grid;
    * ``set(scale=..., zero_point=..., dtype=...)`` -- move the grid;
    * ``fit(symmetric=...)`` -- the scale and zero point a min/max observer chooses;
    * ``quantized()`` -- the engine's quantized tensor; ``errors()`` the error per value;
    * ``grid_range()``, ``clipped_count()``, ``max_error()``, ``mean_error()``.

    >>> import learntorch as torch
    >>> explorer = QuantizationExplorer(torch.tensor([0.0, 0.1, 0.2]), scale=0.1, dtype="quint8")
    >>> explorer.quantized().int_repr().tolist()
    [0, 1, 2]
    >>> explorer.set(zero_point=10)
    >>> explorer.quantized().int_repr().tolist()
    [10, 11, 12]
    """

    def __init__(self, tensor, scale=None, zero_point=0, dtype="qint8", title="weights"):
        if isinstance(tensor, learntorch.Tensor):
            tensor = tensor.detach().float()
        self.tensor = learntorch.as_tensor(tensor, dtype=learntorch.float32).reshape(-1)
        self.values = self.tensor.numpy().copy()
        if self.values.size == 0:
            raise ValueError("QuantizationExplorer needs at least one value to quantize")
        self.title = title
        self.dtype = self._checked_dtype(dtype)
        self.zero_point = 0
        self.scale = 1.0
        if scale is None:
            self.fit()
            if zero_point != 0:
                self.set(zero_point=zero_point)
        else:
            self.set(scale=scale, zero_point=zero_point)

    # ---- state --------------------------------------------------------------------

    @staticmethod
    def _checked_dtype(dtype):
        name = getattr(dtype, "name", dtype)
        if name not in CODE_RANGES:
            raise ValueError(f"dtype must be 'qint8' or 'quint8' (or learntorch.qint8 / "
                             f"learntorch.quint8), got {dtype!r}")
        return name

    def set(self, scale=None, zero_point=None, dtype=None):
        """Move the grid; a zero point outside the dtype's codes is refused, as the engine does."""
        if dtype is not None:
            self.dtype = self._checked_dtype(dtype)
            low, high = CODE_RANGES[self.dtype]
            if zero_point is None and not low <= self.zero_point <= high:
                zero_point = min(max(self.zero_point, low), high)  # follow the new code range
        if scale is not None:
            scale = float(scale)
            if not (math.isfinite(scale) and scale > 0):
                raise ValueError(f"scale must be a positive number, got {scale!r}")
            self.scale = scale
        if zero_point is not None:
            low, high = CODE_RANGES[self.dtype]
            if not low <= int(zero_point) <= high:
                raise ValueError(f"zero_point {zero_point} is outside the {self.dtype} codes "
                                 f"[{low}, {high}]")
            self.zero_point = int(zero_point)
        self._quantized = None
        self._refresh()

    def fit(self, symmetric=None):
        """The scale and zero point ``MinMaxObserver`` computes for these values
        (symmetric by default for qint8, as torch's weight observer; affine for quint8)."""
        from learntorch.ao.quantization import MinMaxObserver
        if symmetric is None:
            symmetric = self.dtype == "qint8"
        scheme = learntorch.per_tensor_symmetric if symmetric else learntorch.per_tensor_affine
        observer = MinMaxObserver(dtype=getattr(learntorch, self.dtype), qscheme=scheme)
        observer(self.tensor)
        scale, zero_point = observer.calculate_qparams()
        self.set(scale=scale.item(), zero_point=zero_point.item())

    def quantized(self):
        """The engine's quantized tensor (``learntorch.quantize_per_tensor``)."""
        if self._quantized is None:
            self._quantized = learntorch.quantize_per_tensor(
                self.tensor, self.scale, self.zero_point, getattr(learntorch, self.dtype))
        return self._quantized

    def dequantized(self):
        return self.quantized().dequantize().numpy()

    def errors(self):
        """``dequantize(quantize(w)) - w`` for every value."""
        return self.dequantized() - self.values

    def grid_range(self):
        """The smallest and largest value the grid can represent."""
        low, high = CODE_RANGES[self.dtype]
        return (round(self.scale * (low - self.zero_point), 12),
                round(self.scale * (high - self.zero_point), 12))

    def clipped_count(self):
        """How many values were clipped: rounding alone moves a value by at most half a step,
        so an error beyond that (in float32's precision) means it lay beyond the grid's ends."""
        slack = self.scale / 2 * (1 + 1e-5) + 1e-7 * float(np.abs(self.values).max())
        return int(np.count_nonzero(np.abs(self.errors()) > slack))

    def max_error(self):
        return float(np.abs(self.errors()).max())

    def mean_error(self):
        return float(np.abs(self.errors()).mean())

    def summary(self):
        low, high = self.grid_range()
        return {"dtype": self.dtype, "scale": self.scale, "zero_point": self.zero_point,
                "grid": (low, high), "clipped": self.clipped_count(),
                "max_error": self.max_error(), "mean_error": self.mean_error()}

    def __repr__(self):
        low, high = self.grid_range()
        return (f"QuantizationExplorer({self.dtype}, {self.values.size} values in "
                f"[{self.values.min():.5g}, {self.values.max():.5g}], scale {self.scale:.5g}, "
                f"zero_point {self.zero_point}, grid [{low:.5g}, {high:.5g}], clipped "
                f"{self.clipped_count()}, max |error| {self.max_error():.5g}, mean |error| "
                f"{self.mean_error():.2g})")

    # ---- picture ------------------------------------------------------------------

    def x_limits(self):
        """The histogram's x range: every value, and the grid's ends when they are near."""
        low, high = float(self.values.min()), float(self.values.max())
        g_low, g_high = self.grid_range()
        span = max(high - low, 1e-12)
        # show the grid's ends unless they lie far beyond the data (then the data would
        # shrink to a sliver): at most one data width beyond on either side
        low, high = min(low, max(g_low, low - span)), max(high, min(g_high, high + span))
        margin = (high - low) * 0.04 or 0.5
        return low - margin, high + margin

    def histogram(self, bins=60):
        """(counts, bin edges) of the values over ``x_limits()``."""
        return np.histogram(self.values, bins=bins, range=self.x_limits())

    def grid_lines(self, width_px):
        """(grid values drawn, k): every k-th grid value inside the x range, k chosen so the
        lines are at least ``MIN_GRID_SPACING`` pixels apart on a plot ``width_px`` wide."""
        x0, x1 = self.x_limits()
        spacing = self.scale * width_px / (x1 - x0)
        k = max(1, math.ceil(MIN_GRID_SPACING / spacing))
        low, high = CODE_RANGES[self.dtype]
        first = max(low, math.ceil(x0 / self.scale + self.zero_point))
        last = min(high, math.floor(x1 / self.scale + self.zero_point))
        codes = [c for c in range(first, last + 1) if (c - self.zero_point) % k == 0]
        return [self.scale * (c - self.zero_point) for c in codes], k

    def static_svg(self):
        return svg_document([_HistogramPanel(self), self._error_panel()])

    def _error_panel(self):
        order = np.argsort(self.values, kind="stable")
        x, y = self.values[order], self.errors()[order]
        bound = self.scale / 2
        lines = [Line("error", x, y, C0, width=1.2, marker=None, label="error per value"),
                 Line("half-step", [x[0], x[-1]], [bound, bound], C3, width=1, opacity=0.6,
                      label="± scale / 2"),
                 Line("minus-half-step", [x[0], x[-1]], [-bound, -bound], C3, width=1,
                      opacity=0.6)]
        biggest = max(float(np.abs(y).max()), bound) * 1.15
        return LineChart("error: dequantize(quantize(w)) − w", "value w", lines, width=420,
                         height=260, legend=True, ylim=(-biggest, biggest))

    # ---- live view ----------------------------------------------------------------

    _picture = None
    _updating = False

    def _build_view(self):
        import ipywidgets as w

        self._picture = w.HTML()
        self._text = w.HTML()
        self._dtype_control = w.ToggleButtons(options=list(CODE_RANGES), value=self.dtype,
                                              description="dtype")
        self._scale_control = w.FloatLogSlider(value=self.scale, base=10, min=-5, max=1,
                                               step=0.02, description="scale", readout_format=".3g",
                                               continuous_update=True)
        self._zero_control = w.IntSlider(value=self.zero_point, description="zero_point",
                                         continuous_update=True)
        self._fit_control = w.Button(description="fit min/max",
                                     tooltip="the scale and zero point MinMaxObserver chooses")
        self._dtype_control.observe(lambda c: self._from_control(dtype=c["new"]), names="value")
        self._scale_control.observe(lambda c: self._from_control(scale=c["new"]), names="value")
        self._zero_control.observe(lambda c: self._from_control(zero_point=c["new"]),
                                   names="value")
        self._fit_control.on_click(lambda _: self.fit())
        self._refresh()
        return w.VBox([w.HBox([self._dtype_control, self._fit_control]), self._scale_control,
                       self._zero_control, self._picture, self._text])

    def _from_control(self, **change):
        if self._updating:
            return
        scale = change.get("scale")
        if scale is not None and abs(math.log10(scale) - math.log10(self.scale)) <= \
                self._scale_control.step / 2 + 1e-9:
            # the browser rounds the slider to its step and sends that back: an echo of the
            # scale the state already has (a fitted one, say), not a move by the learner
            return
        self.set(**change)

    def _refresh(self):
        """Bring the live view (if built) in line with the state: controls, picture, text."""
        if self._picture is None:
            return
        self._updating = True
        try:
            low, high = CODE_RANGES[self.dtype]
            self._dtype_control.value = self.dtype
            self._zero_control.min, self._zero_control.max = min(low, self._zero_control.min), \
                max(high, self._zero_control.max)
            self._zero_control.min, self._zero_control.max = low, high
            self._zero_control.value = self.zero_point
            self._scale_control.value = self.scale
        finally:
            self._updating = False
        self._picture.value = self.static_svg()
        s = self.summary()
        self._text.value = (
            f"<pre>{escape(self.dtype)}: codes [{low}, {high}] stand for "
            f"scale · (code − {self.zero_point}) = [{s['grid'][0]:.4g}, {s['grid'][1]:.4g}]\n"
            f"clipped: {s['clipped']} of {self.values.size} values\n"
            f"max |error| {s['max_error']:.4g}   mean |error| {s['mean_error']:.4g}   "
            f"(rounding alone: at most scale / 2 = {self.scale / 2:.4g})</pre>")


class _HistogramPanel(HistogramPanel):
    """The histogram of the values with the grid's lines over it; beyond the grid, red."""

    width, height = 460, 260

    def svg(self, x0=0):
        e = self.explorer
        counts, edges, axes = self.frame()
        left, top, right, bottom = axes.left, axes.top, axes.right, axes.bottom
        xlo, xhi, px, py = axes.xlo, axes.xhi, axes.px, axes.py
        g_low, g_high = e.grid_range()
        lines, k = e.grid_lines(right - left)
        every = "every level" if k == 1 else f"one line per {k} levels"
        parts = [f'<g transform="translate({x0},0)" {FONT} font-size="11">',
                 _text(self.width / 2, 16, f"{e.title}: histogram, {e.dtype} grid ({every})",
                       size=13, anchor="middle"),
                 _text((left + right) / 2, self.height - 6, "value", anchor="middle")]
        # beyond the grid: what clips
        parts.append('<g data-series="clipped-region" fill="#d62728" fill-opacity="0.12">')
        if g_low > xlo:
            parts.append(f'<rect x="{left}" y="{top}" width="{px(min(g_low, xhi)) - left:.1f}" '
                         f'height="{bottom - top}"/>')
        if g_high < xhi:
            start = px(max(g_high, xlo))
            parts.append(f'<rect x="{start:.1f}" y="{top}" width="{right - start:.1f}" '
                         f'height="{bottom - top}"/>')
        parts.append("</g>")
        ticks = [t for t in nice_ticks(xlo, xhi) if xlo <= t <= xhi]
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 0
        for t in ticks:
            parts.append(_text(px(t), bottom + 16, tick_text(t, step), anchor="middle"))
        parts.append(f'<g data-series="histogram" fill="{C0}" fill-opacity="0.75">')
        for c, a, b in zip(counts, edges[:-1], edges[1:]):
            if c:
                parts.append(f'<rect x="{px(a):.1f}" y="{py(c):.1f}" width="{px(b) - px(a):.2f}" '
                             f'height="{bottom - py(c):.1f}" data-count="{int(c)}"/>')
        parts.append("</g>")
        parts.append(f'<g data-series="grid" stroke="#555" stroke-width="0.6" '
                     f'data-every="{k}" data-count="{len(lines)}">')
        for v in lines:
            parts.append(f'<line x1="{px(v):.1f}" y1="{bottom}" x2="{px(v):.1f}" '
                         f'y2="{bottom - 10}"/>')
        parts.append("</g>")
        zero = 0.0
        if xlo <= zero <= xhi:
            parts.append(f'<line data-series="zero" x1="{px(zero):.1f}" y1="{top}" '
                         f'x2="{px(zero):.1f}" y2="{bottom}" stroke="#2ca02c" '
                         f'stroke-dasharray="3,3"/>')
        parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
                     f'fill="none" stroke="#333"/></g>')
        return "".join(parts)
