"""Arithmetic with broadcasting: + - * / // % ** and their gradients.

Each backward returns the gradient *as if no broadcasting happened* (the
shape of the output); the engine then sums it back to each input's shape
(``Tensor.sum_to_size``).  Python numbers are constants: their
gradient is None.

Forward and backward run with numpy's floating-point warnings off (``Function.apply``
and the engine see to it): 1/0, 0/0 and overflow give inf/nan as in torch, without
a RuntimeWarning.  Integer division by zero has no inf to give, so it raises, as
torch does.
"""
import numpy as np

from .. import _dtypes
from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_array, as_operand, array_of, check_same_device, wrap


# ---------------------------------------------------------------- operands and results
def _operand(x):
    """A tensor or a Python float as it is (the commonest operands), else as_operand's checks."""
    return x if isinstance(x, (Tensor, float)) else as_operand(x)


def _operands(a, b, op, dtype=None):
    """The arrays (or Python numbers) to compute ``a op b`` on, in the result ``dtype``
    (torch's type promotion unless given), after checking devices and shapes.

    One exception to "in the result dtype": torch multiplies and divides a float16
    tensor by a scalar (a Python number or a 0-d tensor) in float32 ("opmath") and
    rounds once, so ``float16(297) * 0.37`` is 109.875, where rounding 0.37 to float16
    first gives 109.9375.  Those operands come back in float32; the op's result is
    cast to ``dtype`` (``_result``).  Only a scalar *second* operand is read so: the
    first is converted to float16 first (``tensor(0.37) * float16(297)`` is 109.9375,
    an int32 too large for float16 is inf).  (+ and - round the scalar to float16 first
    in torch too, which is what computing in float16 does.)"""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a._device is not b._device and a._device != b._device:
            check_same_device(a, b)
        if a._data.shape != b._data.shape:
            _check_broadcast(a._data.shape, b._data.shape, op)
        dtype = dtype or (a._dtype if a._dtype is b._dtype else None)  # nothing to promote
    dtype = dtype or _dtypes.result_type(a, b)
    if dtype.itemsize < 4 and op in _OPMATH_OPS:  # float16 and a number: torch's opmath
        return _opmath(a, b, dtype)
    return _in_dtype(a, dtype), _in_dtype(b, dtype), dtype


def _opmath(a, b, dtype):
    """The operands of a float16 mul/div/floor_divide (see _operands): in float32 when the
    second is a scalar (the first converted to ``dtype`` on the way), else in ``dtype``."""
    if dtype.is_floating_point and _is_scalar(b):
        a = _in_dtype(a, dtype)
        return (a.astype(np.float32) if isinstance(a, np.ndarray) else a,
                _in_dtype(b, _dtypes.float32), dtype)
    return _in_dtype(a, dtype), _in_dtype(b, dtype), dtype


# the ops whose scalar operand torch keeps in float32 for float16 tensors (see _operands)
_OPMATH_OPS = frozenset({"mul", "div", "floor_divide"})


def _is_scalar(x):
    """A Python number, or a 0-d tensor: what torch's kernels read as one "CPU scalar"."""
    return not isinstance(x, Tensor) or x._data.ndim == 0


def _in_dtype(x, dtype):
    """A tensor's array cast to ``dtype``; a Python int that does not fit an integer ``dtype``
    wraps around into it as in torch (``uint8_tensor - 1`` is 255 where it was 0), where numpy
    would raise OverflowError; other numbers stay weakly typed Python numbers."""
    if isinstance(x, Tensor):
        return x._data if x._data.dtype == dtype.np else x._data.astype(dtype.np)
    if type(x) is int and dtype.np.kind in "iu":
        return _wrapped_int(x, dtype)
    return x  # a Python number: numpy keeps the array's dtype (NEP 50), as torch does


def _wrapped_int(x, dtype):
    info = np.iinfo(dtype.np)
    if not info.min <= x <= info.max:
        return np.array(x).astype(dtype.np)[()]
    return x


def _result(out, dtype):
    """The backend's array as a tensor of ``dtype`` (numpy may have widened it)."""
    return Tensor._wrap(out if out.dtype == dtype.np else out.astype(dtype.np))


def _check_broadcast(sa, sb, op):
    """Shapes broadcast when, aligned from the right, each pair of sizes is equal or has a 1."""
    try:
        np.broadcast_shapes(sa, sb)
    except ValueError:
        _raise_not_broadcastable(sa, sb, op)


def _raise_not_broadcastable(sa, sb, op):
    raise RuntimeError(
        f"{op}: the size of tensor a ({list(sa)}) must match the size of tensor b "
        f"({list(sb)}) at every non-singleton dimension, aligned from the right; shapes "
        f"{list(sa)} and {list(sb)} cannot be broadcast. Use unsqueeze/reshape/view to "
        "insert size-1 dimensions where one should be repeated.") from None


