"""Lowering: each elementwise op of the graph as one line of scalar code.

A fused kernel computes, for one element at a time, what a chain of ops computes
for whole arrays.  So every op the compiler may fuse needs its *scalar* formula:
``Add`` is ``a + b``, ``Relu`` is ``zero if a <= zero else a``, ``Gelu`` is
``0.5 * x * (1 + erf(x / sqrt 2))``.  This file is that table -- one small function per
op, reading the node's arguments and returning a Python expression -- and the rules
that make the kernel compute *exactly* what the engine computes:

* **Types.**  Each value has the dtype the engine gave it (``node.tensor_meta``): a
  float32 op stays float32 in the kernel.  Numbers are typed too: in ``x * 0.1`` the
  engine multiplies by 0.1 rounded to float32 (numpy's "weak" Python scalars), so the
  kernel gets a constant ``_c0 = np.float32(0.1)`` -- a bare ``0.1`` would be float64
  in Numba and the product would be rounded differently.
* **Order.**  One op is one expression, in the order the graph ran them: ``(a + b) * c``
  never becomes ``a * c + b * c``.  Then ``+ - * /``, ``sqrt``, comparisons,
  ``where``, ``relu``, ``clamp``, ``maximum`` give the engine's results bit for bit
  (IEEE arithmetic rounds each operation the same everywhere).
* **Transcendentals** (exp, log, tanh, erf, sigmoid, ...) are computed in float64 and
  rounded once.  numpy's SIMD ``exp`` for float32 is not correctly rounded (it differs
  from the float64-then-round value in about 40% of inputs, by one unit in the last
  place); Numba calls the C library.  So these agree with the engine to about one
  unit in the last place, not bit for bit.  ``gelu`` is the Numba backend's own
  formula (``fast_gelu``: arithmetic that vectorizes, in the value's dtype, where the
  kernel would otherwise call the C library's ``erf`` for each element), so it matches
  the engine's kernel exactly; ``erf`` alone is ``math.erf``, as the engine's ``erf``.

An op the table does not know (or knows, but not with these arguments: an integer
tensor, a tensor bound of ``clamp``) is simply not fused: the compiled program calls
the engine's ``Function`` for it, as eager code would.
"""
import math

import numpy as np

from ..fx import op_kinds


class NotLowerable(Exception):
    """This node cannot be written as scalar code (the compiler leaves it to the engine)."""


class Value:
    """A tensor argument inside the kernel: the variable holding its element, and its dtype."""

    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, np.dtype(dtype)

    def __repr__(self):
        return self.name


FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
BOOL = np.dtype(np.bool_)
_TYPE_NAMES = {np.dtype(np.float32): "np.float32", np.dtype(np.float64): "np.float64",
               np.dtype(np.bool_): "np.bool_"}


class Emitter:
    """What a lowering function writes with: typed constants and casts.

    Constants become module-level names (``_c0 = np.float32(0.1)``), each value once;
    the code generator writes them at the top of the kernel's source.
    """

    def __init__(self):
        self.constants = {}   # (repr of the value, dtype) -> name
        self.approximate = []  # ops whose formula is not the engine's to the bit

    def approximation(self, op):
        """Note that ``op``'s formula agrees with the engine only to a few units in the last
        place (a transcendental: the module docstring); the kernel is then not exact."""
        self.approximate.append(op)

    def const(self, value, dtype):
        dtype = np.dtype(dtype)
        if isinstance(value, (bool, np.bool_)) and dtype != BOOL:
            value = int(value)
        key = (_literal(value, dtype), dtype.str)
        name = self.constants.get(key)
        if name is None:
            name = self.constants[key] = f"_c{len(self.constants)}"
        return name

    def constant_lines(self):
        return [f"{name} = {_TYPE_NAMES[np.dtype(dtype)]}({literal})"
                for (literal, dtype), name in self.constants.items()]

    def operand(self, x, dtype):
        """``x`` (a Value or a Python number) as an expression of ``dtype``."""
        dtype = np.dtype(dtype)
        if isinstance(x, Value):
            return cast(x.name, x.dtype, dtype)
        if isinstance(x, (bool, int, float, np.number)):
            return self.const(x, dtype)
        raise NotLowerable(f"an argument of type {type(x).__name__}")


def _literal(value, dtype):
    if dtype == BOOL:
        return repr(bool(value))
    value = float(value)
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def cast(expr, source, target):
    """``expr`` (of dtype ``source``) as ``target``: numpy's conversion, written out."""
    source, target = np.dtype(source), np.dtype(target)
    if source == target:
        return expr
    if target == BOOL:
        return f"({expr} != 0)"
    return f"{_TYPE_NAMES[target]}({expr})"


