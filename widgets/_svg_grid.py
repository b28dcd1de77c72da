"""Drawing tensors as grids of cells, in plain SVG text.

The tensor explorer and the broadcasting view draw the same things: a grid of
cells holding numbers, some filled with a colour, some outlined, with a label
above and arrows between cells.  SVG written as text is fast (a picture in
about a millisecond), deterministic (no hash, no date) and shows as it is in
every Jupyter front end, so no plotting library is needed.

A tensor with more than two dimensions is drawn one 2-D slice at a time (the
last two dimensions, at fixed leading indices), and a long axis is cut to a
window of at most ``MAX_SIDE`` cells around the index of interest: a
chapter's 28x28 image still gives a picture that fits on the screen.
"""
from html import escape

CELL = 34          # a cell's side, in pixels
FONT = "font-family='DejaVu Sans Mono, monospace'"
MAX_SIDE = 12      # at most this many cells along one axis of a grid

# light fills that stay readable under black text; storage cell k gets PALETTE[k % len]
PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
           "#f7b6d2", "#dbdb8d", "#9edae5", "#d9d9d9", "#bcbddc", "#fdd0a2")
UNUSED = "#f4f4f4"   # storage cells that the shown view never reads
SELECTED = "#d62728"  # outline of the selected cell and of the cell it reads


def number(value):
    """A short, stable text for one element: 3, -0.5, 1.23e+04, True."""
    if isinstance(value, bool):
        return "T" if value else "F"
    if float(value).is_integer() and abs(value) < 1e5:
        return str(int(value))
    return f"{value:.3g}"


def window(size, centre, limit=MAX_SIDE):
    """``range`` of at most ``limit`` positions of ``range(size)`` that contains ``centre``."""
    if size <= limit:
        return range(size)
    start = min(max(centre - limit // 2, 0), size - limit)
    return range(start, start + limit)


class GridSlice:
    """Which cells of a tensor of ``shape`` a 2-D grid shows, around ``index``.

    ``rows``/``cols`` are the shown positions along the last two dimensions
    (a 1-D tensor is one row, a 0-D tensor one cell); ``index_at(r, c)`` is
    the full index of the cell in row ``r``, column ``c`` of the grid;
    ``prefix`` names the slice, e.g. ``"[1, :, :]"`` for a 3-D tensor.
    """

    def __init__(self, shape, index):
        shape, index = tuple(shape), tuple(index)
        self.leading = index[:-2] if len(shape) > 2 else ()
        if len(shape) == 0:
            self.rows, self.cols = range(1), range(1)
        elif len(shape) == 1:
            self.rows, self.cols = range(1), window(shape[0], index[0])
        else:
            self.rows = window(shape[-2], index[-2])
            self.cols = window(shape[-1], index[-1])
        self.ndim = len(shape)
        self.cut_rows = self.ndim >= 2 and len(self.rows) < shape[-2]
        self.cut_cols = self.ndim >= 1 and len(self.cols) < shape[-1]

    def index_at(self, r, c):
        if self.ndim == 0:
            return ()
        if self.ndim == 1:
            return (c,)
        return self.leading + (r, c)

    @property
    def prefix(self):
        if self.ndim <= 2:
            return ""
        return "[" + ", ".join([str(i) for i in self.leading] + [":", ":"]) + "]"

    @property
    def width(self):
        return len(self.cols) * CELL

    @property
    def height(self):
        return len(self.rows) * CELL

    def cells(self):
        """``(row position in grid, column position in grid, full index)`` for every shown cell."""
        for gr, r in enumerate(self.rows):
            for gc, c in enumerate(self.cols):
                yield gr, gc, self.index_at(r, c)


def text(x, y, content, size=12, anchor="start", fill="#222", weight="normal", italic=False):
    style = " font-style='italic'" if italic else ""
    return (f"<text x='{x:g}' y='{y:g}' font-size='{size}' text-anchor='{anchor}' fill='{fill}' "
            f"font-weight='{weight}'{style} {FONT}>{escape(str(content))}</text>")


def cell(x, y, content, fill="white", stroke="#555", stroke_width=1, dashed=False, title=None,
         size=CELL):
    """One square with centred text; ``title`` becomes the hover tooltip where hovering exists."""
    dash = " stroke-dasharray='4 2'" if dashed else ""
    tip = f"<title>{escape(title)}</title>" if title else ""
    return (f"<g>{tip}<rect x='{x:g}' y='{y:g}' width='{size}' height='{size}' fill='{fill}' "
            f"stroke='{stroke}' stroke-width='{stroke_width}'{dash}/>"
            + text(x + size / 2, y + size / 2 + 4, content, size=11, anchor="middle") + "</g>")


def arrow(x1, y1, x2, y2, colour=SELECTED):
    return (f"<line x1='{x1:g}' y1='{y1:g}' x2='{x2:g}' y2='{y2:g}' stroke='{colour}' "
            f"stroke-width='2' marker-end='url(#head)'/>")


def document(width, height, body):
    """The SVG text of a picture ``width`` x ``height`` pixels made of ``body`` (a list of elements)."""
    head = (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:g}' height='{height:g}' "
            f"viewBox='0 0 {width:g} {height:g}'>"
            "<defs><marker id='head' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' "
            f"markerHeight='7' orient='auto'><path d='M0,0 L10,5 L0,10 z' fill='{SELECTED}'/>"
            "</marker></defs><rect width='100%' height='100%' fill='white'/>")
    return head + "".join(body) + "</svg>"
