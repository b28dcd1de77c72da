"""Arithmetic with broadcasting: + - * / // % ** and their gradients.

Each backward returns the gradient *as if no broadcasting happened* (the
shape of the output); the engine then sums it back to each input's shape
(``ops.broadcast.sum_to_shape``).  Python numbers are constants: their
gradient is None.

Every forward and backward runs with numpy's floating-point warnings off
(``Function.apply`` and the engine see to it, cheaply: ``_float_errors.py``):
1/0, 0/0 and overflow give inf/nan as in torch, without a RuntimeWarning.
Integer division by zero has no inf to give, so it raises, as torch does.
"""
import numpy as np

from .. import _dtypes
from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function, _shared_tuple
from ._helpers import (as_array, as_operand, array_of, check_same_device,
                       recording_gradient_graph, wrap)
from .broadcast import _broadcast_tuple as broadcast_shapes


def _operands(a, b, op):
    """Raw arrays of ``a`` and ``b`` in their common dtype, after checking shapes and devices."""
    if b.__class__ is float and a.__class__ is Tensor and a._dtype.is_floating_point:
        # the commonest case (x * 0.5), decided at once
        return a._data, _float_constant(b, a._data), a._dtype
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a._device is not b._device and a._device != b._device:
            check_same_device(a, b)
        sa, sb = a._data.shape, b._data.shape
        if sa != sb:
            _check_broadcast(sa, sb, op)
    dtype = _dtypes.result_type(a, b)
    return _array_or_scalar(a, dtype), _array_or_scalar(b, dtype), dtype


_constants = {}  # (number, numpy dtype) -> read-only 0-d array


def _float_constant(number, array):
    """A Python float as a 0-d array of ``array``'s float dtype, made once per value.

    numpy is slow with a Python float operand: it treats it as a "weak" scalar and
    converts it on every call (0.42 us for a one-element multiply, 0.22 us with a
    0-d array of the right dtype).  The value is what that conversion gives, so
    the result is the same.  Device arrays keep the number (their own kernels take it).
    """
    if array.__class__ is not np.ndarray:
        return number
    key = (number, array.dtype)
    constant = _constants.get(key)
    if constant is None:
        if len(_constants) > 1024:
            _constants.clear()
        constant = np.array(number, dtype=array.dtype)
        constant.flags.writeable = False
        _constants[key] = constant
    return constant


def _array_or_scalar(x, dtype):
    """A tensor's array cast to ``dtype``; a Python int that does not fit an integer ``dtype``
    wraps around into it as in torch (``uint8_tensor - 1`` is 255 where it was 0), where numpy
    would raise OverflowError; other numbers stay weakly typed Python numbers."""
    if type(x) is int and dtype.np.kind in "iu":
        info = np.iinfo(dtype.np)
        if not info.min <= x <= info.max:
            return np.array(x).astype(dtype.np)[()]
    return array_of(x, dtype)


def _check_broadcast(sa, sb, op):
    try:
        broadcast_shapes(sa, sb)
    except RuntimeError:
        raise RuntimeError(
            f"{op}: the size of tensor a ({list(sa)}) must match the size of tensor b "
            f"({list(sb)}) at every non-singleton dimension, aligned from the right; shapes "
            f"{list(sa)} and {list(sb)} cannot be broadcast. Use unsqueeze/reshape/view to "
            "insert size-1 dimensions where one should be repeated.") from None


def _check_integer_divisor(y, dtype, op):
    """Integers have no inf: torch raises for an integer division by zero."""
    if not dtype.is_floating_point and np.any(as_array(y) == 0):
        raise RuntimeError(f"ZeroDivisionError: {op} of {dtype} values by zero; integers have "
                           "no inf or nan. Divide floating tensors instead (e.g. a.float()).")


def _check_not_bool(dtype, op):
    """floor division, remainder and pow of two bools are not defined in torch."""
    if dtype is _dtypes.bool_:
        raise NotImplementedError(f"\"{op}\" not implemented for 'Bool': convert the operands "
                                  "first, e.g. a.long()")


_NOTHING_SAVED, _NO_VERSIONS = (None, None), (0, 0)


def _save(ctx, a, b, keep_a=True, keep_b=True):
    """Save the operands backward will need: tensors as saved tensors (so an in-place
    change is caught), numbers as constants.  Saving only what is needed matters: torch
    lets you change a tensor in place when no gradient formula uses it.  (What
    ``save_for_backward`` does, written out: every arithmetic op runs this.)"""
    if not ctx.recording:
        return  # nothing is recorded (no_grad, or inside a backward pass): nothing to keep
    ta = a if keep_a and isinstance(a, Tensor) else None
    tb = b if keep_b and isinstance(b, Tensor) else None
    if ta is None and tb is None:  # (x * 2.0 needs no tensor: shared tuples, see function.py)
        ctx._saved, ctx._saved_versions = _NOTHING_SAVED, _NO_VERSIONS
    else:
        ctx._saved = (ta, tb)
        ctx._saved_versions = _shared_tuple((0 if ta is None else ta._version_counter[0],
                                             0 if tb is None else tb._version_counter[0]))
    ctx.constants = _shared_tuple((None if isinstance(a, Tensor) else a,
                                   None if isinstance(b, Tensor) else b))


