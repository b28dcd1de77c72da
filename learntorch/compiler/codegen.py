"""Code generation: one fused group of the graph becomes the source of one Numba kernel.

Eager mode runs ``gelu(x @ W + b) * scale`` as four ops: the matmul, then three passes
over memory, each reading a whole array and writing a new one.  After fusion
(``fusion.py``) the three elementwise ops form one *group*, and this file writes the
loop that does all three for one element at a time::

    @njit(cache=True, error_model="numpy")
    def kernel_0(n0, n1, in0, in1, out0):
        for i0 in range(n0):
            for i1 in range(n1):
                mm = in0[i0, i1]                       # float32 from matmul
                b = in1[0, i1]                         # b, the same for every row
                add = mm + b                           # Add
                gelu = fast_gelu(add)                  # Gelu
                mul = gelu * _c0                       # Mul
                out0[i0, i1] = mul

Each line of the body is one node of the graph, named as in ``graph.code``; the values
between the ops live in registers, so memory is read once (``in0``, ``in1``) and written
once (``out0``).  The rest of this docstring is how the loop is shaped.

**Iteration space.**  Every op of a group makes a tensor of the same shape (the
group's shape); the inputs broadcast to it.  Dimensions are *collapsed* first: two
neighbouring dimensions become one wherever every input is either complete in both or
repeated (size 1) in both, so a chain over contiguous ``(64, 32, 32)`` tensors is a
single loop over 65536 elements, and ``x (128, 256) + b (256,)`` is two loops, rows
and columns, with ``b`` read as ``in1[0, i1]``.  The wrapper (``program.py``) reshapes
each array to the collapsed shape before the call (a view for contiguous memory; a
strided input is copied first, as the Numba backend does).

**A reduction at the end.**  ``((y - t) ** 2).mean()`` is an elementwise chain feeding
one reduction: the kernel adds the squared differences up as it computes them, in a
float64 accumulator, and never stores them.  The reduced dimensions must be the inner
loops (``mean()``, ``sum(dim=-1)``); the accumulator then lives in a register.

**Shared kernels.**  The source above is for reading: its names are the graph's.  What
Numba compiles is the same source with positional names (``v0``, ``v1``, ...), no
comments, and the function called ``kernel`` -- the *canonical* source.  Two groups that
do the same thing to the same kinds of inputs (the bias add and GELU of two layers of an
MLP) then have the same canonical source, and ``cache.py`` compiles it once.  (Inductor
names its kernels' values ``tmp0, tmp1`` for the same reason.)

**Parallel or not.**  The loops are written with ``range``; ``parallel=True`` writes the
outer one as ``prange``, which Numba splits across threads.  Compiling a parallel
kernel takes about four times as long, and on small tensors waking the threads costs
more than it saves, so a kernel is parallel only when the Numba backend's tuning table
says that its work is long enough to share (``threads.py``: the GELU of a 128 x 256
layer is, its ReLU is not), or when ``mode="max-autotune"`` timed both and the parallel
one won.
"""
import builtins
import math
import re

import numpy as np

from .lowering import BOOL, Emitter, NotLowerable, Value, cast, lower

# the scalar helpers a lowering may call, in float64 (lowering.py says why); each kernel's
# source holds the ones it uses, so that the file is complete on its own
HELPERS = {
    "_sigmoid": (f'''
def _sigmoid(v):
    """1 / (1 + e^-v), split by sign so that exp never overflows."""
    if v >= 0.0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)
''', ()),
    "_silu": ('''
def _silu(v):
    """v * sigmoid(v)."""
    return v * _sigmoid(v)
''', ("_sigmoid",)),
    "_softplus": ('''
def _softplus(v, beta, threshold):
    """log(1 + e^(beta v)) / beta, and v itself above the threshold (torch's rule)."""
    if v * beta > threshold:
        return v
    return math.log1p(math.exp(v * beta)) / beta
''', ()),
    "_clamp_min": ('''
def _clamp_min(v, low):
    """max(v, low); a NaN value or a NaN bound gives NaN (torch's clamp)."""
    return low if (v < low or low != low) else v
''', ()),
    "_clamp_max": ('''
def _clamp_max(v, high):
    """min(v, high); a NaN value or a NaN bound gives NaN (torch's clamp)."""
    return high if (v > high or high != high) else v
''', ()),
    "_maximum": ('''
def _maximum(a, b):
    """The larger; NaN if either is NaN (numpy's maximum)."""
    return a if (a > b or a != a) else b
''', ()),
    "_minimum": ('''
def _minimum(a, b):
    """The smaller; NaN if either is NaN (numpy's minimum)."""
    return a if (a < b or a != a) else b
''', ()),
}