def in_float64(emit, fn, expr, source, result):
    """``fn`` of ``expr`` computed in float64 and rounded once to ``result`` (see the module
    docstring: transcendentals)."""
    if fn != "math.erf":  # erf alone: the engine's erf is math.erf in float64 too
        emit.approximation(fn)
    return cast(f"{fn}({cast(expr, source, np.float64)})", np.float64, result)


# ---------------------------------------------------------------- the table
LOWERINGS = {}


def lowers(*names):
    """Register the decorated function as the lowering of the ops ``names`` (Function
    class names, or names of the engine's plain functions such as ``gt``)."""
    def register(fn):
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


def lower(node, args, emit):
    """The scalar expression of ``node``, whose tensor arguments are the Values in ``args``
    (the node's args, tensors replaced); raises NotLowerable when it has none."""
    target = node.target
    if not getattr(target, "__module__", "").startswith("learntorch."):
        raise NotLowerable(f"{node.op_name} is not one of the engine's ops")
    rule = LOWERINGS.get(getattr(target, "__name__", ""))
    if rule is None:
        raise NotLowerable(f"no scalar formula for {node.op_name}")
    result = node.tensor_meta
    if result is None or not hasattr(result, "dtype"):
        raise NotLowerable(f"{node.op_name} has no single tensor result")
    dtype = result.dtype.np
    if dtype not in FLOATS and dtype != BOOL:
        raise NotLowerable(f"{node.op_name} makes {result.dtype} values (fused kernels compute "
                           "float32, float64 and bool)")
    for a in args:
        if isinstance(a, Value) and a.dtype not in FLOATS and a.dtype != BOOL:
            raise NotLowerable(f"{node.op_name} reads a {a.dtype} tensor")
    return rule(emit, dtype, *args)


def _float_result(dtype):
    if dtype not in FLOATS:
        raise NotLowerable("a floating result is needed")


# -------- arithmetic: + - * / and powers
@lowers("Add")
def _add(emit, dtype, a, b, alpha=1):
    _float_result(dtype)
    y = emit.operand(b, dtype)
    if alpha != 1 or isinstance(alpha, bool):
        y = f"({y} * {emit.const(alpha, dtype)})"  # the engine scales b first: a + (alpha * b)
    return f"{emit.operand(a, dtype)} + {y}"


@lowers("Sub", "Rsub")
def _sub(emit, dtype, a, b, alpha=1):
    _float_result(dtype)
    y = emit.operand(b, dtype)
    if alpha != 1 or isinstance(alpha, bool):
        y = f"({y} * {emit.const(alpha, dtype)})"
    return f"{emit.operand(a, dtype)} - {y}"


@lowers("Mul")
def _mul(emit, dtype, a, b):
    _float_result(dtype)
    return f"{emit.operand(a, dtype)} * {emit.operand(b, dtype)}"


@lowers("Div")
def _div(emit, dtype, a, b):
    _float_result(dtype)
    return f"{emit.operand(a, dtype)} / {emit.operand(b, dtype)}"


@lowers("Pow", "PowTensors", "PowNumberBase")
def _pow(emit, dtype, a, b):
    """numpy's power: exponents 2, 0.5, 1, 0 and -1 are done exactly (x*x, sqrt, ...), as
    numpy does for a number exponent; any other exponent calls pow in the result type
    (the C library's pow: within a unit or two in the last place of numpy's, not bit for bit)."""
    _float_result(dtype)
    x = emit.operand(a, dtype)
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        special = {2: f"{x} * {x}", 0.5: f"math.sqrt({x})", 1: x,
                   -1: f"{emit.const(1, dtype)} / {x}", 0: emit.const(1, dtype)}
        if b in special and isinstance(a, Value):
            return special[b]
    emit.approximation("pow")
    return f"{x} ** {emit.operand(b, dtype)}"


@lowers("Neg")
def _neg(emit, dtype, a):
    _float_result(dtype)
    return f"-{emit.operand(a, dtype)}"


@lowers("Abs")
def _abs(emit, dtype, a):
    _float_result(dtype)
    return f"abs({emit.operand(a, dtype)})"


# -------- one-argument math
@lowers("Sqrt")
def _sqrt(emit, dtype, a):
    _float_result(dtype)  # correctly rounded in every type: no float64 detour
    return f"math.sqrt({emit.operand(a, dtype)})"


@lowers("Rsqrt")
def _rsqrt(emit, dtype, a):
    _float_result(dtype)
    return f"{emit.const(1, dtype)} / math.sqrt({emit.operand(a, dtype)})"


@lowers("Reciprocal")
def _reciprocal(emit, dtype, a):
    _float_result(dtype)
    return f"{emit.const(1, dtype)} / {emit.operand(a, dtype)}"