def _check_integer_divisor(y, dtype, op, x=None):
    """Integers have no inf: torch raises for an integer division by zero (of at least one
    element: dividing an empty tensor by 0 divides nothing)."""
    if getattr(x, "size", 1) == 0:
        return
    if not dtype.is_floating_point and (
            y == 0 if not hasattr(y, "shape") else bool(backends.current.eq(y, 0).any())):
        raise RuntimeError(f"ZeroDivisionError: {op} of {dtype} values by zero; integers have "
                           "no inf or nan. Divide floating tensors instead (e.g. a.float()).")


def _check_not_bool(dtype, op):
    """floor division, remainder and pow of two bools are not defined in torch."""
    if dtype is _dtypes.bool_:
        raise NotImplementedError(f"\"{op}\" not implemented for 'Bool': convert the operands "
                                  "first, e.g. a.long()")


# ---------------------------------------------------------------- what backward needs
def _save(ctx, a, b):
    """Keep the operands backward needs: tensors as saved tensors (so an in-place change
    is caught), numbers as constants.  Pass None for an operand no gradient formula uses:
    torch lets you change a tensor in place when no formula needs it."""
    ctx.save_for_backward(*(x if isinstance(x, Tensor) else None for x in (a, b)))
    ctx.constants = tuple(None if isinstance(x, Tensor) else x for x in (a, b))


def _load(ctx):
    """The two operands ``_save`` kept: saved tensors (version-checked) or numbers."""
    return tuple(t if t is not None else c for t, c in zip(ctx.saved_tensors, ctx.constants))


def _scaled(y, alpha, dtype):
    """``alpha * y`` for add/sub, with torch's checks that alpha fits the result dtype.

    For bool results torch converts alpha to bool first: any nonzero alpha keeps ``y``
    (so ``add(True, True, alpha=-1)`` is True, a logical or)."""
    if isinstance(alpha, bool) and dtype is not _dtypes.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not dtype.is_floating_point:
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating "
                           f"point number (the result dtype is {dtype}); pass an int alpha or "
                           "convert the tensors with .float().")
    if dtype is _dtypes.bool_:
        return backends.current.mul(y, bool(alpha)) if hasattr(y, "shape") else (
            bool(y) and bool(alpha))
    if isinstance(alpha, int) and not isinstance(alpha, bool):
        alpha = _in_dtype(alpha, dtype)  # wrapped into a small integer dtype, as torch does
    return y * alpha


def _check_no_bool_subtraction(a, b):
    for x in (a, b):
        if isinstance(x, bool) or (isinstance(x, Tensor) and x._dtype is _dtypes.bool_):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")


# ---------------------------------------------------------------- + - * /
class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        x, y, dtype = _operands(a, b, "add")
        ctx.constants = alpha
        if alpha != 1 or isinstance(alpha, bool):  # add(a, b, alpha=2.5): a + 2.5 * b
            y = _scaled(y, alpha, dtype)
        return _result(backends.current.add(x, y), dtype)

    @staticmethod
    def backward(ctx, grad):
        # d(a + alpha * b) = da + alpha * db; one gradient per argument given (alpha is optional
        # and a number: None)
        alpha = ctx.constants
        return (grad, grad if alpha == 1 else grad * alpha, None)[:len(ctx.needs_input_grad)]


class Sub(Function):
    """a - alpha * b; torch calls the node of number - tensor (``2 - x``) RsubBackward1
    (``subtraction(a)`` picks the class)."""

    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        _check_no_bool_subtraction(a, b)
        x, y, dtype = _operands(a, b, "sub")
        ctx.constants = alpha
        if alpha != 1 or isinstance(alpha, bool):
            y = _scaled(y, alpha, dtype)
        return _result(backends.current.sub(x, y), dtype)

    @staticmethod
    def backward(ctx, grad):
        alpha = ctx.constants
        return (grad, -grad if alpha == 1 else grad * -alpha, None)[:len(ctx.needs_input_grad)]


class Rsub(Sub):
    node_name = "RsubBackward1"


def subtraction(a):
    """The Function of ``a - b``: Sub, or Rsub when ``a`` is a number (``2 - x``)."""
    return Sub if isinstance(a, Tensor) else Rsub


class Mul(Function):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _operands(a, b, "mul")
        needs_a, needs_b = ctx.needs_input_grad
        _save(ctx, a if needs_b else None, b if needs_a else None)  # d(ab)/da = b, d(ab)/db = a
        return _result(backends.current.mul(x, y), dtype)

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)


