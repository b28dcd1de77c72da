"""Small images as SVG: a 2-D array drawn as coloured squares, one per value.

The convolution explorer shows many little pictures at once (a digit, its
filters, its feature maps); writing them as SVG rectangles takes well under a
millisecond each and stays deterministic.  Values are coloured on a diverging
scale centred on 0 (blue negative, white 0, red positive) unless ``gray`` is
asked for (a digit: white 0 to black 1).

    >>> import numpy as np
    >>> colour(1.0, 1.0), colour(-1.0, 1.0), colour(0.0, 1.0)
    ('#b2182b', '#2166ac', '#ffffff')
    >>> heatmap(np.eye(2), 10, 20, size=8).count("<rect")   # 4 values and a frame
    5
"""
from html import escape

import numpy as np

POSITIVE = (0xb2, 0x18, 0x2b)   # the colour of +max
NEGATIVE = (0x21, 0x66, 0xac)   # the colour of -max


def _mix(rgb, t):
    """White mixed with ``rgb`` in proportion ``t`` (0 = white, 1 = rgb), as #rrggbb."""
    return "#" + "".join(f"{round(255 + (c - 255) * t):02x}" for c in rgb)


def colour(value, scale, gray=False):
    """The fill of one value: diverging around 0 at ``scale`` = the largest magnitude shown."""
    if gray:
        level = round(255 * (1 - min(max(value / scale if scale else 0.0, 0.0), 1.0)))
        return f"#{level:02x}{level:02x}{level:02x}"
    t = min(abs(value) / scale, 1.0) if scale else 0.0
    return _mix(POSITIVE if value > 0 else NEGATIVE, t)


def heatmap(values, x, y, size=10, scale=None, gray=False, outline=None, title=None):
    """SVG text of the 2-D array ``values`` with its top-left corner at (x, y), ``size``
    pixels per value; ``outline`` = (row0, col0, row1, col1) draws a red frame around
    those cells (inclusive bounds)."""
    values = np.asarray(values, dtype=np.float64)
    if scale is None:
        scale = float(np.abs(values).max()) if values.size else 0.0
    parts = []
    for r, row in enumerate(values):
        for c, value in enumerate(row):
            parts.append(f"<rect x='{x + c * size:g}' y='{y + r * size:g}' width='{size}' "
                         f"height='{size}' fill='{colour(value, scale, gray)}'/>")
    h, w = values.shape
    parts.append(f"<rect x='{x:g}' y='{y:g}' width='{w * size}' height='{h * size}' "
                 "fill='none' stroke='#888' stroke-width='1'/>")
    if outline is not None:
        r0, c0, r1, c1 = outline
        parts.append(f"<rect x='{x + c0 * size:g}' y='{y + r0 * size:g}' "
                     f"width='{(c1 - c0 + 1) * size}' height='{(r1 - r0 + 1) * size}' "
                     "fill='none' stroke='#d62728' stroke-width='2.5'/>")
    tip = f"<title>{escape(title)}</title>" if title else ""
    return f"<g>{tip}{''.join(parts)}</g>"
