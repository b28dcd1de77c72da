"""What every widget that draws a ``widgets._dot.Graph`` shares: its layout, its DOT and SVG.

``show_graph`` (the autograd graph behind a tensor) and ``show_program`` (a captured
or exported program) are both a picture model drawn by Graphviz.  A subclass sets

* ``self.graph`` -- the picture model (``_dot.Graph``), rebuilt when its content changes;
* ``self.highlighted`` -- what ``Graph.to_dot`` marks with a red border;
* ``self.layout`` -- ``"LR"``, ``"TB"`` or ``"auto"`` (what was asked for),

calls ``_choose_direction()`` whenever the graph's content changes, and implements
``_redraw()`` (put the new picture into the live view, if there is one).  The
direction is chosen when the content changes, never when a highlight moves, so the
picture does not jump between layouts while the learner steps through nodes.

    >>> import learntorch as torch
    >>> from widgets.graph import GraphView
    >>> a = torch.tensor(2., requires_grad=True)
    >>> isinstance(GraphView(a * a), DotPicture)
    True
"""
from ._base import Widget
from ._graphviz import fitting_direction, render
from ._svg_fit import fit_width

# the layout dropdown: label -> direction ("auto": left to right when it fits the width)
LAYOUT_CHOICES = {"auto": "auto", "left to right": "LR", "top to bottom": "TB"}


class DotPicture(Widget):
    """Base class of the graph pictures (see the module docstring)."""

    graph = None
    highlighted = ()
    layout = "auto"
    direction = "LR"

    def _choose_direction(self):
        if self.layout == "auto":
            self.direction = fitting_direction(lambda d: self.graph.to_dot(self.highlighted,
                                                                          direction=d))
        else:
            self.direction = self.layout

    def set_direction(self, direction):
        """``"LR"`` (left to right), ``"TB"`` (top to bottom) or ``"auto"``."""
        check_direction(direction)
        self.layout = direction
        self._choose_direction()
        self._redraw()

    @property
    def dot(self):
        """The DOT source: deterministic (ids from the graph's structure, no memory addresses)."""
        return self.graph.to_dot(self.highlighted, direction=self.direction)

    def svg(self):
        """The rendered SVG text (cached per DOT text, so showing it again is instant)."""
        return render(self.dot)[0]

    @property
    def renderer(self):
        """What drew the picture: ``dot``, ``graphviz-pure``, ``matplotlib`` or ``text``."""
        return render(self.dot)[1]

    def static_svg(self):
        return self.svg()

    def _picture_html(self):
        return fit_width(self.svg())   # shrinks to the output's width: no node off-screen

    def _redraw(self):
        raise NotImplementedError


def check_direction(direction):
    if direction not in LAYOUT_CHOICES.values():
        raise ValueError(f"direction must be 'LR' (left to right), 'TB' (top to bottom) or "
                         f"'auto', got {direction!r}")


def as_tuple(ids):
    """Highlight ids as a tuple: one id (int or str) or several."""
    if ids is None:
        return ()
    return (ids,) if isinstance(ids, (int, str)) else tuple(ids)


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"
