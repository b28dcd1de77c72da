"""The compiled program: a straight-line Python function that calls ops and kernels.

After fusion a graph is a sequence of *engine ops* (``Linear``, ``Softmax``, a view)
and *kernels*.  This file writes that sequence down as Python -- the same two-level
output torch's Inductor produces (a Python "wrapper" that calls library kernels such
as matmul and its own generated kernels)::

    def forward(x):
        linear_mm = Linear.apply(x, p_0_weight, None)                # the backend's matmul
        (mul,) = FusedKernel.apply(kernel_0, linear_mm, p_0_bias)    # kernel_0: Add, Gelu, Mul
        del linear_mm
        return mul

What replaying it saves over eager code: the Python between the ops (module calls,
argument checks, the function's own lines) is gone, and each group's intermediate
tensors never exist.  ``del`` frees a tensor after its last use, as eager code's
reference counting would.

**Without autograd** (a program captured under ``no_grad``: its guards hold grad mode
off) nothing needs a node, so a kernel is called directly::

    def forward(x):
        linear_mm = Linear.apply(x, p_0_weight, None)                 # matmul
        (gelu,) = kernel_0(linear_mm, p_0_bias)                       # kernel_0: Add, Gelu
        del linear_mm

A kernel writes its result over the matmul's own (the *donated* input,
``_donated_input``), as Inductor writes a layer's epilogue into its matmul's buffer: the
array is new (numpy's matmul made it inside this program) and nothing else reads it, so
no new array is made and one array fewer passes through the cache (the MLP forward of
``benchmarks/compile.py``, both ways in one process, taking turns: 0.94-0.96 of the time
with new arrays for ReLU, 0.98-0.99 for GELU, whose arithmetic weighs more).  The kernel
reads and writes that array through *one* parameter (``in0[i0, i1] = relu``).  Passed
twice, as an input and as an output, it ran slower than into a new array: LLVM, unable
to prove that two parameters never overlap, checks at run time, finds that they do, and
takes the loop off the SIMD lanes (a GELU epilogue of 128 x 256: 373 us against 138 us).
Anything else -- an input of the caller, a result also returned or read by another op, a
result of another dtype -- gets a new array.

**Autograd.**  Engine ops record themselves as they always do.  A kernel is called
through ``FusedKernel``, a ``Function``: its forward runs the generated loop, and its
backward *computes the group's ops again* with the engine (one ``Function`` per op, as
eager code ran them) and differentiates through them with ``autograd.grad``.  Saving
only the group's inputs and recomputing cheap elementwise ops in backward is what
torch's AOTAutograd partitioner does too (it saves matmul results and recomputes
pointwise ops); here the backward itself is not fused.  Gradients are therefore the
engine's own, and ``create_graph=True`` works through a kernel like through any op.
"""
import math
import operator
import re

import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.engine import grad as autograd_grad
from ..autograd.function import Function
from ..fx import _python
from ..fx.interpreter import call
from ..fx.node import Node, map_nodes
from ..nn._functional import linear
from ..ops import linalg
from . import cache, freezing, threads


class FusedKernel(Function):
    """One generated kernel as one op: forward runs the loop, backward recomputes the group
    with the engine's ops and differentiates through them (module docstring)."""

    node_name = "CompiledFunctionBackward"  # torch's name for a compiled region's node

    @staticmethod
    def forward(ctx, kernel, *inputs):
        ctx.kernel = kernel
        ctx.save_for_backward(*inputs)
        return kernel.run(inputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.kernel.backward(ctx.saved_tensors, grads, ctx.needs_input_grad[1:]))


