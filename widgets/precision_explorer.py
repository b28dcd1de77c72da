"""PrecisionExplorer: which gradients a 16-bit float can hold, and what loss scaling changes.

A floating-point number is a sign, an exponent and a mantissa.  The exponent's bits set the
*range*: float16 has 5 of them, so its smallest normal number is 2**-14 (6.1e-05), its
smallest number at all 2**-24 (6.0e-08, a "subnormal" with fewer significant bits), and
anything smaller rounds to 0 -- it **underflows**.  bfloat16 has float32's 8 exponent bits
(and float32's range) but only 7 mantissa bits (float16 has 10): a coarser grid over a far
wider range.

The widget draws a histogram of a model's gradient magnitudes, on a log2 axis, with the
chosen dtype's zones shaded: what rounds to 0, what is subnormal, what overflows to inf.
A **loss scale** slider multiplies every gradient by ``S`` (what ``GradScaler.scale(loss)``
does to the whole backward pass) and the counts below come from actually casting the scaled
gradients with the engine (``(S * g).to(dtype)``): how many survive, how many are flushed to
0, how many overflow.  Beside it, one number's bits in each of the four float dtypes, read
from the engine with ``Tensor.view(int dtype)``.

    >>> import learntorch as torch
    >>> from widgets import PrecisionExplorer
    >>> grads = torch.tensor([1e-9, 3e-8, 1e-6, 1e-3, 0.5, 0.0])
    >>> explorer = PrecisionExplorer(grads, dtype="float16")
    >>> explorer.counts()               # 1e-9 rounds to 0; 3e-8 and 1e-6 are subnormal
    {'total': 6, 'already_zero': 1, 'flushed_to_zero': 1, 'subnormal': 2, 'normal': 2, 'overflow': 0}
    >>> explorer.set(loss_scale=2.0 ** 16)
    >>> explorer.counts()               # scaled by 65536: 0.5 becomes 32768, still below 65504
    {'total': 6, 'already_zero': 1, 'flushed_to_zero': 0, 'subnormal': 0, 'normal': 5, 'overflow': 0}
    >>> explorer.bits("bfloat16")       # 0.1: sign, 8 exponent bits, 7 mantissa bits
    ('0', '01111011', '1001101')
    >>> explorer
    PrecisionExplorer(float16, 6 gradients (1 exactly 0), loss scale 65536: 5 normal, 0 subnormal, 0 flushed to 0, 0 overflow; 0.1 stored as 0.0999755859375)
"""
from html import escape

import numpy as np

import learntorch

from ._base import Widget
from ._svg_chart import C0, C1, C3, FONT, HistogramPanel, _text, svg_document

#: dtype -> (exponent bits, mantissa bits, the integer dtype of the same size)
LAYOUT = {"float16": (5, 10, "int16"), "bfloat16": (8, 7, "int16"),
          "float32": (8, 23, "int32"), "float64": (11, 52, "int64")}
HISTOGRAM_DTYPES = ("float16", "bfloat16", "float32")
ZONE_COLOURS = {"flushed_to_zero": C3, "subnormal": C1, "normal": C0, "overflow": "#7f0000"}
MAX_SCALE_LOG2 = 24


def _gradients(source):
    """A flat float32 tensor of the gradients of ``source``: a tensor, a list of tensors, or a
    module (its parameters' ``.grad``)."""
    if isinstance(source, learntorch.nn.Module):
        source = [p.grad for p in source.parameters() if p.grad is not None]
        if not source:
            raise ValueError("the module has no gradients yet: run loss.backward() first")
    if isinstance(source, (list, tuple)):
        return learntorch.cat([learntorch.as_tensor(t).detach().float().reshape(-1)
                               for t in source])
    return learntorch.as_tensor(source).detach().float().reshape(-1)


def dtype_range(dtype):
    """(smallest subnormal, smallest normal, largest) of a float dtype, from ``finfo``: the
    smallest subnormal is ``tiny * eps`` (the last mantissa bit of the smallest exponent)."""
    info = learntorch.finfo(getattr(learntorch, dtype))
    return info.tiny * info.eps, info.tiny, info.max