_MATH = {"Exp": "math.exp", "Log": "math.log", "Log2": "math.log2", "Log10": "math.log10",
         "Log1p": "math.log1p", "Expm1": "math.expm1", "Sin": "math.sin", "Cos": "math.cos",
         "Tanh": "math.tanh", "Erf": "math.erf"}
# Erf is math.erf, not the gelu kernels' fast_erf: the engine's torch.erf calls math.erf
# (numpy_families/special_functions.py), and this gives its bits.


def _math_rule(fn):
    def rule(emit, dtype, a):
        _float_result(dtype)
        return in_float64(emit, fn, emit.operand(a, dtype), dtype, dtype)
    return rule


for _name, _fn in _MATH.items():
    LOWERINGS[_name] = _math_rule(_fn)


# -------- activations
@lowers("Relu")
def _relu(emit, dtype, a):
    _float_result(dtype)  # the Numba backend's kernel: NaN passes (NaN <= 0 is False)
    zero, x = emit.const(0, dtype), emit.operand(a, dtype)
    return f"{zero} if {x} <= {zero} else {x}"


@lowers("LeakyRelu")
def _leaky_relu(emit, dtype, a, negative_slope):
    _float_result(dtype)
    x = emit.operand(a, dtype)
    return f"{x} if {x} > {emit.const(0, dtype)} else {x} * {emit.const(negative_slope, dtype)}"


@lowers("Sigmoid")
def _sigmoid(emit, dtype, a):
    _float_result(dtype)
    return in_float64(emit, "_sigmoid", emit.operand(a, dtype), dtype, dtype)


@lowers("Silu")
def _silu(emit, dtype, a):
    _float_result(dtype)
    return in_float64(emit, "_silu", emit.operand(a, dtype), dtype, dtype)


@lowers("Gelu")
def _gelu(emit, dtype, a, approximate):
    _float_result(dtype)
    x = emit.operand(a, dtype)
    if approximate == "none":
        # the Numba backend's kernel formula, in x's dtype (float32 in float32): its bits
        emit.approximation("gelu")
        return f"fast_gelu({x})"
    if approximate != "tanh":
        raise NotLowerable(f"gelu(approximate={approximate!r})")
    # the engine's steps (ops/activations.py _gelu_tanh): u2 = 2k (x + c x^3) rounded in
    # the tensor's dtype, then x * sigmoid(u2); computing u2 in float64 instead would be
    # more accurate than the engine, and 40 units in the last place away from it
    k2, c, three = (emit.const(v, dtype) for v in (2 * math.sqrt(2 / math.pi), 0.044715, 3))
    u2 = f"({k2} * ({x} + {c} * {x} ** {three}))"
    return f"{x} * {in_float64(emit, '_sigmoid', u2, dtype, dtype)}"


@lowers("Softplus")
def _softplus(emit, dtype, a, beta, threshold):
    _float_result(dtype)
    x = cast(emit.operand(a, dtype), dtype, np.float64)
    b, t = emit.const(beta, np.float64), emit.const(threshold, np.float64)
    emit.approximation("softplus")
    return cast(f"_softplus({x}, {b}, {t})", np.float64, dtype)


@lowers("Clamp")
def _clamp(emit, dtype, a, low, high):
    _float_result(dtype)
    for bound in (low, high):
        if isinstance(bound, Value):
            raise NotLowerable("clamp with a tensor bound")
    x = emit.operand(a, dtype)
    if low is not None:
        x = f"_clamp_min({x}, {emit.const(low, dtype)})"
    if high is not None:
        x = f"_clamp_max({x}, {emit.const(high, dtype)})"
    return x


def _select_rule(helper):
    def rule(emit, dtype, a, b):
        _float_result(dtype)
        return f"{helper}({emit.operand(a, dtype)}, {emit.operand(b, dtype)})"
    return rule


LOWERINGS["Maximum"] = _select_rule("_maximum")
LOWERINGS["Minimum"] = _select_rule("_minimum")


@lowers("Where")
def _where(emit, dtype, condition, a, b):
    if not isinstance(condition, Value):
        raise NotLowerable("where with a constant condition")
    c = cast(condition.name, condition.dtype, BOOL)
    return f"{emit.operand(a, dtype)} if {c} else {emit.operand(b, dtype)}"


@lowers("MaskedFill")
def _masked_fill(emit, dtype, a, mask, value):
    if isinstance(value, Value) or not isinstance(mask, Value):
        raise NotLowerable("masked_fill with a tensor value")
    m = cast(mask.name, mask.dtype, BOOL)
    return f"{emit.const(value, dtype)} if {m} else {emit.operand(a, dtype)}"


@lowers("ToDtype")
def _to_dtype(emit, dtype, a, target_dtype):
    return emit.operand(a, dtype)


# -------- comparisons and logic (plain functions of the engine: see fx/_python.py)
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _compare_rule(symbol):
    def rule(emit, dtype, a, b):
        operand_dtype = _promoted(a, b)
        return f"{emit.operand(a, operand_dtype)} {symbol} {emit.operand(b, operand_dtype)}"
    return rule


