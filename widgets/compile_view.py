"""``show_compiled(compiled)``: what ``learntorch.compile`` made of a function, before and after fusion.

The picture is the captured graph (``learntorch.fx``): inputs as blue ellipses, each op
a box named after its ``Function`` with the shape it makes, the output in green.
*Before fusion* every op is its own pass over memory.  *After fusion* the ops that became
one generated kernel sit in one coloured frame named ``kernel_0``, ``kernel_1``, ...;
ops left to the engine (matmul, conv) stay plain boxes.  The selected kernel's generated
loop is drawn beside its frame (a note joined to it by a dotted line) and shown in full
next to the picture, so you can read which line of code each op became.

    >>> import learntorch as torch
    >>> import learntorch.nn.functional as F
    >>> from widgets import show_compiled
    >>> f = torch.compile(lambda x, W, b: F.gelu(x @ W + b) * 0.5)
    >>> _ = f(torch.randn(4, 3), torch.randn(3, 5), torch.randn(5))
    >>> show_compiled(f)
    CompiledView(after fusion: 4 ops -> 1 kernel + 1 engine op; kernel_0 = add, gelu, mul)

The state object reads only the compiled function's public introspection
(``compiled.programs``: ``.fused_graph``, ``.kernels``, ``.code``); tests drive it with
``set_mode``, ``select`` and ``next_kernel`` and read ``.dot``, ``.source`` and
``traffic()``.
"""
from html import escape

from ._base import Widget
from ._graphviz import render
from ._svg_fit import fit_width

MODES = ("before", "after")
# one fill per kernel frame, repeated when there are more kernels than colours
FRAME_COLOURS = ("#fde7c8", "#d9ecd0", "#dcd8f0", "#f7d6d6", "#d4e8f2")


def show_compiled(compiled, program=-1, *, mode="after", kernel=0):
    """The graph ``compiled`` captured, before or after fusion, as a ``CompiledView``.

    * ``compiled`` -- what ``learntorch.compile(fn)`` returned, called at least once;
    * ``program`` -- which compiled path (``compiled.programs[program]``; the latest by
      default: after a recompilation there are several);
    * ``mode`` -- ``"before"`` (every op its own pass) or ``"after"`` (fused kernels framed);
    * ``kernel`` -- which kernel's source is shown beside its frame.

    >>> import learntorch as torch
    >>> f = torch.compile(lambda x: ((x * 2).exp() + 1).sum())
    >>> _ = f(torch.randn(8))
    >>> view = show_compiled(f, mode="before")
    >>> view
    CompiledView(before fusion: 4 ops, each its own pass over memory)
    >>> view.set_mode("after"); view
    CompiledView(after fusion: 4 ops -> 1 kernel; kernel_0 = mul, exp, add, sum_all)
    """
    return CompiledView(compiled, program, mode=mode, kernel=kernel)