class PrecisionExplorer(Widget):
    """Gradient magnitudes against a float dtype's range, with a loss scale.

    * ``set(dtype=..., loss_scale=..., number=...)`` -- the dtype of the histogram (float16,
      bfloat16, float32), the scale S, and the number whose bits are shown;
    * ``cast()`` -- the engine's ``(S * g).to(dtype)``; ``counts()`` -- what happened to each
      gradient; ``survival()`` -- the share of nonzero gradients still nonzero;
    * ``bits(dtype)`` -- (sign, exponent, mantissa) bits of ``number``; ``stored(dtype)`` --
      the value those bits mean.

    >>> import learntorch as torch
    >>> explorer = PrecisionExplorer(torch.tensor([1e-6, 1e-8]), dtype="bfloat16")
    >>> explorer.counts()["normal"]        # bfloat16 has float32's range
    2
    >>> explorer.stored("float16")         # 0.1 in float16: 10 mantissa bits
    0.0999755859375
    """

    def __init__(self, gradients, dtype="float16", loss_scale=1.0, number=0.1,
                 title="gradients"):
        self.tensor = _gradients(gradients)
        if self.tensor.numel() == 0:
            raise ValueError("PrecisionExplorer needs at least one gradient")
        self.magnitudes = np.abs(self.tensor.numpy().astype(np.float64))
        self.title = title
        self.dtype, self.loss_scale, self.number = "float16", 1.0, 0.1
        self._cast = None
        self.set(dtype=dtype, loss_scale=loss_scale, number=number)

    # ---- state --------------------------------------------------------------------

    def set(self, dtype=None, loss_scale=None, number=None):
        if dtype is not None:
            name = getattr(dtype, "name", None) or str(dtype).split(".")[-1]
            if name not in HISTOGRAM_DTYPES:
                raise ValueError(f"dtype must be one of {', '.join(HISTOGRAM_DTYPES)}, got "
                                 f"{dtype!r}")
            self.dtype = name
        if loss_scale is not None:
            loss_scale = float(loss_scale)
            if not (np.isfinite(loss_scale) and loss_scale > 0):
                raise ValueError(f"loss_scale must be a positive number, got {loss_scale!r}")
            self.loss_scale = loss_scale
        if number is not None:
            self.number = float(number)
        self._cast = None
        self._refresh()

    def scaled(self):
        """``S * g`` in float32 (what the backward pass of ``S * loss`` computes)."""
        return self.tensor * self.loss_scale

    def cast(self):
        """The engine's ``(S * g).to(dtype)``: the gradients as the chosen dtype holds them."""
        if self._cast is None:
            self._cast = self.scaled().to(getattr(learntorch, self.dtype))
        return self._cast

    def counts(self):
        """How many gradients: in all; exactly 0 before any cast; nonzero but rounded to 0
        by the cast; subnormal after it (nonzero, below the smallest normal: fewer significant
        bits); normal; overflowed to inf."""
        held = np.abs(self.cast().float().numpy().astype(np.float64))
        nonzero = self.magnitudes > 0
        _, smallest_normal, _ = dtype_range(self.dtype)
        finite = np.isfinite(held)
        return {"total": int(self.magnitudes.size),
                "already_zero": int(np.count_nonzero(~nonzero)),
                "flushed_to_zero": int(np.count_nonzero(nonzero & (held == 0))),
                "subnormal": int(np.count_nonzero(nonzero & finite & (held > 0)
                                                  & (held < smallest_normal))),
                "normal": int(np.count_nonzero(nonzero & finite & (held >= smallest_normal))),
                "overflow": int(np.count_nonzero(nonzero & ~finite))}

    def survival(self):
        """The share of the nonzero gradients that are still nonzero and finite after the
        cast."""
        c = self.counts()
        nonzero = c["total"] - c["already_zero"]
        return (c["subnormal"] + c["normal"]) / nonzero if nonzero else 1.0

    def bits(self, dtype):
        """(sign, exponent, mantissa) bits of ``number`` stored as ``dtype``, as strings, read
        from the engine's tensor with ``.view(int dtype)``."""
        exponent_bits, mantissa_bits, int_dtype = LAYOUT[dtype]
        t = learntorch.tensor([self.number], dtype=learntorch.float64).to(
            getattr(learntorch, dtype))
        width = 1 + exponent_bits + mantissa_bits
        word = int(t.view(getattr(learntorch, int_dtype)).item()) & ((1 << width) - 1)
        text = format(word, f"0{width}b")
        return text[0], text[1:1 + exponent_bits], text[1 + exponent_bits:]

    def stored(self, dtype):
        """The value ``number`` becomes in ``dtype`` (the nearest one it can hold)."""
        t = learntorch.tensor([self.number], dtype=learntorch.float64)
        return t.to(getattr(learntorch, dtype)).double().item()

    def __repr__(self):
        c = self.counts()
        return (f"PrecisionExplorer({self.dtype}, {c['total']} gradients ({c['already_zero']} "
                f"exactly 0), loss scale {self.loss_scale:g}: {c['normal']} normal, "
                f"{c['subnormal']} subnormal, {c['flushed_to_zero']} flushed to 0, "
                f"{c['overflow']} overflow; {self.number:g} stored as "
                f"{self.stored(self.dtype)!r})")

    # ---- picture ------------------------------------------------------------------

    def log2_limits(self):
        """The histogram's x range in log2 of |S * g|: the gradients with a margin, widened
        to show the dtype's underflow, normal and overflow edges when they are near the data
        (within 16 octaves), so that float32's 2**-149 does not squeeze the data into a sliver."""
        values = self.magnitudes[self.magnitudes > 0] * self.loss_scale
        if values.size == 0:
            values = np.array([1.0])
        low, high = np.log2(values.min()) - 2, np.log2(values.max()) + 2
        subnormal, smallest_normal, largest = dtype_range(self.dtype)
        edge_low = np.log2(subnormal) - 2
        if low - 16 <= edge_low < low:
            low = edge_low
        for edge in (np.log2(smallest_normal) + 1, np.log2(largest) + 1):
            if high < edge <= high + 16:
                high = edge
        return float(np.floor(low)), float(np.ceil(high))

    def zone(self, magnitude):
        """What the dtype does to a magnitude (before rounding at the edges): 'flushed_to_zero'
        below half the smallest subnormal, 'subnormal', 'normal', 'overflow' beyond max."""
        subnormal, smallest_normal, largest = dtype_range(self.dtype)
        if magnitude < subnormal / 2:
            return "flushed_to_zero"
        if magnitude < smallest_normal:
            return "subnormal"
        return "normal" if magnitude <= largest else "overflow"

    def histogram(self, bins=48):
        """(counts, bin edges in log2) of the nonzero |S * g|."""
        values = self.magnitudes[self.magnitudes > 0] * self.loss_scale
        return np.histogram(np.log2(values), bins=bins, range=self.log2_limits())

    def static_svg(self):
        return svg_document([_HistogramPanel(self), _BitsPanel(self)])

    # ---- live view ----------------------------------------------------------------

    _picture = None
    _updating = False

    def _build_view(self):
        import ipywidgets as w

        self._picture = w.HTML()
        self._text = w.HTML()
        self._dtype_control = w.ToggleButtons(options=list(HISTOGRAM_DTYPES), value=self.dtype,
                                              description="dtype")
        self._scale_control = w.FloatLogSlider(value=self.loss_scale, base=2, min=0,
                                               max=MAX_SCALE_LOG2, step=1,
                                               description="loss scale", readout_format=".0f")
        self._number_control = w.FloatText(value=self.number, description="number")
        self._dtype_control.observe(lambda c: self._from_control(dtype=c["new"]), names="value")
        self._scale_control.observe(lambda c: self._from_control(loss_scale=c["new"]),
                                    names="value")
        self._number_control.observe(lambda c: self._from_control(number=c["new"]),
                                     names="value")
        self._refresh()
        return w.VBox([self._dtype_control, self._scale_control, self._number_control,
                       self._picture, self._text])

    def _from_control(self, **change):
        if not self._updating:
            self.set(**change)

    def _refresh(self):
        """Bring the live view (if built) in line with the state: controls, picture, text."""
        if self._picture is None:
            return
        self._updating = True
        try:
            self._dtype_control.value = self.dtype
            self._scale_control.value = min(max(self.loss_scale, 1.0), 2.0 ** MAX_SCALE_LOG2)
            self._number_control.value = self.number
        finally:
            self._updating = False
        from ._svg_fit import fit_width
        self._picture.value = fit_width(self.static_svg())
        c = self.counts()
        subnormal, smallest_normal, largest = dtype_range(self.dtype)
        self._text.value = (
            f"<pre>{escape(self.dtype)}: smallest subnormal {subnormal:.3g}, smallest normal "
            f"{smallest_normal:.3g}, largest {largest:.5g}\n"
            f"loss scale {self.loss_scale:g}: of {c['total'] - c['already_zero']} nonzero "
            f"gradients, {c['normal']} normal, {c['subnormal']} subnormal, "
            f"{c['flushed_to_zero']} flushed to 0, {c['overflow']} overflow "
            f"(survive: {100 * self.survival():.1f}%)</pre>")