class Kernel:
    """A group at run time: its generated source, the callable loaded from it, and the
    shapes to present its arrays in (``codegen.py``: collapsed dimensions)."""

    def __init__(self, source, group, backend, parallel_source=None, threads_ns=None,
                 donated=None):
        self.source, self.group, self.backend = source, group, backend
        # the input whose array the kernel writes its one result into (``_donated_input``)
        self.donated = donated
        self.parallel_source = parallel_source  # mode="max-autotune": timed against the serial one
        # a parallel source's expected one-thread time (threads.py): set the threads by it
        self.threads_ns = threads_ns
        self.name = source.name
        self._fn = None
        self.in_shapes = [tuple(n if f else 1 for n, f in zip(source.loops, op.full))
                          for op in source.inputs]
        self.out_specs = [(source.loops, op.dtype, op.node.tensor_meta.shape)
                          for op in source.outputs]
        if source.reduction is not None:
            kind, n_reduced, op = source.reduction
            kept = source.loops[:len(source.loops) - n_reduced] or (1,)
            self.out_specs.append((kept, op.dtype, op.node.tensor_meta.shape))
        self.outputs = [op.node for op in source.outputs] + (
            [source.reduction[2].node] if source.reduction else [])

    @property
    def text(self):
        return self.source.text

    @property
    def exact(self):
        """True when the kernel computes the engine's results bit for bit (codegen.py:
        ``KernelSource.approximate``)."""
        return not self.source.approximate

    @property
    def fn(self):
        """The callable kernel (Numba compiles it, or loads it from the cache, on first use)."""
        if self._fn is None:
            if self.parallel_source is not None and self.backend == "numba":
                self._fn = _autotuned(self)
            else:
                self._fn = cache.load(self.source, self.backend)
        return self._fn

    def __call__(self, *tensors):
        """The kernel on ``tensors``: what a program that records no autograd calls."""
        return self.run(tensors)

    def run(self, tensors):
        """The kernel's results for ``tensors``, as new tensors."""
        arrays = []
        for t, shape in zip(tensors, self.in_shapes):
            a = t._data
            if a.__class__ is not np.ndarray:
                raise RuntimeError(f"{self.name} runs on the CPU: it got a {t.device} tensor")
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)  # the kernel reads rows of contiguous memory
            arrays.append(a.reshape(shape))
        if self.threads_ns is not None:
            threads.use_threads(self.threads_ns)
        if self.donated is None:
            outs = [np.empty(shape, dtype) for shape, dtype, _ in self.out_specs]
            self.fn(*self.source.loops, *arrays, *outs)
        else:
            outs = [arrays[self.donated]]
            self.fn(*self.source.loops, *arrays)
        return tuple(Tensor._wrap(o.reshape(real)) for o, (_, _, real) in zip(outs, self.out_specs))

    def replay(self, tensors):
        """The group's ops run by the engine, one Function each: what eager code computes."""
        values = dict(zip(self.group.inputs, tensors))
        for node in self.group.nodes:
            values[node] = call(node.target, map_nodes(node.args, values.__getitem__))
        return [values[n] for n in self.outputs]

    def backward(self, inputs, grads, needs):
        create_graph = grad_mode.is_grad_enabled()
        with grad_mode.enable_grad():
            if create_graph:  # keep the inputs' history: second derivatives flow through
                leaves = list(inputs)
            else:
                leaves = [t.detach().requires_grad_(n) if n else t.detach()
                          for t, n in zip(inputs, needs)]
            outputs = self.replay(leaves)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if g is not None and isinstance(o, Tensor) and o.requires_grad]
        wanted = [t for t, n in zip(leaves, needs) if n]
        if not pairs or not wanted:
            return tuple(None for _ in inputs)
        found = iter(autograd_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                   create_graph=create_graph, allow_unused=True))
        return tuple(next(found) if n else None for n in needs)

    def __repr__(self):
        return f"<kernel {self.name}: {', '.join(n.op_name for n in self.group.nodes)}>"


def _autotuned(kernel):
    """mode="max-autotune": time the serial and the parallel kernel on the first call's
    arrays, keep the faster (a miniature of what torch's autotuning does)."""
    import time
    serial = cache.load(kernel.source, "numba")
    parallel = cache.load(kernel.parallel_source, "numba")
    state = {}

    def first(*args):
        best = None
        for candidate in (serial, parallel):
            candidate(*args)  # compile and warm up
            start = time.perf_counter()
            for _ in range(3):
                candidate(*args)
            seconds = time.perf_counter() - start
            if best is None or seconds < best[0]:
                best = (seconds, candidate)
        state["chosen"] = kernel.chosen = "parallel" if best[1] is parallel else "serial"
        kernel._fn = best[1]
        return None
    return first


# ---------------------------------------------------------------- the wrapper
class Program:
    """One compiled path: the graph it came from, the rewritten graph, its kernels, and the
    generated wrapper (``code``, and ``run`` the function made from it)."""

    def __init__(self, graph, fused_graph, groups, kernels, code, run, breaks):
        self.graph, self.fused_graph, self.groups = graph, fused_graph, groups
        self.kernels, self.code, self.run, self.breaks = kernels, code, run, breaks

    def __repr__(self):
        return (f"<compiled program: {len(self.fused_graph.ops())} ops, "
                f"{len(self.kernels)} kernels, {len(self.breaks)} graph breaks>")


class _Names:
    """Global names of the wrapper, none equal to a node's name."""

    def __init__(self, taken):
        self.taken = set(taken)
        self.values = {}
        self.by_id = {}
        self.alias = {}  # get_attr node -> the global holding its tensor

    def add(self, hint, value):
        key = id(value)
        if key in self.by_id:
            return self.by_id[key]
        name = hint
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        self.values[name] = value
        self.by_id[key] = name
        return name