class CompiledView(Widget):
    """State of the picture: which program, which mode, which kernel is selected.

    ``.dot`` (DOT text, deterministic), ``.svg()``, ``.source`` (the selected kernel's
    generated source), ``.code`` (the Python that calls ops and kernels),
    ``traffic()`` (bytes read and written, eager vs fused), ``set_mode``, ``select``,
    ``next_kernel``, ``reset``.

    >>> import learntorch as torch
    >>> f = torch.compile(lambda x, y: ((x * y).relu() @ y.t() + 1).tanh())
    >>> _ = f(torch.randn(3, 4), torch.randn(3, 4))
    >>> view = CompiledView(f)
    >>> [k.name for k in view.kernels], view.groups()
    (['kernel_0', 'kernel_1'], {'mul': 0, 'relu': 0, 'add': 1, 'tanh': 1})
    >>> view.next_kernel(); view.selected
    1
    >>> view.traffic()["fused"] < view.traffic()["eager"]
    True
    """

    def __init__(self, compiled, program=-1, *, mode="after", kernel=0):
        programs = getattr(compiled, "programs", None)
        if programs is None:
            raise TypeError(f"show_compiled expects what learntorch.compile(...) returned, got "
                            f"{type(compiled).__name__}")
        if not programs:
            raise ValueError("nothing compiled yet: call the compiled function once (the "
                             "first call captures and compiles), then show it")
        self.compiled = compiled
        self.program = programs[program]
        self._initial = (mode, kernel)
        self.reset()

    # --- state ---------------------------------------------------------------
    def reset(self):
        mode, kernel = self._initial
        self.mode = None
        self.set_mode(mode)
        self.select(kernel if self.kernels else None)

    @property
    def kernels(self):
        return self.program.kernels

    @property
    def graph(self):
        return self.program.fused_graph

    def set_mode(self, mode):
        if mode not in MODES:
            raise ValueError(f"mode must be 'before' or 'after', got {mode!r}")
        self.mode = mode
        self._redraw()

    def select(self, kernel):
        """Show kernel number ``kernel``'s source (None: no kernel selected)."""
        if kernel is not None and not 0 <= kernel < len(self.kernels):
            raise IndexError(f"kernel {kernel} does not exist: this program has "
                             f"{len(self.kernels)} kernel(s)")
        self.selected = kernel
        self._redraw()

    def next_kernel(self):
        """Select the next kernel (after the last: the first again)."""
        if self.kernels:
            self.select(0 if self.selected is None else (self.selected + 1) % len(self.kernels))

    @property
    def source(self):
        """The selected kernel's generated source ("" when none is selected)."""
        return "" if self.selected is None else self.kernels[self.selected].text

    @property
    def code(self):
        return self.program.code

    def groups(self):
        """``{node name: kernel index}`` for every op inside a kernel."""
        return {n.name: k for k, kernel in enumerate(self.kernels)
                for n in kernel.group.nodes}

    def ops(self):
        return [n for n in self.graph.nodes if n.op == "call_function"]

    def traffic(self):
        """Bytes of tensors read and written: ``{"eager": ..., "fused": ...}``.

        Eager: every op reads its tensor inputs and writes its result.  Fused: a kernel
        reads its inputs and writes only what is used outside it; an engine op as eager.
        """
        in_kernel = self.groups()
        eager = sum(_op_bytes(n) for n in self.ops())
        fused = sum(_op_bytes(n) for n in self.ops() if n.name not in in_kernel)
        for kernel in self.kernels:
            inputs = [op.node for op in kernel.source.inputs]
            fused += sum(_bytes(n) for n in inputs) + sum(_bytes(n) for n in kernel.outputs)
        return {"eager": eager, "fused": fused}

    # --- the picture -----------------------------------------------------------
    @property
    def dot(self):
        in_kernel = self.groups() if self.mode == "after" else {}
        lines = ["digraph compiled {", "  rankdir=LR;",
                 '  node [fontname="Helvetica", fontsize=11];',
                 '  edge [color="#555555"];']
        frames = {}
        for node in self.graph.nodes:
            statement = _node_statement(node)
            if statement is None:
                continue
            k = in_kernel.get(node.name)
            if k is None:
                lines.append("  " + statement)
            else:
                frames.setdefault(k, []).append(statement)
        for k, statements in sorted(frames.items()):
            kernel = self.kernels[k]
            style = "bold" if k == self.selected else "rounded"
            lines.append(f"  subgraph cluster_{k} {{")
            lines.append(f'    label="{kernel.name}"; style="filled,{style}"; '
                         f'fillcolor="{FRAME_COLOURS[k % len(FRAME_COLOURS)]}";')
            lines += ["    " + s for s in statements]
            lines.append("  }")
        for node in self.graph.nodes:
            for source in _tensor_inputs(node):
                lines.append(f"  {_id(source)} -> {_id(node)};")
        if self.mode == "after" and self.selected is not None and self.selected in frames:
            kernel = self.kernels[self.selected]
            body = "\\l".join(_dot_text(line) for line in _loop_lines(kernel)) + "\\l"
            lines.append(f'  source [shape=note, fontname="Courier", fontsize=9, '
                         f'style=filled, fillcolor="#fafafa", label="{body}"];')
            lines.append(f"  {_id(kernel.group.nodes[-1])} -> source "
                         f"[style=dotted, arrowhead=none];")
        lines.append("}")
        return "\n".join(lines)

    def svg(self):
        return render(self.dot)[0]

    def static_svg(self):
        return self.svg()

    def __repr__(self):
        ops = len(self.ops())
        if self.mode == "before":
            return f"CompiledView(before fusion: {ops} ops, each its own pass over memory)"
        in_kernel = self.groups()
        engine = ops - len(in_kernel)
        parts = [f"{len(self.kernels)} kernel{'' if len(self.kernels) == 1 else 's'}"]
        if engine:
            parts.append(f"{engine} engine op{'' if engine == 1 else 's'}")
        text = f"CompiledView(after fusion: {ops} ops -> {' + '.join(parts)}"
        if self.selected is not None:
            kernel = self.kernels[self.selected]
            text += f"; {kernel.name} = {', '.join(n.name for n in kernel.group.nodes)}"
        return text + ")"

    # --- view ----------------------------------------------------------------
    def _build_view(self):
        import ipywidgets as w

        mode = w.ToggleButtons(options=[("before fusion", "before"), ("after fusion", "after")],
                               value=self.mode, description="graph")
        kernel = w.Dropdown(options=[("none", -1)] + [
            (f"{k.name}: {', '.join(n.name for n in k.group.nodes)}", i)
            for i, k in enumerate(self.kernels)],
            value=-1 if self.selected is None else self.selected, description="kernel")
        self._picture = w.HTML(self._picture_html(), layout=w.Layout(width="60%"))
        self._source = w.HTML(self._source_html(), layout=w.Layout(width="40%"))
        self._info = w.HTML(self._info_html())
        mode.observe(lambda change: self.set_mode(change["new"]), names="value")
        kernel.observe(lambda change: self.select(None if change["new"] < 0 else change["new"]),
                       names="value")
        self._controls = {"mode": mode, "kernel": kernel}
        return w.VBox([w.HBox([mode, kernel]), self._info,
                       w.HBox([self._picture, self._source])])

    def _picture_html(self):
        return fit_width(self.svg())

    def _source_html(self):
        if self.selected is None:
            return "<p>Choose a kernel to read its generated source.</p>"
        return ("<pre style='font-size:11px;overflow:auto;max-height:480px'>"
                f"{escape(self.source)}</pre>")

    def _info_html(self):
        t = self.traffic()
        return (f"<p>Memory traffic: {_kb(t['eager'])} eager, {_kb(t['fused'])} after fusion. "
                f"<code>{escape(repr(self))}</code></p>")

    def _redraw(self):
        if self._view is not None:
            self._picture.value = self._picture_html()
            self._source.value = self._source_html()
            self._info.value = self._info_html()