class Div(Function):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        dtype = _dtypes.result_type(a, b)
        if not dtype.is_floating_point:  # true division of integers gives the default float
            dtype = _dtypes.get_default_dtype()
        x, y, dtype = _operands(a, b, "div", dtype)
        _save(ctx, a if ctx.needs_input_grad[1] else None, b)  # d/da = 1/b, d/db = -a/b^2
        return _result(backends.current.div(x, y), dtype)

    @staticmethod
    def backward(ctx, grad):
        # d(a / b) = da / b - a * db / b^2
        a, b = _load(ctx)
        ga = grad / b if ctx.needs_input_grad[0] else None
        # (as -grad * ((a / b) / b): torch's order, so a second derivative rounds as its own)
        gb = -grad * ((a / b) / b) if ctx.needs_input_grad[1] else None
        return ga, gb


class Pow(Function):
    """a ** b.  torch names the node after the operand kinds: PowBackward0 for
    tensor ** number, PowBackward1 for tensor ** tensor, PowBackward2 for number ** tensor."""

    node_name = "PowBackward0"

    @classmethod
    def apply(cls, a, b):
        if cls is Pow and isinstance(b, Tensor):
            cls = PowTensors if isinstance(a, Tensor) else PowNumberBase
        return super(Pow, cls).apply(a, b)

    @staticmethod
    def forward(ctx, a, b):
        if type(b) is int and isinstance(a, Tensor) and not a._dtype.is_floating_point:
            _dtypes.check_scalar_fits(b, a._dtype)  # torch converts the exponent, checked
        x, y, dtype = _operands(a, b, "pow")
        if not dtype.is_floating_point:
            if isinstance(b, (int, float)) and b < 0:  # only a *number* exponent is refused
                raise RuntimeError("Integers to negative integer powers are not allowed. Use a "
                                   "float base, e.g. x.float() ** -1")
            if isinstance(b, Tensor):
                _check_not_bool(dtype, "pow")
        out = wrap(as_array(backends.current.pow(x, y), dtype=dtype.np))
        _save(ctx, a, b)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            # d(a^b)/da = b * a^(b-1); where b == 0 the derivative is 0, even at a == 0
            if isinstance(b, Tensor):
                if b._dtype is _dtypes.bool_:  # a bool exponent has no b - 1: count it as 0/1
                    b = b.to(_dtypes.int64)
                ga = grad * b * a ** (b - 1)
                ga = ga.masked_fill(b == 0, 0.0)
            elif b == 0:
                ga = grad * 0.0
            else:
                ga = grad * b * a ** (b - 1)
        if ctx.needs_input_grad[1]:
            # d(a^b)/db = a^b * log(a); torch defines it as 0 where a == 0 and b >= 0
            from .unary import log
            base = a if isinstance(a, Tensor) else _number_tensor(a, b)
            gb = grad * (base ** b) * log(base)
            gb = gb.masked_fill((base == 0) & (b >= 0), 0.0)
        return ga, gb


def _number_tensor(number, like):
    """A Python number as a 0-d tensor of ``like``'s dtype, on its device."""
    return Tensor._wrap(backends.current.full((), number, like._data.dtype, like=like._data))


class PowTensors(Pow):
    node_name = "PowBackward1"


class PowNumberBase(Pow):
    node_name = "PowBackward2"


class FloorDivide(Function):
    node_name = "FloorDivideBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _operands(a, b, "floor_divide")
        _check_not_bool(dtype, "div_floor")
        _check_integer_divisor(y, dtype, "floor_divide", x)
        return wrap(as_array(backends.current.floor_divide(x, y), dtype=dtype.np))

    @staticmethod
    def backward(ctx, grad):
        # torch has no derivative for floor_divide (div with rounding_mode has, and it is 0)
        raise RuntimeError("derivative for aten::floor_divide is not implemented. Use "
                           "torch.div(a, b, rounding_mode='floor'), whose gradient is zero, or "
                           "detach() the operands.")


class RoundedDiv(Function):
    """div with rounding_mode 'trunc' or 'floor': a staircase, flat between jumps."""

    node_name = "DivBackward2"

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        x, y, dtype = _operands(a, b, "floor_divide")  # (float16 divides in float32: opmath)
        _check_not_bool(dtype, f"div_{rounding_mode}")
        _check_integer_divisor(y, dtype, f"div(rounding_mode='{rounding_mode}')", x)
        b_ = backends.current
        q = b_.floor_divide(x, y) if rounding_mode == "floor" else b_.trunc_divide(x, y)
        return wrap(as_array(q, dtype=dtype.np))

    @staticmethod
    def backward(ctx, grad):
        zero = grad * 0  # the derivative of a step function is 0 (torch's convention)
        return zero, zero, None


