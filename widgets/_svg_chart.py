"""Line charts and bar charts written as SVG text, for pictures that redraw live.

The training dashboard redraws its curves while a model trains.  A matplotlib
render of a figure to PNG takes 150-250 ms, longer than a training step of a
small model; writing the few hundred points of a curve as an SVG ``polyline``
takes about a millisecond, the browser draws it, and the text is the same in
every process (no date, no hash), so it is also the picture a saved notebook
keeps.

What is here is what the dashboard needs and no more:

* ``nice_ticks(low, high)`` -- round axis ticks (0, 0.2, 0.4, ... not 0.173, ...);
* ``LineChart`` -- one panel: title, axes with ticks and labels, grid, lines
  and markers, an optional legend;
* ``BarChart`` -- one panel of horizontal bars with a label per bar;
* ``svg_document(panels)`` -- panels side by side in one ``<svg>`` document.

Coordinates: each panel is ``width`` x ``height`` pixels; the plot area is inset
by ``MARGIN`` for the tick labels and titles.  Data are mapped linearly; SVG's
y axis points down, so ``y_pixel = bottom - (y - y_low) * scale``.
"""
import math
from html import escape

import numpy as np

FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'
# matplotlib's default colour cycle, so colours read as they always did
C0, C1, C2, C3 = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"
MARGIN = dict(left=52, right=12, top=26, bottom=40)


def nice_ticks(low, high, count=5):
    """About ``count`` round tick values covering ``[low, high]`` (steps of 1, 2, 2.5 or 5 x 10^k).

    >>> nice_ticks(0.0, 1.0)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    >>> nice_ticks(0.43, 1.07)
    [0.4, 0.6, 0.8, 1.0, 1.2]
    """
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step + 1e-9) * step
    ticks, k = [], 0
    while True:
        tick = first + k * step
        ticks.append(round(tick, 12))
        if tick >= high - 1e-9 * step:
            return ticks
        k += 1


def tick_text(value, step):
    """A tick label with as many decimals as the tick spacing needs: 0.2, 1, 2.5, 1e-05."""
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        return f"{value:.2g}"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    decimals += 1 if step > 0 and round(step / 10 ** math.floor(math.log10(step)), 6) == 2.5 else 0
    return f"{value:.{decimals}f}"


