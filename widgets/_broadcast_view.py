"""Broadcasting, drawn: how two shapes line up, which elements are reused, and
why the gradient of a reused element is a sum.

``a + b`` with ``a`` of shape (3, 1) and ``b`` of shape (4,):

1. the shapes are aligned from the right, and the shorter one is padded with
   1s on the left: (3, 1) and (1, 4);
2. each dimension of the result is the larger size, where the other is 1:
   (3, 4) -- ``learntorch.broadcast_shapes``;
3. a size-1 dimension is *stretched*: ``a[1, 0]`` is read by every element of
   row 1 of the result, ``b[2]`` by every element of column 2 -- exactly what a
   stride of 0 does (``a.expand(3, 4).stride()`` is ``(1, 0)``);
4. backward: an element read by four output elements gets four gradient
   contributions, and they add up -- ``a.grad = g.sum(1, keepdim=True)``.

Every number here comes from the engine: the result shape from
``broadcast_shapes`` (its error message when the shapes do not fit), the reuse
maps from ``broadcast_to`` of an index tensor, the gradients from the engine's
own backward run (``learntorch.autograd.graph.backward_steps``), which reports
the gradient both before and after the sum over broadcast dimensions.

    >>> from widgets import TensorExplorer
    >>> view = TensorExplorer.broadcast((3, 1), (4,))
    >>> view.aligned_shapes
    ((3, 1), (1, 4))
    >>> view.sum_code("a")
    'g.sum(1, keepdim=True)'
"""
import textwrap
from html import escape

import numpy as np

from ._base import Widget
from . import _svg_grid as svg

NAMES = ("a", "b")
SYMBOLS = {"add": "+", "mul": "*"}
A_REUSE = "#c6dbef"     # output cells that read the selected element of a
B_REUSE = "#fd8d3c"     # outline of output cells that read the selected element of b


def _as_input(value, scale, torch):
    """A float leaf tensor that requires grad: a shape gives 1, 2, 3, ... (times ``scale``)."""
    if isinstance(value, torch.Tensor):
        t = value.detach().clone()
        if not t.is_floating_point():
            t = t.to(torch.float32)
        return t.requires_grad_(True)
    shape = tuple(int(n) for n in value)
    count = int(np.prod(shape, dtype=np.int64))
    return (torch.arange(1, count + 1, dtype=torch.float32) * scale).reshape(shape).requires_grad_(True)


def _grad_text(grad):
    """The upstream gradient in a few words: "1, 2, 3, ..., 12" when it counts up (the default)."""
    flat = grad.reshape(-1)
    if flat.size > 3 and np.array_equal(flat, np.arange(1, flat.size + 1)):
        return f"1, 2, 3, ..., {flat.size} (the default), in the result's shape {tuple(grad.shape)}"
    if flat.size > 0 and np.all(flat == flat[0]):
        return f"all {svg.number(flat[0].item())}"
    return np.array2string(grad, precision=4, threshold=24, separator=", ").replace("\n", "")


def _index_text(index):
    """``[1, 0]`` for an index, nothing for the one element of a 0-d tensor."""
    return "[" + ", ".join(str(i) for i in index) + "]" if index else ""


