"""An SVG picture that fits the width of the notebook's output area.

Graphviz and matplotlib write an SVG of a fixed size (``width="1945pt"``): a
graph laid out left to right is easily wider than the output area, and the part
that does not fit -- often the node the learner is looking at -- is off-screen.
``fit_width`` rewrites the root ``<svg>`` tag so the browser scales the picture
down to the width it has: ``width="100%"`` with the picture's ``viewBox`` (the
drawing's own coordinates) and ``height:auto`` keep the proportions, and a
``max-width`` of the natural size keeps a small picture from being blown up.
No JavaScript is involved, so it works in every Jupyter front end.
"""
import re

_ROOT = re.compile(r"<svg\b[^>]*>", re.S)
_LENGTH = re.compile(r"^\s*([0-9.]+)\s*(pt|px)?\s*$")
PIXELS_PER_UNIT = {"pt": 4 / 3, "px": 1.0, None: 1.0}   # CSS: 1pt = 1/72 in, 1px = 1/96 in


def natural_size(svg):
    """``(width, height)`` in CSS pixels of the root ``<svg>`` tag, or None when not given.

    >>> natural_size('<svg width="72pt" height="30"></svg>')
    (96.0, 30.0)
    """
    tag = _ROOT.search(svg)
    if tag is None:
        return None
    sizes = []
    for name in ("width", "height"):
        match = re.search(rf'\s{name}="([^"]*)"', tag.group(0))
        length = _LENGTH.match(match.group(1)) if match else None
        if length is None:
            return None
        sizes.append(float(length.group(1)) * PIXELS_PER_UNIT[length.group(2)])
    return tuple(sizes)


def fit_width(svg):
    """The SVG (XML prolog and doctype dropped, for use inside HTML) scaled to the
    width it is shown in, never beyond its natural size.

    >>> fit_width('<?xml version="1.0"?><svg width="300" height="100"><rect/></svg>')
    '<svg viewBox="0 0 300 100" width="100%" style="max-width:300px;height:auto;display:block"><rect/></svg>'
    """
    svg = svg[svg.find("<svg"):] if "<svg" in svg else svg
    size = natural_size(svg)
    if size is None:  # nothing to scale from: show it as it is
        return svg
    tag = _ROOT.search(svg).group(0)
    new = re.sub(r'\s(width|height|style)="[^"]*"', "", tag)
    if "viewBox=" not in new:
        # without a viewBox the drawing's coordinates are the numbers of width and height
        numbers = [_LENGTH.match(re.search(rf'\s{n}="([^"]*)"', tag).group(1)).group(1)
                   for n in ("width", "height")]
        new = new[:-1] + f' viewBox="0 0 {numbers[0]} {numbers[1]}">'
    new = (new[:-1].rstrip() + f' width="100%" style="max-width:{size[0]:.0f}px;height:auto;'
           f'display:block">')
    return svg.replace(tag, new, 1)
