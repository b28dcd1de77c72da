"""TensorExplorer: shape, strides and storage -- which memory cell each index reads.

A tensor is a flat run of numbers in memory (its *storage*) plus three facts that
say how to read it as a grid: ``shape``, ``stride()`` (how many storage cells one
step along each dimension skips) and ``storage_offset()`` (where element 0 is).
Element ``(i, j)`` lives at::

    storage_offset + i * stride[0] + j * stride[1]

A *view* (``t.T``, ``t[:, 1:]``, ``t[::2]``, ``t.expand(...)``) is the same
storage with other numbers in those three facts: nothing is copied.  A stride of
0 (``expand``) makes many indices read the same cell.

    >>> import learntorch as torch
    >>> from widgets import TensorExplorer
    >>> explorer = TensorExplorer(torch.arange(12.).reshape(3, 4))
    >>> explorer.select_view("t.T")
    >>> explorer.select_index(1, 2)
    >>> explorer.storage_position()
    9
    >>> explorer.formula()
    'index (1, 2) -> storage[offset 0 + 1·1 + 2·4 = 9]'

``TensorExplorer.broadcast(a, b)`` opens the broadcasting view (see
``widgets/_broadcast_view.py``).  Everything here is read from the engine's public
API -- ``shape``, ``stride()``, ``storage_offset()``, ``untyped_storage()`` -- never
recomputed from how a view was made.
"""
from html import escape

import numpy as np

from ._base import Widget
from . import _svg_grid as svg
from ._broadcast_view import BroadcastView


def preset_views(t):
    """The classic views of ``t``, named by the code that makes them.

    >>> import learntorch as torch
    >>> list(preset_views(torch.zeros(3, 4)))
    ['t', 't.T', 't[:, 1:]', 't[::2]', 't[0].expand(3, 4)']
    """
    views = {"t": t}
    shape = tuple(t.shape)
    if len(shape) == 0:
        return views
    if len(shape) == 2:
        views["t.T"] = t.T
    elif len(shape) > 2:
        views[f"t.transpose(0, {len(shape) - 1})"] = t.transpose(0, len(shape) - 1)
    if shape[-1] > 1:
        colons = ":, " * (len(shape) - 1)
        views[f"t[{colons}1:]"] = t[(slice(None),) * (len(shape) - 1) + (slice(1, None),)]
    if shape[0] > 2:
        views["t[::2]"] = t[::2]
    # the first row repeated: stride 0 along dim 0, every row reads the same storage cells
    rows = shape[0] if shape[0] > 1 else 3
    target = (rows,) + shape[1:]
    views[f"t[0].expand({', '.join(str(n) for n in target)})"] = t[0].expand(*target)
    return views