# fast_gelu: the Numba backend's gelu kernels' formula, in the value's own dtype (the
# reference backend, which runs the source without the header, gives that name the
# textbook formula: cache.py)
HEADER = ("import math\nimport numpy as np\nfrom numba import njit, prange\n"
          "from learntorch.backends.numba_cpu.fast_gelu import fast_gelu\n")
CANONICAL_NAME = "kernel"   # the function's name in the source Numba compiles


class Operand:
    """One array the kernel reads or writes: its parameter name, the graph node it holds,
    its dtype, and which collapsed dimensions it spans (False: repeated, size 1)."""

    def __init__(self, param, node, dtype, full):
        self.param, self.node, self.dtype, self.full = param, node, np.dtype(dtype), tuple(full)

    def index(self, loop_vars):
        return ", ".join(v if f else "0" for v, f in zip(loop_vars, self.full))


class KernelSource:
    """The generated source of one group, and what the wrapper needs to call it.

    ``loops`` -- the collapsed sizes (the wrapper passes them as ``n0, n1, ...``);
    ``inputs`` / ``outputs`` -- Operands, in parameter order; ``reduction`` --
    ``(kind, n_reduced_loops, output Operand)`` or None; ``text`` -- the source;
    ``approximate`` -- what makes its results differ from the engine's in the last bits
    (a transcendental's formula, a sum's order), empty when the kernel gives the engine's
    bits; ``canonical`` -- the source Numba compiles (module docstring: shared kernels).
    """

    def __init__(self, name, text, body, loops, inputs, outputs, reduction, approximate=(),
                 canonical=None):
        self.name, self.text, self.body = name, text, body
        self.loops, self.inputs, self.outputs, self.reduction = loops, inputs, outputs, reduction
        self.approximate = tuple(approximate)
        self.canonical = canonical if canonical is not None else text


def collapse(shape, operand_shapes, reduced=()):
    """Collapse ``shape``'s dimensions as the module docstring says.

    ``operand_shapes`` are the inputs' shapes (right-aligned to ``shape``); ``reduced`` the
    dims of ``shape`` a final reduction removes.  Returns ``(sizes, fulls, reduced_flags)``:
    the collapsed sizes, per operand a tuple of "complete in this dimension", and per
    collapsed dimension whether it is reduced.
    """
    ndim = len(shape)
    flags = []
    for s in operand_shapes:
        padded = (1,) * (ndim - len(s)) + tuple(s)
        flags.append([p == n for p, n in zip(padded, shape)])
    kept = [d for d in range(ndim) if shape[d] != 1]  # size-1 dimensions need no loop
    groups = []
    for d in kept:
        signature = (tuple(f[d] for f in flags), d in reduced)
        if groups and groups[-1][0] == signature:
            groups[-1][1].append(d)
        else:
            groups.append((signature, [d]))
    if not groups:  # a single element
        return (1,), [(True,) for _ in operand_shapes], (bool(reduced),)
    sizes = tuple(math.prod(shape[d] for d in dims) for _, dims in groups)
    fulls = [tuple(sig[0][i] for sig, _ in groups) for i in range(len(operand_shapes))]
    return sizes, fulls, tuple(sig[1] for sig, _ in groups)