class _HistogramPanel(HistogramPanel):
    """The histogram of log2 |S * g|, its bars coloured by what the dtype does to them, and
    the dtype's zones shaded behind."""

    width, height = 500, 280

    def svg(self, x0=0):
        e = self.explorer
        counts, edges, axes = self.frame()
        left, top, right, bottom = axes.left, axes.top, axes.right, axes.bottom
        xlo, xhi, px, py = axes.xlo, axes.xhi, axes.px, axes.py
        subnormal, smallest_normal, largest = dtype_range(e.dtype)
        title = f"{e.title}: |{e.loss_scale:g} · g| in {e.dtype}"
        parts = [f'<g transform="translate({x0},0)" {FONT} font-size="11">',
                 _text(self.width / 2, 16, title, size=13, anchor="middle"),
                 _text((left + right) / 2, self.height - 6, "log2 of the magnitude",
                       anchor="middle")]
        zones = [("flushed_to_zero", xlo, np.log2(subnormal / 2)),
                 ("subnormal", np.log2(subnormal / 2), np.log2(smallest_normal)),
                 ("overflow", np.log2(largest), xhi)]
        for name, a, b in zones:
            a, b = max(a, xlo), min(b, xhi)
            if b > a:
                parts.append(f'<rect data-zone="{name}" x="{px(a):.1f}" y="{top}" '
                             f'width="{px(b) - px(a):.1f}" height="{bottom - top}" '
                             f'fill="{ZONE_COLOURS[name]}" fill-opacity="0.13"/>')
        step = max(1, int(np.ceil((xhi - xlo) / 10 / 2) * 2))
        for t in range(int(np.ceil(xlo / step) * step), int(xhi) + 1, step):
            parts.append(_text(px(t), bottom + 16, str(t), anchor="middle"))
        parts.append('<g data-series="histogram">')
        for c, a, b in zip(counts, edges[:-1], edges[1:]):
            if c:
                zone = e.zone(2.0 ** ((a + b) / 2))
                parts.append(f'<rect x="{px(a):.1f}" y="{py(c):.1f}" width="{px(b) - px(a):.2f}" '
                             f'height="{bottom - py(c):.1f}" fill="{ZONE_COLOURS[zone]}" '
                             f'fill-opacity="0.8" data-zone="{zone}" data-count="{int(c)}"/>')
        parts.append("</g>")
        legend = [("rounds to 0", "flushed_to_zero"), ("subnormal", "subnormal"),
                  ("normal", "normal"), ("overflow", "overflow")]
        for k, (label, zone) in enumerate(legend):
            y = top + 12 + 14 * k
            parts.append(f'<rect x="{right - 92}" y="{y - 8}" width="9" height="9" '
                         f'fill="{ZONE_COLOURS[zone]}"/>')
            parts.append(_text(right - 78, y, label, size=10))
        parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
                     f'fill="none" stroke="#333"/></g>')
        return "".join(parts)