class TensorExplorer(Widget):
    """Shape, strides and storage of a tensor and of views of it.

    * ``views`` -- name -> tensor; the presets of ``preset_views(t)`` unless
      ``views=`` is given (``t`` itself is always the first);
    * ``selected`` / ``current`` -- the name and the tensor shown now;
    * ``index`` -- the selected element (a tuple; ``None`` for an empty view);
    * ``storage_position()`` / ``formula()`` -- where that element lives;
    * ``positions()`` -- the storage position of every element (an int array);
    * ``readers(position)`` -- every index that reads one storage cell.

    >>> import learntorch as torch
    >>> t = torch.arange(6.).reshape(2, 3)
    >>> explorer = TensorExplorer(t, views={"t[:, ::2]": t[:, ::2]})
    >>> explorer
    TensorExplorer(view 't', shape (2, 3), stride (3, 1), offset 0, index (0, 0) -> storage[0])
    """

    def __init__(self, tensor, views=None, index=None):
        self.tensor = tensor
        self.views = preset_views(tensor) if views is None else {"t": tensor, **dict(views)}
        self.selected = "t"
        self.index = None
        self.select_index(*(index if index is not None else (0,) * tensor.dim()))

    # ---- state --------------------------------------------------------------------

    @property
    def current(self):
        """The tensor of the selected view."""
        return self.views[self.selected]

    def select_view(self, name):
        """Show the view called ``name``; the index is kept where it still fits.

        >>> import learntorch as torch
        >>> explorer = TensorExplorer(torch.zeros(2, 3))
        >>> explorer.select_view("t.T"); explorer.current.shape
        learntorch.Size([3, 2])
        """
        if name not in self.views:
            raise KeyError(f"no view named {name!r}; the views are {list(self.views)}")
        self.selected = name
        shape = tuple(self.current.shape)
        old = self.index or ()
        if 0 in shape:
            self.index = None
        else:
            self.index = tuple(min(old[k] if k < len(old) else 0, n - 1) for k, n in enumerate(shape))
        self._refresh()

    def select_index(self, *index):
        """Select element ``index`` of the current view (an IndexError names what fits).

        >>> import learntorch as torch
        >>> explorer = TensorExplorer(torch.zeros(2, 3))
        >>> explorer.select_index(1, 2); explorer.index
        (1, 2)
        """
        shape = tuple(self.current.shape)
        if 0 in shape:
            self.index = None
            self._refresh()
            return
        index = tuple(int(i) for i in index)
        if len(index) != len(shape):
            raise IndexError(f"index {index} has {len(index)} numbers but the view "
                             f"{self.selected!r} has {len(shape)} dimensions (shape {shape})")
        for dim, (i, n) in enumerate(zip(index, shape)):
            if not 0 <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n} "
                                 f"(view {self.selected!r}, shape {shape}); use 0..{n - 1}")
        self.index = index
        self._refresh()

    def storage_position(self, index=None):
        """``storage_offset() + sum(index[k] * stride()[k])``: the storage cell element ``index`` reads."""
        t = self.current
        index = self.index if index is None else tuple(index)
        return t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))

    def positions(self):
        """The storage position of every element of the current view (an int array of its shape)."""
        t = self.current
        shape = tuple(t.shape)
        position = np.full(shape, t.storage_offset(), dtype=np.int64)
        for dim, (n, s) in enumerate(zip(shape, t.stride())):
            steps = np.arange(n, dtype=np.int64) * s
            position = position + steps.reshape((n,) + (1,) * (len(shape) - dim - 1))
        return position

    def readers(self, position=None):
        """Every index of the current view that reads storage cell ``position`` (default: the selected one)."""
        if position is None:
            if self.index is None:
                return []
            position = self.storage_position()
        return [tuple(int(i) for i in k) for k in np.argwhere(self.positions() == position)]

    def storage_values(self):
        """The whole storage that the current view reads (a 1-D numpy array, one entry per element)."""
        # torch's storage is untyped bytes: read them back with the tensor's element type
        # (works on learntorch and torch tensors alike)
        raw = np.asarray(self.current.untyped_storage().tolist(), dtype=np.uint8)
        return raw.view(self.current.detach().numpy().dtype)

    def formula(self):
        """The address arithmetic for the selected index, in words."""
        if self.index is None:
            return f"the view {self.selected!r} is empty: no element to read"
        t = self.current
        terms = "".join(f" + {i}·{s}" for i, s in zip(self.index, t.stride()))
        index = "(" + ", ".join(str(i) for i in self.index) + ")"
        return (f"index {index} -> storage[offset {t.storage_offset()}{terms} "
                f"= {self.storage_position()}]")

    def describe(self):
        """The text panel: the view's facts, the formula, the value read, and who else reads it."""
        t = self.current
        contiguous = "contiguous" if t.is_contiguous() else "not contiguous"
        lines = [f"{self.selected}: shape {tuple(t.shape)}, stride {t.stride()}, "
                 f"storage_offset {t.storage_offset()} ({contiguous})", self.formula()]
        if self.index is not None:
            position = self.storage_position()
            value = svg.number(self.storage_values()[position].item())
            lines[-1] += f" = {value}"
            readers = self.readers(position)
            if len(readers) > 1:
                zeros = [d for d, s in enumerate(t.stride()) if s == 0]
                shown = ", ".join(str(r) for r in readers[:6]) + (", ..." if len(readers) > 6 else "")
                lines.append(f"storage[{position}] is read by {len(readers)} indices: {shown} "
                             f"(stride 0 in dim {', '.join(map(str, zeros))})")
        return "\n".join(lines)

    def __repr__(self):
        t = self.current
        where = "empty" if self.index is None else f"index {self.index} -> storage[{self.storage_position()}]"
        return (f"TensorExplorer(view {self.selected!r}, shape {tuple(t.shape)}, "
                f"stride {t.stride()}, offset {t.storage_offset()}, {where})")

    @staticmethod
    def broadcast(a, b, grad=None, op="add"):
        """The broadcasting view of ``a op b`` (tensors or shapes); see ``BroadcastView``.

        >>> view = TensorExplorer.broadcast((3, 1), (4,))
        >>> view.result_shape
        (3, 4)
        """
        return BroadcastView(a, b, grad=grad, op=op)

    # ---- picture ------------------------------------------------------------------

    def static_svg(self):
        """The logical grid over the storage row: colour = storage cell; red = the selected element."""
        t = self.current
        values = self.storage_values()
        shape = tuple(t.shape)
        index = self.index if self.index is not None else (0,) * len(shape)
        grid = svg.GridSlice(shape, index)
        positions = self.positions()
        selected_pos = self.storage_position() if self.index is not None else None
        body, x0, y0 = [], 20, 48
        body.append(svg.text(x0, 20, f"{self.selected}{grid.prefix}: shape {shape}, stride "
                                     f"{t.stride()}, offset {t.storage_offset()}", size=13,
                             weight="bold"))
        grid_cells = {}
        if 0 not in shape:
            for gr, gc, idx in grid.cells():
                pos = int(positions[idx])
                x, y = x0 + gc * svg.CELL, y0 + gr * svg.CELL
                grid_cells[idx] = (x, y)
                is_selected = idx == self.index
                shares = selected_pos is not None and pos == selected_pos and not is_selected
                body.append(svg.cell(
                    x, y, svg.number(values[pos].item()), fill=svg.PALETTE[pos % len(svg.PALETTE)],
                    stroke=svg.SELECTED if (is_selected or shares) else "#555",
                    stroke_width=3 if is_selected else (2 if shares else 1), dashed=shares,
                    title=f"index {idx} -> storage[{pos}]"))
            if grid.cut_cols:
                body.append(svg.text(x0 + grid.width + 4, y0 + 20, "..."))
            if grid.cut_rows:
                body.append(svg.text(x0, y0 + grid.height + 12, "..."))
        else:
            body.append(svg.text(x0, y0 + 20, "(empty view: no elements)"))

        # the storage row(s) underneath, 24 cells to a row, cut to the cells near the view
        per_row = 24
        read = sorted(set(positions.reshape(-1).tolist()))
        first, last = (read[0], read[-1]) if read else (0, min(len(values), per_row) - 1)
        span = 2 * per_row
        if last - first + 1 > span:  # too long: a window around the selected cell
            centre = selected_pos if selected_pos is not None else first
            first = max(0, min(centre - span // 2, len(values) - span))
            last = first + span - 1
        first, last = max(0, first - 1), min(len(values) - 1, last + 1)
        sy = y0 + max(grid.height, svg.CELL) + 44
        body.append(svg.text(x0, sy - 10, f"storage ({len(values)} elements; cells "
                                          f"{first}..{last} shown)", size=12))
        read_set = set(read)
        for k, pos in enumerate(range(first, last + 1)):
            x = x0 + (k % per_row) * svg.CELL
            y = sy + (k // per_row) * (svg.CELL + 18)
            fill = svg.PALETTE[pos % len(svg.PALETTE)] if pos in read_set else svg.UNUSED
            body.append(svg.cell(x, y, svg.number(values[pos].item()), fill=fill,
                                 stroke=svg.SELECTED if pos == selected_pos else "#555",
                                 stroke_width=3 if pos == selected_pos else 1,
                                 title=f"storage[{pos}]"))
            body.append(svg.text(x + svg.CELL / 2, y + svg.CELL + 12, pos, size=9, anchor="middle",
                                 fill="#777"))
            if pos == selected_pos and self.index in grid_cells:
                gx, gy = grid_cells[self.index]
                body.append(svg.arrow(gx + svg.CELL / 2, gy + svg.CELL, x + svg.CELL / 2, y - 2))
        rows = (last - first) // per_row + 1
        width = x0 * 2 + max(grid.width + 30, min(last - first + 1, per_row) * svg.CELL, 520)
        height = sy + rows * (svg.CELL + 18) + 10
        return svg.document(width, height, body)

    # ---- live view ----------------------------------------------------------------

    def _build_view(self):
        import ipywidgets as w

        self._picture = w.HTML()
        self._text = w.HTML()
        self._choose = w.Dropdown(options=list(self.views), value=self.selected, description="view",
                                  tooltip="which view of the tensor to show")
        self._sliders = w.VBox()
        self._choose.observe(lambda change: self.select_view(change["new"]), names="value")
        self._refresh()
        return w.VBox([self._choose, self._sliders, self._picture, self._text])

    def _make_sliders(self):
        import ipywidgets as w

        shape = tuple(self.current.shape)
        sliders = []
        for dim, n in enumerate(shape):
            slider = w.IntSlider(value=self.index[dim] if self.index else 0, min=0,
                                 max=max(n - 1, 0), description=f"index dim {dim}",
                                 disabled=n <= 1, continuous_update=True,
                                 tooltip=f"position along dimension {dim} (size {n})")
            slider.observe(self._on_slider, names="value")
            sliders.append(slider)
        self._sliders.children = tuple(sliders)
        self._slider_shape = shape

    def _on_slider(self, change):
        if self._updating:
            return
        self.select_index(*(s.value for s in self._sliders.children))

    _updating = False
    _picture = None

    def _refresh(self):
        """Bring the live view (if built) in line with the state: sliders, picture, text."""
        if self._picture is None:
            return
        self._updating = True
        try:
            if self._choose.value != self.selected:
                self._choose.value = self.selected
            if getattr(self, "_slider_shape", None) != tuple(self.current.shape):
                self._make_sliders()
            for slider, i in zip(self._sliders.children, self.index or ()):
                slider.value = i
        finally:
            self._updating = False
        self._picture.value = self.static_svg()
        self._text.value = "<pre>" + escape(self.describe()) + "</pre>"