def build(graph, fused_graph, groups, backend, function_name="forward", parallel=False,
          records=True, freeze=False):
    """The Program for ``fused_graph`` with ``groups`` fused (``backend``: "numba" or
    "reference" for the kernels; no groups: every op through the engine).

    ``parallel`` -- mode="max-autotune": each kernel's parallel version is timed against
    the serial one; otherwise a kernel is parallel when the tuning table says it is long
    enough (``threads.py``).  ``records`` -- False when the program runs with grad mode
    off (its guards say so): kernels are then called directly, with no autograd node.
    ``freeze`` -- ``options={"freezing": True}``: in a program that records nothing, each
    ``Linear`` whose weight is a parameter multiplies by its transposed copy
    (``freezing.py``)."""
    from .codegen import generate
    # a group none of whose values is read afterwards (a result only Python looked at, such
    # as its grad_fn) stores nothing: the engine runs its ops, as eager code did
    groups = [g for g in groups if g.stored or g.reduction]
    kernels = {}
    for k, group in enumerate(groups):
        name = f"kernel_{k}"
        reduction = group.reduction
        donated = None if records else _donated_input(group)
        source = generate(name, group.members, group.inputs, group.stored, reduction,
                          donated=donated)
        parallel_source = (generate(name, group.members, group.inputs, group.stored, reduction,
                                    parallel=True, donated=donated) if parallel else None)
        threads_ns = (threads.worth_threads(source, group)
                      if backend == "numba" and not parallel else None)
        if threads_ns is not None:
            source = generate(name, group.members, group.inputs, group.stored, reduction,
                              parallel=True, donated=donated)
        kernels[group] = Kernel(source, group, backend, parallel_source, threads_ns, donated)
    member_of = {n: g for g in groups for n in g.nodes}
    names = _Names(n.name for n in fused_graph.nodes)
    names.add("FusedKernel", FusedKernel)
    names.add("Tensor", Tensor)
    lines, breaks = [], []
    frozen = {}  # id of a weight -> the global name of its FrozenLinear (tied weights share one)
    placeholders = [n.name for n in fused_graph.placeholders]
    for node in fused_graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "get_attr":  # a parameter, buffer or constant: a global of the wrapper
            value = fused_graph.attributes[node.target]
            kind = node.meta.get("attribute", "constant")
            hint = ("p_" if kind != "constant" else "c_") + node.name.lstrip("_")
            names.alias[node] = names.add(hint, value)
            continue
        if node.op == "output":
            lines.append((f"return {_expr(node.args[0], names)}", ""))
            continue
        group = member_of.get(node)
        if group is not None:
            if node is group.last:
                kernel = kernels[group]
                name = names.add(kernel.name, kernel)
                targets = ", ".join(n.name for n in kernel.outputs)
                inputs = [_expr(a, names) for a in group.inputs]
                ops = ", ".join(n.op_name for n in group.nodes)
                if records:
                    lines.append((f"({targets},) = FusedKernel.apply({', '.join([name] + inputs)})",
                                  f"{kernel.name}: {ops}"))
                    continue
                lines.append((f"({targets},) = {name}({', '.join(inputs)})", f"{kernel.name}: {ops}"))
            continue
        if freeze and not records and node.target is linear.Linear:
            line = _frozen_line(node, fused_graph, names, frozen)
            if line is not None:
                lines.append(line)
                continue
        lines.append(_call_line(node, names, breaks))
    lines = _with_deletes(lines, fused_graph)
    header = f"def {function_name}({', '.join(placeholders)}):"
    width = min(max((len(s) for s, _ in lines), default=0), 76)
    body = [f"    {s.ljust(width)}  # {c}" if c else f"    {s}" for s, c in lines]
    code = "\n".join([header] + body) + "\n"
    namespace = dict(names.values)
    exec(compile(code, f"<learntorch.compile: {function_name}>", "exec"), namespace)  # noqa: S102
    return Program(graph, fused_graph, groups, list(kernels.values()), code,
                   namespace[function_name], breaks)


#: ops whose result is always a new array of their own (numpy's matmul makes one), which a
#: kernel may therefore overwrite once nothing else reads it
_FRESH_RESULTS = (linalg.Mm, linalg.Matmul, linear.Linear)


def _donated_input(group):
    """The position of the group's input whose array its kernel may write its result into,
    or None.  A layer's ``x @ W.T + b`` then ReLU writes the ReLU over the matmul's result,
    as Inductor writes an epilogue into its matmul's buffer: no new array for the result,
    and one array fewer going through the cache (``benchmarks/compile.py``: the MLP rows).
    Only in a program that records no autograd (nothing keeps the matmul's result for a
    backward), and only for an input that is a new array made by a matmul inside this
    program, read by this group alone (a returned result has the output node among its
    users), and of the result's shape and dtype."""
    if group.reduction or len(group.stored) != 1:
        return None
    result = group.stored[0].tensor_meta
    inside = set(group.nodes)
    for position, node in enumerate(group.inputs):
        meta = getattr(node, "tensor_meta", None)
        if (node.op == "call_function" and node.target in _FRESH_RESULTS
                and all(u in inside for u in node.users)
                and meta is not None and getattr(meta, "shape", None) == result.shape
                and meta.dtype == result.dtype):
            return position
    return None