class BroadcastView(Widget):
    """The broadcasting of ``a op b`` (``op`` is ``"add"`` or ``"mul"``) and its backward.

    ``a`` and ``b`` are tensors or shapes (a shape gives the values 1, 2, 3, ...
    for ``a`` and 10, 20, 30, ... for ``b``); ``grad`` is the upstream gradient
    of the result (default 1, 2, 3, ...).  State:

    * ``shapes``, ``aligned_shapes``, ``result_shape`` (None when the shapes do
      not broadcast, and then ``error`` holds the engine's message);
    * ``source(name)`` -- for every output element, the index into ``a``/``b``
      that it reads (an int array of the result shape, flat indices);
    * ``reuse(name)`` -- for every input element, how many output elements read it;
    * ``grad_before_sum[name]`` / ``grads[name]`` -- the gradient flowing into
      the broadcast (result shape) and what is left after summing (input shape);
    * ``index`` -- the selected output element; ``select_index(*index)``.

    >>> view = BroadcastView((2, 3), (3,))
    >>> view.grads["b"].tolist()
    [5.0, 7.0, 9.0]
    """

    def __init__(self, a, b, grad=None, op="add"):
        import learntorch as torch

        if op not in SYMBOLS:
            raise ValueError(f"op must be one of {sorted(SYMBOLS)}, got {op!r}")
        self.op = op
        self.inputs = {"a": _as_input(a, 1, torch), "b": _as_input(b, 10, torch)}
        self.shapes = tuple(tuple(self.inputs[n].shape) for n in NAMES)
        ndim = max(len(s) for s in self.shapes)
        self.aligned_shapes = tuple((1,) * (ndim - len(s)) + s for s in self.shapes)
        try:
            self.result_shape = tuple(torch.broadcast_shapes(*self.shapes))
            self.error = None
        except RuntimeError as exc:  # the engine's own explanation, shown instead of raised
            self.result_shape, self.error = None, str(exc)
            self.index = None
            return
        self._sources = {n: self._source_map(torch, n) for n in NAMES}
        self._run_backward(torch, grad)
        self.index = None
        self.select_index(*(0,) * len(self.result_shape))

    def _source_map(self, torch, name):
        """Broadcast a tensor of flat indices with the engine: what each output element reads."""
        shape = self.shapes[NAMES.index(name)]
        flat = torch.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
        return np.array(torch.broadcast_to(flat, self.result_shape).numpy())

    def _run_backward(self, torch, grad):
        from learntorch.autograd.graph import backward_steps

        a, b = self.inputs["a"], self.inputs["b"]
        if grad is None:
            count = int(np.prod(self.result_shape, dtype=np.int64))
            grad = torch.arange(1, count + 1, dtype=a.dtype).reshape(self.result_shape)
        self.grad = grad
        self.output = a + b if self.op == "add" else a * b
        steps = list(backward_steps(self.output, grad))
        # the first step is the add/mul node: its gradients before and after the broadcast sum
        op_step = steps[0]
        self.grad_before_sum = {n: op_step.grad_inputs[k].detach().numpy().copy()
                                for k, n in enumerate(NAMES)}
        self.grads = {n: self.inputs[n].grad.numpy().copy() for n in NAMES}

    # ---- state --------------------------------------------------------------------

    def source(self, name):
        """Flat index into input ``name`` read by every output element (result shape)."""
        return self._sources[name]

    def reuse(self, name):
        """How many output elements read each element of input ``name`` (input shape)."""
        shape = self.shapes[NAMES.index(name)]
        counts = np.bincount(self.source(name).reshape(-1), minlength=int(np.prod(shape, dtype=np.int64)))
        return counts.reshape(shape)

    def source_index(self, name, out_index=None):
        """The index of input ``name`` that output element ``out_index`` reads."""
        out_index = self.index if out_index is None else tuple(out_index)
        shape = self.shapes[NAMES.index(name)]
        return tuple(int(i) for i in np.unravel_index(self.source(name)[out_index], shape)) if shape else ()

    def dim_roles(self, name):
        """Per aligned dimension: 'padded' (a 1 added on the left), 'stretched' (size 1 read
        many times), 'kept', or 'mismatch' (the shapes do not fit there)."""
        mine = self.aligned_shapes[NAMES.index(name)]
        other = self.aligned_shapes[1 - NAMES.index(name)]
        pad = len(mine) - len(self.shapes[NAMES.index(name)])
        roles = []
        for dim, (n, m) in enumerate(zip(mine, other)):
            if dim < pad:
                roles.append("padded")
            elif n == m or m == 1:
                roles.append("kept")
            elif n == 1:
                roles.append("stretched")
            else:
                roles.append("mismatch")
        return roles

    def sum_dims(self, name):
        """``(leading, stretched)``: the gradient is summed over the ``leading`` (padded)
        dimensions, then over the ``stretched`` ones with keepdim (numbered in the input)."""
        roles = self.dim_roles(name)
        pad = roles.count("padded")
        leading = tuple(d for d, r in enumerate(roles) if r == "padded")
        stretched = tuple(d - pad for d, r in enumerate(roles) if r == "stretched"
                          and self.result_shape[d] != 1)
        return leading, stretched

    def sum_code(self, name):
        """The sum that turns the incoming gradient into ``name.grad``, as code."""
        local = "g" if self.op == "add" else f"(g * {NAMES[1 - NAMES.index(name)]})"
        leading, stretched = self.sum_dims(name)
        code = local
        if leading:
            code += f".sum({leading[0] if len(leading) == 1 else leading})"
        if stretched:
            code += f".sum({stretched[0] if len(stretched) == 1 else stretched}, keepdim=True)"
        return code if code != local else f"{local} (nothing to sum)"

    def select_index(self, *index):
        """Select output element ``index`` (an IndexError names what fits)."""
        if self.result_shape is None:
            raise RuntimeError(f"the shapes do not broadcast, so there is no output to index: {self.error}")
        index = tuple(int(i) for i in index)
        if len(index) != len(self.result_shape) or not all(0 <= i < n for i, n in zip(index, self.result_shape)):
            raise IndexError(f"index {index} does not fit the result shape {self.result_shape}; "
                             f"use one number per dimension, each in 0..size-1")
        self.index = index
        self._refresh()

    def contributions(self, name):
        """``(output indices, values)`` whose sum is ``name.grad`` at the element the selected output reads."""
        flat = self.source(name)[self.index]
        where = [tuple(int(i) for i in k) for k in np.argwhere(self.source(name) == flat)]
        values = [self.grad_before_sum[name][k].item() for k in where]
        return where, values

    def describe(self):
        """The text panel: alignment, the selected element's reads, and the gradient sums."""
        lines = []
        for name, shape, aligned in zip(NAMES, self.shapes, self.aligned_shapes):
            lines.append(f"{name}: shape {shape} -> aligned as {aligned}")
        if self.error:
            lines.append(f"broadcast_shapes{self.shapes} fails:")
            lines.append(self.error)
            return "\n".join(lines)
        lines.append(f"result: broadcast_shapes{self.shapes} = {self.result_shape}")
        grad = self.grad.detach().numpy()
        lines.append(f"g = ∂loss/∂out, the gradient that arrives from above (grad=): "
                     f"{_grad_text(grad)}; g{_index_text(self.index)} = {svg.number(grad[self.index].item())}")
        ia, ib = self.source_index("a"), self.source_index("b")
        va, vb = (self.inputs[n].detach().numpy()[i].item() for n, i in (("a", ia), ("b", ib)))
        out = self.output.detach().numpy()[self.index].item()
        sym = SYMBOLS[self.op]
        lines.append(f"out{_index_text(self.index)} = a{_index_text(ia)} {sym} b{_index_text(ib)} "
                     f"= {svg.number(va)} {sym} {svg.number(vb)} = {svg.number(out)}")
        lines.append(f"a{_index_text(ia)} is read by {self.reuse('a')[ia]} output elements, "
                     f"b{_index_text(ib)} by {self.reuse('b')[ib]}")
        for name, idx in (("a", ia), ("b", ib)):
            where, values = self.contributions(name)
            local = "g" if self.op == "add" else f"(g*{NAMES[1 - NAMES.index(name)]})"
            terms = " + ".join(f"{local}{_index_text(k)}" for k in where[:6])
            numbers = " + ".join(svg.number(v) for v in values[:6])
            if self.op == "mul":  # each term as g times the other input's element: all on screen
                other = NAMES[1 - NAMES.index(name)]
                read = self.inputs[other].detach().numpy()
                numbers = " + ".join(f"{svg.number(grad[k].item())}·"
                                     f"{svg.number(read[self.source_index(other, k)].item())}"
                                     for k in where[:6])
            more = " + ..." if len(where) > 6 else ""
            total = svg.number(self.grads[name][idx].item())
            sums = f"{terms}{more} = {numbers}{more} = {total}" if len(where) > 1 else f"{terms} = {total}"
            lines.append(f"{name}.grad = {self.sum_code(name)}: {name}.grad{_index_text(idx)} = {sums}")
        return "\n".join(lines)

    def __repr__(self):
        sym = SYMBOLS[self.op]
        if self.error:
            return f"BroadcastView(a {self.shapes[0]} {sym} b {self.shapes[1]}: shapes do not broadcast)"
        return (f"BroadcastView(a {self.shapes[0]} {sym} b {self.shapes[1]} -> {self.result_shape}, "
                f"index {self.index})")

    # ---- picture ------------------------------------------------------------------

    def _alignment_table(self, x0, y0):
        """Rows a, b, result; one column per aligned dimension; padded 1s grey, stretched 1s
        yellow, mismatches red."""
        body, w = [], 54
        fills = {"padded": "#eeeeee", "stretched": "#fff3b0", "kept": "white", "mismatch": "#ff9896"}
        rows = [(n, self.aligned_shapes[k], self.dim_roles(n)) for k, n in enumerate(NAMES)]
        if self.result_shape is not None:
            rows.append(("result", self.result_shape, ["kept"] * len(self.result_shape)))
        for r, (label, shape, roles) in enumerate(rows):
            y = y0 + r * 26
            body.append(svg.text(x0, y + 17, label, size=12, weight="bold"))
            for d, (n, role) in enumerate(zip(shape, roles)):
                x = x0 + 60 + d * w
                dash = " stroke-dasharray='3 2'" if role == "padded" else ""
                body.append(f"<rect x='{x}' y='{y}' width='{w - 4}' height='22' fill='{fills[role]}' "
                            f"stroke='#777'{dash}/>")
                # stretched to the other input's size (also shown when another dimension fails)
                other = self.aligned_shapes[1 - r][d] if r < 2 else n
                label_text = f"{n}" if role != "stretched" else f"1→{other}"
                body.append(svg.text(x + (w - 4) / 2, y + 16, label_text, size=11, anchor="middle",
                                     italic=role == "padded", fill="#888" if role == "padded" else "#222"))
        legend = "grey: a padded 1; yellow: a size-1 dimension stretched (stride 0); red: sizes differ, neither is 1"
        body.append(svg.text(x0, y0 + len(rows) * 26 + 14, legend, size=10, fill="#555"))
        return body, 60 + len(self.aligned_shapes[0]) * w, len(rows) * 26 + 22

    def _grid(self, x, y, title, values, index, fill_of, outline_of):
        """One grid with a title; returns (elements, width)."""
        grid = svg.GridSlice(values.shape, index)
        # a 3-d or larger tensor shows one 2-d slice: name it
        label = title + grid.prefix if title.isidentifier() else f"{title}  {grid.prefix}".rstrip()
        body = [svg.text(x, y - 8, label, size=12, weight="bold")]
        for gr, gc, idx in grid.cells():
            stroke, width, dashed = outline_of(idx)
            body.append(svg.cell(x + gc * svg.CELL, y + gr * svg.CELL, svg.number(values[idx].item()),
                                 fill=fill_of(idx), stroke=stroke, stroke_width=width, dashed=dashed,
                                 title=f"{title}{_index_text(idx)}"))
        if grid.cut_cols or grid.cut_rows:
            body.append(svg.text(x + grid.width + 2, y + grid.height, "...", size=11))
        return body, max(grid.width, 8 * len(title)), max(grid.height, svg.CELL)

    def static_svg(self):
        """Alignment table, then a, b and the result, then the gradient before and after the sum."""
        sym = SYMBOLS[self.op]
        body = [svg.text(20, 20, f"broadcasting a {self.shapes[0]} {sym} b {self.shapes[1]}",
                         size=13, weight="bold")]
        table, table_w, table_h = self._alignment_table(20, 32)
        body += table
        y = 32 + table_h + 12
        if self.error:
            lines = textwrap.wrap(self.error, 90)
            for k, line in enumerate(lines):
                body.append(svg.text(20, y + 14 + 16 * k, line, size=11, fill=svg.SELECTED))
            return svg.document(max(table_w + 40, 760), y + 16 * len(lines) + 20, body)

        ia, ib = self.source_index("a"), self.source_index("b")
        src_a, src_b = self.source("a"), self.source("b")
        flat_a, flat_b = src_a[self.index], src_b[self.index]
        plain = ("#555", 1, False)

        def input_fill(name, selected):
            return lambda idx: svg.PALETTE[0] if idx == selected else "white"

        def marks(selected):
            return lambda idx: (svg.SELECTED, 3, False) if idx == selected else plain

        def out_fill(idx):
            return A_REUSE if src_a[idx] == flat_a else "white"

        def out_outline(idx):
            if idx == self.index:
                return svg.SELECTED, 3, False
            return (B_REUSE, 2, True) if src_b[idx] == flat_b else plain

        y += 24
        x, rows_h = 20, 0
        values = {n: self.inputs[n].detach().numpy() for n in NAMES}
        panels = [("a", values["a"], ia, input_fill("a", ia), marks(ia)),
                  ("b", values["b"], ib, input_fill("b", ib), marks(ib)),
                  (f"out = a {sym} b", self.output.detach().numpy(), self.index, out_fill, out_outline),
                  # the gradient backward starts from: every sum below is made of these numbers
                  ("g = ∂loss/∂out", self.grad.detach().numpy(), self.index, lambda idx: "white",
                   marks(self.index))]
        for title, array, index, fill, outline in panels:
            elements, w, h = self._grid(x, y, title, array, index, fill, outline)
            body += elements
            x, rows_h = x + w + 40, max(rows_h, h)
        width = x
        note = "blue: output elements that read the selected a element; dashed orange: those that read the selected b element"
        body.append(svg.text(20, y + rows_h + 16, note, size=10, fill="#555"))

        y += rows_h + 50
        for name, idx, flat, src in (("a", ia, flat_a, src_a), ("b", ib, flat_b, src_b)):
            x = 20
            local = "g" if self.op == "add" else f"g*{NAMES[1 - NAMES.index(name)]}"
            before = self.grad_before_sum[name]
            elements, w, h = self._grid(
                x, y, f"into {name}: {local}", before, self.index,
                lambda k, src=src, flat=flat: A_REUSE if src[k] == flat else "white",
                lambda k: (svg.SELECTED, 3, False) if k == self.index else plain)
            body += elements
            x += w + 30
            body.append(svg.arrow(x, y + h / 2, x + 60, y + h / 2))
            body.append(svg.text(x + 30, y + h / 2 - 6, "sum", size=10, anchor="middle"))
            x += 80
            elements, w2, _ = self._grid(x, y, f"{name}.grad = {self.sum_code(name)}", self.grads[name],
                                         idx, input_fill(name, idx), marks(idx))
            body += elements
            width = max(width, x + w2 + 20)
            y += h + 44
        return svg.document(max(width, table_w + 40, 760), y, body)

    # ---- live view ----------------------------------------------------------------

    _picture = None

    def _build_view(self):
        import ipywidgets as w

        self._picture, self._text = w.HTML(), w.HTML()
        sliders = []
        for dim, n in enumerate(self.result_shape or ()):
            slider = w.IntSlider(value=self.index[dim], min=0, max=max(n - 1, 0),
                                 description=f"out dim {dim}", disabled=n <= 1,
                                 tooltip=f"output index along dimension {dim} (size {n})")
            slider.observe(self._on_slider, names="value")
            sliders.append(slider)
        self._sliders = sliders
        self._refresh()
        return w.VBox([*sliders, self._picture, self._text])

    def _on_slider(self, change):
        self.select_index(*(s.value for s in self._sliders))

    def _refresh(self):
        if self._picture is None:
            return
        self._picture.value = self.static_svg()
        self._text.value = "<pre>" + escape(self.describe()) + "</pre>"