def generate(name, members, inputs, stored, reduction=None, parallel=False, donated=None):
    """The source of kernel ``name``.

    ``members`` -- the group's nodes in order; ``inputs`` -- the nodes (and attributes)
    it reads, in order; ``stored`` -- the members whose values leave the kernel;
    ``reduction`` -- ``(node, kind, dims, keepdim)`` ending the group, or None;
    ``donated`` -- the position of an input whose array the one stored value is written
    into, element by element where it was read (``program.py``: a matmul's result that
    nothing else reads), or None: each stored value gets an array of its own.
    Raises NotLowerable when a member has no scalar formula for its arguments.
    """
    shape = members[0].tensor_meta.shape
    reduced_dims = reduction[2] if reduction else ()
    sizes, fulls, reduced = collapse(shape, [n.tensor_meta.shape for n in inputs], reduced_dims)
    n_loops = len(sizes)
    loop_vars = [f"i{d}" for d in range(n_loops)]
    if reduction and not _is_suffix(reduced):
        raise NotLowerable("the reduced dimensions are not the innermost ones")
    n_reduced = sum(reduced)

    in_ops = [Operand(f"in{k}", node, node.tensor_meta.dtype.np, full)
              for k, (node, full) in enumerate(zip(inputs, fulls))]
    out_ops = [Operand(f"out{k}", node, node.tensor_meta.dtype.np, (True,) * n_loops)
               for k, node in enumerate(stored)]
    if donated is not None:  # one parameter read and written at the same index: no aliasing
        out_ops = [Operand(in_ops[donated].param, stored[0], in_ops[donated].dtype,
                           (True,) * n_loops)]
    emit = Emitter()
    values = {op.node: Value(_var(op.node), op.dtype) for op in in_ops}
    lines = [f"{_var(op.node)} = {op.param}[{op.index(loop_vars)}]" for op in in_ops]
    comments = [f"{op.dtype.name} from {op.node.name}" + ("" if all(op.full) else
                ", repeated along " + _repeated(op.full)) for op in in_ops]
    for node in members:
        args = [values.get(a, a) if _is_node(a) else a for a in node.args]
        if any(_is_node(a) for a in args):
            raise NotLowerable(f"{node.name} reads a value the kernel does not have")
        expr = lower(node, args, emit)
        values[node] = Value(_var(node), node.tensor_meta.dtype.np)
        lines.append(f"{_var(node)} = {expr}")
        comments.append(node.op_name)
    for op in out_ops:
        lines.append(f"{op.param}[{op.index(loop_vars)}] = {_var(op.node)}")
        comments.append("" if donated is None else f"in place, over {in_ops[donated].node.name}")

    written = out_ops if donated is None else []  # (a donated array is a parameter already)
    signature = ", ".join([f"n{d}" for d in range(n_loops)] + [o.param for o in in_ops + written])
    result = None
    if reduction is not None:
        node, kind, _, _ = reduction
        source = values[node.args[0]]
        result = Operand(f"out{len(out_ops)}", node, node.tensor_meta.dtype.np,
                         [not r for r in reduced])
        signature += f", {result.param}"
    body = _loops(loop_vars, n_reduced, lines, comments, parallel, result,
                  reduction and (reduction[1], source, emit))
    # the same loop with positional names and no comments: what Numba compiles (module docstring)
    names = _positional_names(lines)
    canonical_body = _loops(loop_vars, n_reduced, [_renamed(line, names) for line in lines],
                            [""] * len(lines), parallel, result,
                            reduction and (reduction[1], Value(names.get(source.name, source.name),
                                                               source.dtype), emit))
    helpers = _helpers_used(body)
    preamble = [HEADER, ""] + emit.constant_lines()
    for helper in helpers:
        preamble += ["", "", '@njit(cache=True, error_model="numpy", inline="always")']
        preamble += HELPERS[helper][0].strip("\n").splitlines()
    decorator = '@njit(cache=True, error_model="numpy"' + (", parallel=True)" if parallel else ")")
    canonical = "\n".join(preamble + ["", "", decorator, f"def {CANONICAL_NAME}({signature}):"]
                          + canonical_body) + "\n"
    text = [HEADER]
    text += [f"# {name}: {', '.join(n.op_name for n in members)}"
             + (f" then {reduction[0].op_name}" if reduction else "")
             + f" -- {len(members) + bool(reduction)} ops of the graph in one loop"]
    text += preamble[1:] + ["", "", decorator, f"def {name}({signature}):"] + body
    approximate = list(dict.fromkeys(emit.approximate))
    if reduction and reduction[1] in ("sum", "mean"):
        # one float64 accumulator, element after element; numpy adds in pairs, in the dtype
        approximate.append(f"{reduction[1]} in float64, in order")
    return KernelSource(name, "\n".join(text) + "\n", body, sizes, in_ops, out_ops,
                        (reduction[1], n_reduced, result) if reduction else None, approximate,
                        canonical)