def _promoted(a, b):
    """The dtype both sides are compared in: the tensors' common dtype (a Python number
    takes the tensor's, as in the engine)."""
    dtypes = [x.dtype for x in (a, b) if isinstance(x, Value)]
    if not dtypes:
        raise NotLowerable("a comparison of two numbers")
    common = np.result_type(*dtypes)
    if common == BOOL and any(isinstance(x, float) for x in (a, b)):
        common = np.dtype(np.float32)
    elif common == BOOL and any(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
        # a bool tensor against an integer is compared as integers (True != -1); float64
        # holds 0, 1 and every integer's side of them exactly
        common = np.dtype(np.float64)
    return common


for _name, _symbol in _COMPARE.items():
    LOWERINGS[_name] = _compare_rule(_symbol)


def _truth(emit, x):
    if isinstance(x, Value):
        return cast(x.name, x.dtype, BOOL)
    return emit.const(bool(x), BOOL)


@lowers("logical_and")
def _logical_and(emit, dtype, a, b):
    return f"{_truth(emit, a)} and {_truth(emit, b)}"


@lowers("logical_or")
def _logical_or(emit, dtype, a, b):
    return f"{_truth(emit, a)} or {_truth(emit, b)}"


@lowers("logical_xor")
def _logical_xor(emit, dtype, a, b):
    return f"{_truth(emit, a)} != {_truth(emit, b)}"


@lowers("logical_not")
def _logical_not(emit, dtype, a):
    return f"not {_truth(emit, a)}"


def _bool_only(*xs):
    if any(not isinstance(x, Value) or x.dtype != BOOL for x in xs):
        raise NotLowerable("bitwise ops on integers")


@lowers("bitwise_and")
def _bitwise_and(emit, dtype, a, b):
    _bool_only(a, b)
    return f"{a.name} and {b.name}"


@lowers("bitwise_or")
def _bitwise_or(emit, dtype, a, b):
    _bool_only(a, b)
    return f"{a.name} or {b.name}"


@lowers("bitwise_xor")
def _bitwise_xor(emit, dtype, a, b):
    _bool_only(a, b)
    return f"{a.name} != {b.name}"


@lowers("bitwise_not")
def _bitwise_not(emit, dtype, a):
    _bool_only(a)
    return f"not {a.name}"


@lowers("isnan")
def _isnan(emit, dtype, a):
    return f"{a.name} != {a.name}" if a.dtype in FLOATS else emit.const(False, BOOL)


@lowers("isinf")
def _isinf(emit, dtype, a):
    return f"math.isinf({a.name})" if a.dtype in FLOATS else emit.const(False, BOOL)


@lowers("isfinite")
def _isfinite(emit, dtype, a):
    return f"math.isfinite({a.name})" if a.dtype in FLOATS else emit.const(True, BOOL)


def fusible(node):
    """True when ``node`` is an elementwise op with a scalar formula in this table (its
    arguments are checked when the kernel is written)."""
    return (node.op == "call_function" and node.kind == op_kinds.ELEMENTWISE
            and getattr(node.target, "__name__", "") in LOWERINGS
            and getattr(node.target, "__module__", "").startswith("learntorch."))


# -------- reductions at the end of a kernel
#: reduction Function name -> what it computes
REDUCTIONS = {"Sum": "sum", "SumAll": "sum", "Mean": "mean", "MeanAll": "mean",
              "Amax": "amax", "MaxAll": "amax", "Amin": "amin", "MinAll": "amin"}


def reduction(node):
    """``(kind, dims, keepdim)`` when ``node`` is a reduction a kernel can end with, else None.

    ``kind`` is ``"sum"``, ``"mean"``, ``"amax"`` or ``"amin"``; a ``dtype=`` other than the
    input's, an integer input or an empty one is left to the engine.
    """
    if node.op != "call_function" or not getattr(node.target, "__module__", "").startswith(
            "learntorch."):
        return None
    kind = REDUCTIONS.get(getattr(node.target, "__name__", ""))
    if kind is None or not node.args or node.tensor_meta is None:
        return None
    source = node.args[0]
    meta = getattr(source, "tensor_meta", None)
    if meta is None or meta.dtype.np not in FLOATS or 0 in meta.shape:
        return None
    dims, keepdim = node.args[1], node.args[2]
    if kind in ("sum", "mean") and len(node.args) > 3 and node.args[3] is not None \
            and node.args[3] is not meta.dtype:
        return None
    if not isinstance(dims, tuple) or not all(isinstance(d, int) for d in dims):
        return None
    return kind, tuple(sorted(d % max(len(meta.shape), 1) for d in dims)), bool(keepdim)
