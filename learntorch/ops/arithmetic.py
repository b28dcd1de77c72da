"""Arithmetic with broadcasting: + - * / // % ** and their gradients.

Each backward returns the gradient *as if no broadcasting happened* (the
shape of the output); the engine then sums it back to each input's shape
(``ops.broadcast.sum_to_shape``).  Python numbers are constants: their
gradient is None.
"""
import numpy as np

from .. import _dtypes
from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_operand, array_of, check_same_device, wrap
from .broadcast import broadcast_shapes


def _operands(a, b, op):
    """Raw arrays of ``a`` and ``b`` in their common dtype, after checking shapes and devices."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a._device is not b._device and a._device != b._device:
            check_same_device(a, b)
        sa, sb = a._data.shape, b._data.shape
        if sa != sb:
            _check_broadcast(sa, sb, op)
    dtype = _dtypes.result_type(a, b)
    return array_of(a, dtype), array_of(b, dtype), dtype


def _check_broadcast(sa, sb, op):
    try:
        broadcast_shapes(sa, sb)
    except RuntimeError:
        raise RuntimeError(
            f"{op}: the size of tensor a ({list(sa)}) must match the size of tensor b "
            f"({list(sb)}) at every non-singleton dimension, aligned from the right; shapes "
            f"{list(sa)} and {list(sb)} cannot be broadcast. Use unsqueeze/reshape/view to "
            "insert size-1 dimensions where one should be repeated.") from None


def _save(ctx, a, b):
    """Save both operands: tensors through save_for_backward, numbers as constants."""
    ctx.save_for_backward(a if isinstance(a, Tensor) else None,
                          b if isinstance(b, Tensor) else None)
    ctx.constants = (None if isinstance(a, Tensor) else a, None if isinstance(b, Tensor) else b)


def _load(ctx):
    ta, tb = ctx.saved_tensors
    ca, cb = ctx.constants
    return (ta if ta is not None else ca), (tb if tb is not None else cb)


class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, _ = _operands(a, b, "add")
        return wrap(backends.current.add(x, y))

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Function):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _operands(a, b, "sub")
        if dtype is _dtypes.bool_:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return wrap(backends.current.sub(x, y))

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad


class Mul(Function):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save(ctx, a, b)
        x, y, _ = _operands(a, b, "mul")
        return wrap(backends.current.mul(x, y))

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)


class Div(Function):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save(ctx, a, b)
        x, y, dtype = _operands(a, b, "div")
        if not dtype.is_floating_point:  # true division of integers gives the default float
            fd = _dtypes.get_default_dtype().np
            x = x.astype(fd) if isinstance(x, np.ndarray) else x
            y = y.astype(fd) if isinstance(y, np.ndarray) else y
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.asarray(backends.current.div(x, y)))

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        ga = grad / b if ctx.needs_input_grad[0] else None
        gb = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb


class Pow(Function):
    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _operands(a, b, "pow")
        if not dtype.is_floating_point and np.any(np.asarray(y) < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed. "
                               "Use a float base, e.g. x.float() ** -1")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = wrap(np.asarray(np.power(x, y)))
        _save(ctx, a, b)
        ctx.result = out
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            # d(a^b)/da = b * a^(b-1); where b == 0 the derivative is 0, even at a == 0
            if isinstance(b, Tensor):
                ga = grad * b * a ** (b - 1)
                ga = ga.masked_fill(b == 0, 0.0)
            elif b == 0:
                ga = grad * 0.0
            else:
                ga = grad * b * a ** (b - 1)
        if ctx.needs_input_grad[1]:
            # d(a^b)/db = a^b * log(a); torch defines it as 0 where a == 0 and b >= 0
            from .unary import log
            base = a if isinstance(a, Tensor) else Tensor._wrap(np.asarray(a, dtype=b._data.dtype))
            gb = grad * (base ** b) * log(base)
            gb = gb.masked_fill((base == 0) & (b >= 0), 0.0)
        return ga, gb


class FloorDivide(Function):
    node_name = "DivBackward0"  # torch: floor_divide is not differentiable

    @staticmethod
    def forward(ctx, a, b):
        x, y, _ = _operands(a, b, "floor_divide")
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.asarray(np.floor_divide(x, y)))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


class Remainder(Function):
    node_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save(ctx, a, b)
        x, y, _ = _operands(a, b, "remainder")
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.asarray(np.remainder(x, y)))

    @staticmethod
    def backward(ctx, grad):
        # a % b = a - floor(a / b) * b
        a, b = _load(ctx)
        gb = None
        if ctx.needs_input_grad[1]:
            gb = -grad * (a / b).floor()
        return grad, gb


def _binary(fn, a, b, name):
    return fn.apply(a, as_operand(b, name))


def add(input, other, *, alpha=1):
    if alpha != 1:
        other = other * alpha
    return Add.apply(input, as_operand(other))


def sub(input, other, *, alpha=1):
    if alpha != 1:
        other = other * alpha
    return Sub.apply(input, as_operand(other))


subtract = sub


def mul(input, other):
    return Mul.apply(input, as_operand(other))


multiply = mul


def div(input, other, *, rounding_mode=None):
    other = as_operand(other)
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode == "floor":
        return FloorDivide.apply(input, other)
    if rounding_mode == "trunc":
        q = Div.apply(input, other)
        out = q.trunc()
        if not _dtypes.result_type(input, other).is_floating_point:
            out = out.to(_dtypes.result_type(input, other))
        return out
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
    return Sub.apply(as_operand(other), input * alpha if alpha != 1 else input)