def _load(ctx):
    """The two operands backward needs: saved tensors (version-checked) or numbers."""
    if ctx._saved is _NOTHING_SAVED:  # numbers only (x * 2.0): nothing to check
        return ctx.constants
    ta, tb = ctx.saved_tensors
    ca, cb = ctx.constants
    return (ta if ta is not None else ca), (tb if tb is not None else cb)


def _scaled(y, alpha, dtype):
    """``alpha * y`` for add/sub, with torch's checks that alpha fits the result dtype."""
    if alpha == 1 and not isinstance(alpha, bool):
        return y
    if isinstance(alpha, bool) and dtype is not _dtypes.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not dtype.is_floating_point:
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating "
                           f"point number (the result dtype is {dtype}); pass an int alpha or "
                           "convert the tensors with .float().")
    return y * alpha


class Add(Function):
    node_name = "AddBackward0"
    forward_uses_arrays_only = True

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        x, y, dtype = _operands(a, b, "add")
        ctx.constants = alpha  # the slot built-in ops keep their numbers in
        out = backends.current.add(x, y if alpha.__class__ is int and alpha == 1
                                   else _scaled(y, alpha, dtype))
        return wrap(out if out.dtype is dtype.np or out.dtype == dtype.np else out.astype(dtype.np))

    @staticmethod
    def backward(ctx, grad):
        # d(a + alpha * b) = da + alpha * db
        alpha = ctx.constants
        return grad, (grad if alpha == 1 else grad * alpha), None

    backward_arrays = backward  # the same lines work on arrays (see Function.backward_arrays)


def _check_no_bool_subtraction(a, b):
    for x in (a, b):
        if isinstance(x, bool) or (isinstance(x, Tensor) and x._dtype is _dtypes.bool_):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")


class Sub(Function):
    """a - alpha * b; torch calls the node of number - tensor (``2 - x``) RsubBackward1
    (``subtraction(a)`` picks the class)."""

    node_name = "SubBackward0"
    forward_uses_arrays_only = True

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        _check_no_bool_subtraction(a, b)
        x, y, dtype = _operands(a, b, "sub")
        ctx.constants = alpha  # the slot built-in ops keep their numbers in
        out = backends.current.sub(x, y if alpha.__class__ is int and alpha == 1
                                   else _scaled(y, alpha, dtype))
        return wrap(out if out.dtype is dtype.np or out.dtype == dtype.np else out.astype(dtype.np))

    @staticmethod
    def backward(ctx, grad):
        alpha = ctx.constants
        return grad, (-grad if alpha == 1 else grad * -alpha), None

    backward_arrays = backward  # the same lines work on arrays


class Rsub(Sub):
    node_name = "RsubBackward1"


def subtraction(a):
    """The Function of ``a - b``: Sub, or Rsub when ``a`` is a number (``2 - x``)."""
    return Sub if isinstance(a, Tensor) else Rsub


class Mul(Function):
    node_name = "MulBackward0"
    forward_uses_arrays_only = True

    @staticmethod
    def forward(ctx, a, b):
        if ctx.recording:
            needs = ctx.needs_input_grad
            _save(ctx, a, b, needs[1], needs[0])  # d(ab)/da = b, d(ab)/db = a
        x, y, dtype = _operands(a, b, "mul")
        out = backends.current.mul(x, y)
        return wrap(out if out.dtype is dtype.np or out.dtype == dtype.np else out.astype(dtype.np))

    @staticmethod
    def backward(ctx, grad):
        if not recording_gradient_graph():
            # the same two products on raw arrays: nothing is being recorded, so the
            # Function machinery of ``grad * b`` would be pure overhead
            return tuple(None if g is None else wrap(g)
                         for g in Mul.backward_arrays(ctx, grad._data))
        a, b = _load(ctx)
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)

    @staticmethod
    def backward_arrays(ctx, grad):
        a, b = _load(ctx)
        needs = ctx.needs_input_grad
        return (_times(grad, b) if needs[0] else None,
                _times(grad, a) if needs[1] else None)


def _times(g, x):
    """``g * x`` for a gradient array and an operand, computed in the gradient's dtype."""
    if x.__class__ is float:
        if g.dtype.kind == "f":
            x = _float_constant(x, g)
    elif isinstance(x, Tensor):
        x = x._data if x._data.dtype == g.dtype else x._data.astype(g.dtype)
    return np.multiply(g, x)


class Div(Function):
    node_name = "DivBackward0"
    forward_uses_arrays_only = True

    @staticmethod
    def forward(ctx, a, b):
        if ctx.recording:
            _save(ctx, a, b, ctx.needs_input_grad[1], True)  # d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
        x, y, dtype = _operands(a, b, "div")
        if not dtype.is_floating_point:  # true division of integers gives the default float
            dtype = _dtypes.get_default_dtype()
            x = x.astype(dtype.np) if isinstance(x, np.ndarray) else x
            y = y.astype(dtype.np) if isinstance(y, np.ndarray) else y
        out = backends.current.div(x, y)
        return wrap(out if out.dtype is dtype.np or out.dtype == dtype.np else out.astype(dtype.np))

    @staticmethod
    def backward(ctx, grad):
        # d(a / b) = da / b - a * db / b^2
        a, b = _load(ctx)
        ga = grad / b if ctx.needs_input_grad[0] else None
        gb = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb


def _integer_power(x, y):
    """Integer ``x ** y`` with torch's answer for negative exponents: the integer part of 1/x**|y|.

    That is 1 for x == 1, +-1 for x == -1 (by the parity of y) and 0 otherwise.
    """
    negative = as_array(y) < 0
    if not negative.any():
        return np.power(x, y)
    out = np.power(x, np.where(negative, 0, y))
    sign = np.where(as_array(y) % 2 == 0, 1, -1)
    reciprocal = np.where(x == 1, 1, np.where(x == -1, sign, 0))
    return np.where(negative, reciprocal, out)


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
        x, y, dtype = _operands(a, b, "pow")
        if not dtype.is_floating_point:
            if isinstance(b, (int, float)) and b < 0:  # only a *number* exponent is refused
                raise RuntimeError("Integers to negative integer powers are not allowed. Use a "
                                   "float base, e.g. x.float() ** -1")
            if isinstance(b, Tensor):
                _check_not_bool(dtype, "pow")
        with np.errstate(all="ignore"):
            out = np.power(x, y) if dtype.is_floating_point else _integer_power(x, y)
        out = wrap(as_array(out, dtype=dtype.np))
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
            base = a if isinstance(a, Tensor) else Tensor._wrap(as_array(a, dtype=b._data.dtype))
            gb = grad * (base ** b) * log(base)
            gb = gb.masked_fill((base == 0) & (b >= 0), 0.0)
        return ga, gb


class PowTensors(Pow):
    node_name = "PowBackward1"


class PowNumberBase(Pow):
    node_name = "PowBackward2"


def _floor_divide(x, y):
    """The quotient rounded towards -inf, as Python's ``//`` (and torch's)."""
    return np.floor_divide(x, y)


def _trunc_divide(x, y, dtype):
    """The quotient rounded towards zero (C's integer division)."""
    if dtype.is_floating_point:
        return np.trunc(np.true_divide(x, y))
    q = np.floor_divide(x, y)
    # floor went one below the truncated quotient where the signs differ and it was inexact
    return q + ((np.remainder(x, y) != 0) & ((as_array(x) < 0) != (as_array(y) < 0)))


class FloorDivide(Function):
    node_name = "FloorDivideBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _operands(a, b, "floor_divide")
        _check_not_bool(dtype, "div_floor")
        _check_integer_divisor(y, dtype, "floor_divide")
        with np.errstate(all="ignore"):
            return wrap(as_array(_floor_divide(x, y), dtype=dtype.np))

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
        x, y, dtype = _operands(a, b, "div")
        _check_not_bool(dtype, f"div_{rounding_mode}")
        _check_integer_divisor(y, dtype, f"div(rounding_mode='{rounding_mode}')")
        with np.errstate(all="ignore"):
            q = _floor_divide(x, y) if rounding_mode == "floor" else _trunc_divide(x, y, dtype)
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
        _save(ctx, a, b)
        x, y, dtype = _operands(a, b, "remainder")
        _check_not_bool(dtype, "remainder")
        _check_integer_divisor(y, dtype, "remainder")
        with np.errstate(all="ignore"):
            return wrap(as_array(np.remainder(x, y), dtype=dtype.np))

    @staticmethod
    def backward(ctx, grad):
        # a % b = a - floor(a / b) * b, and floor(a / b) is flat between jumps
        a, b = _load(ctx)
        gb = None
        if ctx.needs_input_grad[1]:
            if not isinstance(a, Tensor):
                raise RuntimeError("derivative for aten::remainder is not implemented (for a "
                                   "number % tensor). Write it as a tensor: "
                                   "torch.full_like(x, number) % x.")
            # torch computes half-precision arithmetic in float32 ("opmath") and keeps a
            # 0-d operand at its own precision, so divide in float32 before flooring
            wide = _dtypes.float32 if grad.dtype is _dtypes.float16 else grad.dtype
            gb = -grad * div(a.to(wide), b.to(wide), rounding_mode="floor").to(grad.dtype)
        return grad, gb


class RemainderTensors(Remainder):
    node_name = "RemainderBackward1"


def add(input, other, *, alpha=1):
    other = as_operand(other)
    if alpha == 1 and not isinstance(alpha, bool):
        return Add.apply(input, other)
    return Add.apply(input, other, alpha)


def sub(input, other, *, alpha=1):
    other = as_operand(other)
    if alpha == 1 and not isinstance(alpha, bool):
        return subtraction(input).apply(input, other)
    return subtraction(input).apply(input, other, alpha)


subtract = sub


def mul(input, other):
    return Mul.apply(input, as_operand(other))


multiply = mul


def div(input, other, *, rounding_mode=None):
    other = as_operand(other)
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