def padded_limits(values, pad=0.05):
    """``(low, high)`` holding every finite value, with a margin; ``(0, 1)`` when there is none."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return 0.0, 1.0
    low, high = float(values.min()), float(values.max())
    if high == low:
        spread = abs(low) * 0.1 or 0.5
        return low - spread, high + spread
    margin = (high - low) * pad
    return low - margin, high + margin


def thinned(x, y, bins):
    """At most about ``2 * bins`` points with the same look as ``(x, y)``: a long curve is cut
    into ``bins`` runs of consecutive points and each keeps its lowest and highest point
    (in order), so spikes stay visible while the SVG stays small."""
    if len(x) <= 2 * bins:
        return x, y
    keep = []
    for run in np.array_split(np.arange(len(x)), bins):
        low, high = run[np.argmin(y[run])], run[np.argmax(y[run])]
        keep.extend(sorted({low, high}))
    return x[keep], y[keep]


class Line:
    """One plotted series: ``x``, ``y`` (finite points are drawn; others break nothing,
    they are left out), its colour, width, opacity, an optional marker (``"o"`` circle,
    ``"s"`` square) and a legend label; ``name`` goes into the SVG as ``data-series``."""

    def __init__(self, name, x, y, color, *, width=1.5, opacity=1.0, marker=None, label=None):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        finite = np.isfinite(x) & np.isfinite(y)
        self.name, self.x, self.y = name, x[finite], y[finite]
        self.color, self.width, self.opacity = color, width, opacity
        self.marker, self.label = marker, label


class LineChart:
    """A panel of lines: ``svg(x0)`` draws it with its left edge at pixel ``x0``."""

    def __init__(self, title, xlabel, lines, *, width=400, height=250, legend=False,
                 xlim=None, ylim=None):
        self.title, self.xlabel, self.lines = title, xlabel, lines
        self.width, self.height, self.legend = width, height, legend
        xs = np.concatenate([line.x for line in lines] + [np.zeros(0)])
        ys = np.concatenate([line.y for line in lines] + [np.zeros(0)])
        self.xlim = xlim or padded_limits(np.append(xs, 0.0) if len(xs) else xs, pad=0.03)
        self.ylim = ylim or padded_limits(ys)

    # the plot area, in pixels relative to the panel
    @property
    def area(self):
        return (MARGIN["left"], MARGIN["top"], self.width - MARGIN["right"],
                self.height - MARGIN["bottom"])

    def to_pixels(self, x, y):
        """Data -> pixel coordinates inside the panel (arrays in, arrays out)."""
        left, top, right, bottom = self.area
        (x0, x1), (y0, y1) = self.xlim, self.ylim
        px = left + (np.asarray(x, dtype=float) - x0) * (right - left) / (x1 - x0)
        py = bottom - (np.asarray(y, dtype=float) - y0) * (bottom - top) / (y1 - y0)
        return px, py

    def svg(self, x0=0):
        left, top, right, bottom = self.area
        parts = [f'<g transform="translate({x0},0)" {FONT} font-size="11">',
                 _text(self.width / 2, 16, self.title, size=13, anchor="middle"),
                 _text((left + right) / 2, self.height - 6, self.xlabel, anchor="middle")]
        parts += self._axes()
        parts.append(f'<clipPath id="plot{x0}"><rect x="{left}" y="{top}" width="{right - left}" '
                     f'height="{bottom - top}"/></clipPath><g clip-path="url(#plot{x0})">')
        for line in self.lines:
            parts += self._line(line)
        parts.append("</g>")
        parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
                     f'fill="none" stroke="#333"/>')
        if self.legend:
            parts += self._legend()
        parts.append("</g>")
        return "".join(parts)

    def _axes(self):
        left, top, right, bottom = self.area
        parts = []
        for axis, (low, high) in (("x", self.xlim), ("y", self.ylim)):
            ticks = [t for t in nice_ticks(low, high) if low <= t <= high]
            step = ticks[1] - ticks[0] if len(ticks) > 1 else 0
            for t in ticks:
                if axis == "x":
                    p = float(self.to_pixels(t, self.ylim[0])[0])
                    parts.append(f'<line x1="{p:.1f}" y1="{top}" x2="{p:.1f}" y2="{bottom + 4}" '
                                 f'stroke="#ddd"/>')
                    parts.append(_text(p, bottom + 16, tick_text(t, step), anchor="middle"))
                else:
                    p = float(self.to_pixels(self.xlim[0], t)[1])
                    parts.append(f'<line x1="{left - 4}" y1="{p:.1f}" x2="{right}" y2="{p:.1f}" '
                                 f'stroke="#ddd"/>')
                    parts.append(_text(left - 7, p + 4, tick_text(t, step), anchor="end"))
        return parts

    def _line(self, line):
        if not len(line.x):
            return []
        x, y = thinned(line.x, line.y, bins=int(self.area[2] - self.area[0]))
        px, py = self.to_pixels(x, y)
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px, py))
        parts = [f'<g data-series="{escape(line.name)}" stroke="{line.color}" fill="{line.color}" '
                 f'opacity="{line.opacity:g}">']
        if len(px) > 1:
            parts.append(f'<polyline points="{points}" fill="none" stroke-width="{line.width:g}" '
                         f'stroke-linejoin="round"/>')
        if line.marker == "o":
            parts += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5"/>' for a, b in zip(px, py)]
        elif line.marker == "s":
            parts += [f'<rect x="{a - 3:.1f}" y="{b - 3:.1f}" width="6" height="6"/>'
                      for a, b in zip(px, py)]
        parts.append("</g>")
        return parts

    def _legend(self):
        entries = [line for line in self.lines if line.label]
        _, top, right, _ = self.area
        width = 8 + 7 * max((len(line.label) for line in entries), default=0) + 30
        x, y = right - width - 4, top + 4
        parts = [f'<g font-size="10"><rect x="{x}" y="{y}" width="{width}" '
                 f'height="{6 + 14 * len(entries)}" fill="white" fill-opacity="0.85" stroke="#ccc"/>']
        for k, line in enumerate(entries):
            ly = y + 11 + 14 * k
            parts.append(f'<line x1="{x + 5}" y1="{ly}" x2="{x + 25}" y2="{ly}" stroke="{line.color}" '
                         f'stroke-width="{line.width:g}" opacity="{line.opacity:g}"/>')
            if line.marker == "o":
                parts.append(f'<circle cx="{x + 15}" cy="{ly}" r="3" fill="{line.color}"/>')
            elif line.marker == "s":
                parts.append(f'<rect x="{x + 12}" y="{ly - 3}" width="6" height="6" fill="{line.color}"/>')
            parts.append(_text(x + 30, ly + 3.5, line.label))
        parts.append("</g>")
        return parts


class BarChart:
    """Horizontal bars, one per ``(label, value)``, from 0 to the largest value."""

    def __init__(self, title, xlabel, bars, color=C3, *, width=400, height=250):
        self.title, self.xlabel, self.bars, self.color = title, xlabel, list(bars), color
        self.width, self.height = width, height
        longest = max((len(label) for label, _ in self.bars), default=0)
        self.left = min(max(40, 7 * longest + 12), width // 2)   # room for the labels
        biggest = max((v for _, v in self.bars if math.isfinite(v)), default=0.0)
        self.xlim = (0.0, max(biggest * 1.15, 1e-12))

    def svg(self, x0=0):
        left, top = self.left, MARGIN["top"]
        right, bottom = self.width - MARGIN["right"], self.height - MARGIN["bottom"]
        scale = (right - left) / (self.xlim[1] - self.xlim[0])
        parts = [f'<g transform="translate({x0},0)" {FONT} font-size="11">',
                 _text(self.width / 2, 16, self.title, size=13, anchor="middle"),
                 _text((left + right) / 2, self.height - 6, self.xlabel, anchor="middle")]
        ticks = [t for t in nice_ticks(*self.xlim, count=4) if t <= self.xlim[1]]
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 0
        for t in ticks:
            p = left + t * scale
            parts.append(f'<line x1="{p:.1f}" y1="{top}" x2="{p:.1f}" y2="{bottom + 4}" stroke="#ddd"/>')
            parts.append(_text(p, bottom + 16, tick_text(t, step), anchor="middle"))
        slot = (bottom - top) / max(len(self.bars), 1)
        parts.append(f'<g data-series="bars" fill="{self.color}">')
        for k, (label, value) in enumerate(self.bars):
            y = top + slot * k
            length = value * scale if math.isfinite(value) else 0.0
            parts.append(f'<rect x="{left}" y="{y + 0.2 * slot:.1f}" width="{length:.1f}" '
                         f'height="{0.6 * slot:.1f}" data-value="{value!r}"/>')
        parts.append("</g>")
        for k, (label, _) in enumerate(self.bars):
            parts.append(_text(left - 6, top + slot * (k + 0.5) + 4, label, anchor="end", size=10))
        parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
                     f'fill="none" stroke="#333"/></g>')
        return "".join(parts)


class HistogramAxes:
    """The plot area of a histogram panel ``width`` x ``height`` pixels whose bars are
    ``counts`` over the bins ``edges``: ``px(x)`` and ``py(count)`` map data to pixels (x is
    held inside the bins' range, the tallest bar reaches 1/1.1 of the height)."""

    def __init__(self, width, height, counts, edges):
        self.left, self.top = MARGIN["left"], MARGIN["top"]
        self.right, self.bottom = width - MARGIN["right"], height - MARGIN["bottom"]
        self.xlo, self.xhi = float(edges[0]), float(edges[-1])
        self.top_count = max(int(counts.max()), 1) * 1.1

    def px(self, x):
        x = min(max(x, self.xlo), self.xhi)
        return self.left + (x - self.xlo) * (self.right - self.left) / (self.xhi - self.xlo)

    def py(self, count):
        return self.bottom - count * (self.bottom - self.top) / self.top_count


class HistogramPanel:
    """Base of a panel that draws ``explorer.histogram()`` (counts, bin edges): subclasses set
    ``width`` and ``height`` and write ``svg(x0)`` with the counts and axes ``frame()`` gives."""

    width, height = 460, 260

    def __init__(self, explorer):
        self.explorer = explorer

    def frame(self):
        counts, edges = self.explorer.histogram()
        return counts, edges, HistogramAxes(self.width, self.height, counts, edges)


def svg_document(panels, gap=16):
    """The panels side by side in one SVG document of their natural size in pixels
    (``widgets._svg_fit.fit_width`` makes it shrink to a narrower output)."""
    width = sum(p.width for p in panels) + gap * (len(panels) - 1)
    height = max(p.height for p in panels)
    body, x = [], 0
    for panel in panels:
        body.append(panel.svg(x))
        x += panel.width + gap
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">'
            f'<rect width="{width}" height="{height}" fill="white"/>{"".join(body)}</svg>')


def _text(x, y, text, *, size=None, anchor="start"):
    size_attr = f' font-size="{size}"' if size else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{size_attr}>'
            f'{escape(str(text))}</text>')