class _BitsPanel:
    """``number`` in each float dtype: one box per bit, sign red, exponent blue, mantissa
    green, and the value the bits stand for."""

    width, height = 560, 280
    box = 7.4

    def __init__(self, explorer):
        self.explorer = explorer

    def svg(self, x0=0):
        e = self.explorer
        colours = {"sign": C3, "exponent": C0, "mantissa": "#2ca02c"}
        parts = [f'<g transform="translate({x0},0)" {FONT} font-size="11">',
                 _text(self.width / 2, 16, f"{e.number:g} in bits: sign | exponent | mantissa",
                       size=13, anchor="middle")]
        for row, dtype in enumerate(LAYOUT):
            y = 44 + row * 58
            sign, exponent, mantissa = e.bits(dtype)
            stored = e.stored(dtype)
            parts.append(_text(6, y, f"{dtype} ({len(exponent)} + {len(mantissa)} bits)",
                               size=11))
            parts.append(_text(self.width - 6, y, f"= {stored!r}", size=10, anchor="end"))
            parts.append(f'<g data-dtype="{dtype}" data-bits="{sign}{exponent}{mantissa}">')
            x = 6.0
            for part, text in (("sign", sign), ("exponent", exponent), ("mantissa", mantissa)):
                for bit in text:
                    fill = colours[part] if bit == "1" else "white"
                    parts.append(f'<rect x="{x:.1f}" y="{y + 6}" width="{self.box - 1:.1f}" '
                                 f'height="14" fill="{fill}" fill-opacity="0.75" '
                                 f'stroke="{colours[part]}" data-part="{part}"/>')
                    x += self.box
                x += 4  # a gap between the fields
            parts.append("</g>")
        parts.append("</g>")
        return "".join(parts)