class Remainder(Function):
    """a % b (the sign of b, as Python's %); RemainderBackward1 when both are tensors (torch)."""

    node_name = "RemainderBackward0"

    @classmethod
    def apply(cls, a, b):
        if cls is Remainder and isinstance(a, Tensor) and isinstance(b, Tensor):
            cls = RemainderTensors
        return super(Remainder, cls).apply(a, b)

    @staticmethod
    def forward(ctx, a, b):
        return _remainder_forward(ctx, a, b, "remainder", "remainder")

    @staticmethod
    def backward(ctx, grad):
        # a % b = a - floor(a / b) * b, and floor(a / b) is flat between jumps
        return _remainder_backward(ctx, grad, "floor")


class RemainderTensors(Remainder):
    node_name = "RemainderBackward1"


class Fmod(Function):
    """C's fmod: a - trunc(a / b) * b, the sign of a; FmodBackward1 when both are tensors."""

    node_name = "FmodBackward0"

    @classmethod
    def apply(cls, a, b):
        if cls is Fmod and isinstance(b, Tensor):
            cls = FmodTensors
        return super(Fmod, cls).apply(a, b)

    @staticmethod
    def forward(ctx, a, b):
        return _remainder_forward(ctx, a, b, "fmod", "fmod_cpu")

    @staticmethod
    def backward(ctx, grad):
        # fmod(a, b) = a - trunc(a / b) * b, and trunc(a / b) is flat between jumps
        return _remainder_backward(ctx, grad, "trunc")


class FmodTensors(Fmod):
    node_name = "FmodBackward1"


def _remainder_forward(ctx, a, b, op, kernel_name):
    """remainder / fmod: the backend method ``op`` on the operands in their result dtype."""
    _save(ctx, a, b)
    x, y, dtype = _operands(a, b, op)
    _check_not_bool(dtype, kernel_name)
    _check_integer_divisor(y, dtype, op, x)
    return wrap(as_array(getattr(backends.current, op)(x, y), dtype=dtype.np))


def _remainder_backward(ctx, grad, rounding_mode):
    """d/da = 1; d/db = -(a / b rounded as the op rounds): the quotient is flat between jumps."""
    a, b = _load(ctx)
    gb = None
    if ctx.needs_input_grad[1]:
        if not isinstance(a, Tensor):
            raise RuntimeError("derivative for aten::remainder is not implemented (for a "
                               "number % tensor). Write it as a tensor: "
                               "torch.full_like(x, number) % x.")
        # torch computes half-precision arithmetic in float32 ("opmath") and keeps a
        # 0-d operand at its own precision, so divide in float32 before rounding
        wide = _dtypes.float32 if grad.dtype is _dtypes.float16 else grad.dtype
        gb = -grad * div(a.to(wide), b.to(wide), rounding_mode=rounding_mode).to(grad.dtype)
    return grad, gb


def add(input, other, *, alpha=1):
    """``input + alpha * other`` (``Tensor.__add__``)."""
    if alpha == 1 and not isinstance(alpha, bool):
        return Add.apply(input, _operand(other))
    return Add.apply(input, _operand(other), alpha)


def sub(input, other, *, alpha=1):
    other = _operand(other)
    if alpha == 1 and not isinstance(alpha, bool):
        return subtraction(input).apply(input, other)
    return subtraction(input).apply(input, other, alpha)


subtract = sub


def mul(input, other):
    """``input * other`` (``Tensor.__mul__``)."""
    return Mul.apply(input, _operand(other))


multiply = mul


def div(input, other, *, rounding_mode=None):
    other = _operand(other)
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode in ("trunc", "floor"):
        return RoundedDiv.apply(input, other, rounding_mode)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                     f"but found '{rounding_mode}'")


divide = true_divide = div


def floor_divide(input, other):
    return FloorDivide.apply(input, as_operand(other))


def remainder(input, other):
    return Remainder.apply(input, as_operand(other))


def fmod(input, other):
    """The remainder of ``input / other`` rounded towards zero (the sign of ``input``, as
    C's fmod; ``remainder`` / ``%`` takes the sign of ``other``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fmod() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}): input must be a "
                        "Tensor; other a Tensor or a number")
    return Fmod.apply(input, as_operand(other))


def pow(input, exponent):
    return Pow.apply(input, as_operand(exponent, "exponent"))


def rsub(input, other, *, alpha=1):
    """other - alpha * input (for ``2 - x``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    other = as_operand(other)
    if alpha == 1 and not isinstance(alpha, bool):
        return subtraction(other).apply(other, input)
    return subtraction(other).apply(other, input, alpha)