_IDENTIFIER = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def _positional_names(lines):
    """The kernel's value names (``linear_mm``, ``gelu``) -> ``v0``, ``v1``, ... in the order
    the lines define them."""
    names = {}
    for line in lines:
        head = line.split(" = ", 1)[0]
        if "[" not in head:
            names.setdefault(head, f"v{len(names)}")
    return names


def _renamed(line, names):
    """``line`` with its value names replaced (never an attribute such as ``math.exp``)."""
    return _IDENTIFIER.sub(lambda m: names.get(m.group(), m.group()), line)


def _loops(loop_vars, n_reduced, lines, comments, parallel, result, reduction):
    """The loop nest around ``lines``; a reduction accumulates over the inner ``n_reduced``."""
    out = []
    outer = len(loop_vars) - n_reduced if reduction else len(loop_vars)
    indent = "    "
    for d, var in enumerate(loop_vars[:outer]):
        loop = "prange" if parallel and d == 0 else "range"
        out.append(f"{indent}for {var} in {loop}(n{d}):")
        indent += "    "
    if reduction:
        kind, source, emit = reduction
        start = {"sum": "0.0", "mean": "0.0", "amax": emit.const(-np.inf, source.dtype),
                 "amin": emit.const(np.inf, source.dtype)}[kind]
        out.append(f"{indent}acc = {start}")
        for d, var in enumerate(loop_vars[outer:], outer):
            loop = "prange" if parallel and d == 0 else "range"
            out.append(f"{indent}for {var} in {loop}(n{d}):")
            indent += "    "
    width = max((len(line) for line in lines), default=0)
    for line, comment in zip(lines, comments):
        out.append(f"{indent}{line.ljust(width)}  # {comment}" if comment else f"{indent}{line}")
    if reduction:
        kind, source, emit = reduction
        step = {"sum": f"acc += {source.name}", "mean": f"acc += {source.name}",
                "amax": f"acc = {source.name} if ({source.name} > acc or {source.name} != "
                        f"{source.name}) else acc",
                "amin": f"acc = {source.name} if ({source.name} < acc or {source.name} != "
                        f"{source.name}) else acc"}[kind]
        out.append(f"{indent}{step}")
        indent = "    " * (outer + 1)
        index = ", ".join(loop_vars[:outer]) or "0"
        count = " * ".join(f"n{d}" for d in range(outer, len(loop_vars))) or "1"
        value = f"acc / ({count})" if kind == "mean" else "acc"
        stored = cast(value, np.float64 if kind in ("sum", "mean") else source.dtype,
                      result.dtype)
        out.append(f"{indent}{result.param}[{index}] = {stored}")
    return out


def _is_suffix(reduced):
    """True when the reduced dimensions are all after the kept ones."""
    seen_reduced = False
    for r in reduced:
        if r:
            seen_reduced = True
        elif seen_reduced:
            return False
    return True


def _helpers_used(body):
    text = "\n".join(body)
    wanted = [h for h in HELPERS if f"{h}(" in text]
    ordered = []

    def need(h):
        for dep in HELPERS[h][1]:
            need(dep)
        if h not in ordered:
            ordered.append(h)
    for h in wanted:
        need(h)
    return ordered


def _is_node(x):
    return hasattr(x, "op") and hasattr(x, "users")


_RESERVED = re.compile(r"^(math|np|njit|prange|acc|[in]\d+|in\d+|out\d+|_c\d+|_[a-z_]+)$")


def _var(node):
    """The variable holding ``node``'s element: the node's name, unless the kernel's own
    names (loops, parameters, constants, helpers) or Python's builtins (``abs``) have it."""
    name = node.name
    return name + "_" if _RESERVED.match(name) or hasattr(builtins, name) else name


def _repeated(full):
    return ", ".join(f"dim {d}" for d, f in enumerate(full) if not f)


__all__ = ["generate", "collapse", "KernelSource", "HEADER", "NotLowerable", "BOOL"]