def _frozen_line(node, graph, names, frozen):
    """The line calling a ``FrozenLinear`` for a ``Linear`` node whose weight is a parameter
    (a ``get_attr`` node) it can freeze, else None (the engine's ``Linear`` runs)."""
    x, weight_node, bias = node.args
    if not (isinstance(weight_node, Node) and weight_node.op == "get_attr"):
        return None
    weight = graph.attributes[weight_node.target]
    if not freezing.can_freeze(node, weight):
        return None
    if id(weight) not in frozen:
        frozen[id(weight)] = names.add("frozen_" + names.alias[weight_node],
                                       freezing.FrozenLinear(weight))
    return (f"{node.name} = {frozen[id(weight)]}({_expr(x, names)}, {_expr(bias, names)})",
            "matmul, weight stored transposed (freezing)")


def _call_line(node, names, breaks):
    target = node.target
    if target is operator.getitem:
        return f"{node.name} = {_expr(node.args[0], names)}[{node.args[1]!r}]", ""
    if target is _python.python_value:
        source, how, expected = node.args
        k = len(breaks)
        breaks.append(node)
        check = names.add("check_value", check_value)
        where = node.meta.get("where")
        return (f"{node.name} = {check}({_expr(source, names)}, {how!r}, "
                f"{_expr(expected, names)}, {k})",
                f"graph break: {where.line if where else ''}")
    if target is _python.python_print:
        breaks.append(node)
        where = node.meta.get("where")
        return (f"{names.add('python_print', target)}({_expr(node.args[0], names)}, "
                f"{_expr(node.args[1], names)})", f"graph break: {where.line if where else ''}")
    if isinstance(target, type):
        fn = names.add(target.__name__, target)
        return (f"{node.name} = {fn}.apply({', '.join(_expr(a, names) for a in node.args)})",
                node.kind)
    fn = names.add(target.__name__, target)
    return f"{node.name} = {fn}({', '.join(_expr(a, names) for a in node.args)})", node.kind


def _expr(value, names):
    """``value`` (an argument: nodes, constants, containers) as Python source."""
    if isinstance(value, Node):
        return names.alias.get(value, value.name)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        inner = ", ".join(_expr(v, names) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_expr(v, names) for v in value) + "]"
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return "{" + ", ".join(f"{k!r}: {_expr(v, names)}" for k, v in value.items()) + "}"
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if type(value) is int:
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    hint = "c_" + (type(value).__name__.lower() if not isinstance(value, type) else "type")
    return names.add(hint, value)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _with_deletes(lines, graph):
    """``del`` each tensor after the line that last reads it (eager code frees it there)."""
    defined = {}  # name -> the line that makes it
    for i, (statement, _) in enumerate(lines):
        head = statement.split(" = ", 1)[0]
        if " = " in statement and not statement.startswith("return"):
            for name in head.strip("(),").split(","):
                if name.strip():
                    defined[name.strip()] = i
    last_use = {}
    for i, (statement, _) in enumerate(lines):
        used = statement.split(" = ", 1)[1] if " = " in statement else statement
        for name in _NAME.findall(used):
            if name in defined:
                last_use[name] = i
    tensors = {n.name for n in graph.nodes if n.op == "call_function"
               and n.tensor_meta is not None and hasattr(n.tensor_meta, "shape")}
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if line[0].startswith("return"):
            continue
        dead = [n for n, j in last_use.items() if j == i and n in tensors]
        dead += [n for n, j in defined.items() if j == i and n not in last_use and n in tensors]
        if dead:
            out.append((f"del {', '.join(sorted(set(dead)))}", ""))
    return out


def check_value(tensor, how, expected, k):
    """A graph break at replay: Python's view of ``tensor`` must be what it was at capture."""
    got = _python._read(tensor, how)
    if not _python.same_value(got, expected):
        raise BreakChanged(k, got)
    return got


class BreakChanged(Exception):
    """Raised by ``check_value``: break ``k`` of the program sees ``got``, not what the
    program was captured with; the compiled function captures another path."""

    def __init__(self, k, got):
        super().__init__(k, got)
        self.k, self.got = k, got


def uses_engine_backend():
    """True when the active backend is one of the engine's own (numpy or Numba), so that
    kernels may take over elementwise ops; a learner's backend gets every op."""
    from ..backends.numba_cpu import NumbaBackend
    from ..backends.reference import NumpyBackend
    return backends.current.__class__ in (NumpyBackend, NumbaBackend)