# ---------------------------------------------------------------- small helpers
def _id(node):
    return f"n_{node.name}"


def _tensor_inputs(node):
    if node.op not in ("call_function", "output"):
        return []
    found = []
    for a in node.args:
        for item in (a if isinstance(a, (tuple, list)) else (a,)):
            if hasattr(item, "op") and item.op in ("placeholder", "call_function", "get_attr"):
                found.append(item)
    return found


def _shape(node):
    meta = node.tensor_meta
    return f"[{', '.join(map(str, meta.shape))}]" if hasattr(meta, "shape") else ""


def _node_statement(node):
    if node.op in ("placeholder", "get_attr"):
        if not node.users:  # a plain number the code read (guarded, baked into the kernel)
            return None
        return (f'{_id(node)} [shape=ellipse, style=filled, fillcolor="#dbe9f6", '
                f'label="{_dot_text(node.name)}\\n{_shape(node)}"];')
    if node.op == "call_function":
        return (f'{_id(node)} [shape=box, style="rounded,filled", fillcolor="white", '
                f'label="{_dot_text(node.name)}: {_dot_text(node.op_name)}\\n{_shape(node)}"];')
    if node.op == "output":
        return f'{_id(node)} [shape=ellipse, style=filled, fillcolor="#d5f0d5", label="output"];'
    return None


def _loop_lines(kernel):
    """The kernel's loop, without the comments' padding (the note stays narrow)."""
    return [f"def {kernel.name}(...):"] + [line.split("#")[0].rstrip()
                                            for line in kernel.source.body]


def _dot_text(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def _bytes(node):
    meta = node.tensor_meta
    if not hasattr(meta, "shape"):
        return 0
    n = 1
    for s in meta.shape:
        n *= s
    return n * meta.dtype.itemsize


def _op_bytes(node):
    return sum(_bytes(a) for a in _tensor_inputs(node)) + _bytes(node)


def _kb(n):
    return f"{n / 1024:.1f} KiB" if n < 1024 ** 2 else f"{n / 1024 ** 2:.1f} MiB"
