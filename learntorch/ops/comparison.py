"""Comparisons, logical ops, maximum/minimum and where.

Comparisons and logical ops return bool tensors and are not differentiable
(their result never requires grad).  ``maximum``, ``minimum`` and ``where``
route the gradient to whichever input was chosen.
"""
import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_operand, array_of, wrap
from .arithmetic import _operands


def _compare(ufunc, name):
    def compare(input, other):
        other = as_operand(other)
        x, y, _ = _operands(input, other, name)
        return wrap(np.asarray(ufunc(x, y)))
    compare.__name__ = name
    compare.__doc__ = f"Elementwise ``{name}`` with broadcasting; returns a bool tensor."
    return compare


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(ufunc, name):
    def logical(input, other):
        other = as_operand(other)
        x, y, _ = _operands(input, other, name)
        return wrap(np.asarray(ufunc(x, y)))
    logical.__name__ = name
    return logical


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


def logical_not(input):
    return wrap(np.logical_not(input._data))


def _bitwise(ufunc, name):
    def bitwise(input, other):
        other = as_operand(other)
        x, y, dtype = _operands(input, other, name)
        if dtype.is_floating_point:
            raise RuntimeError(f"\"{name}\" is only defined for integer and bool tensors, "
                               f"got {dtype}; use logical_and/logical_or for masks of floats")
        return wrap(np.asarray(ufunc(x, y)))
    bitwise.__name__ = name
    return bitwise


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def bitwise_not(input):
    if input._dtype.is_floating_point:
        raise TypeError(f"~ (bitwise_not) is only defined for integer and bool tensors, got "
                        f"{input._dtype}; for a float mask use (x == 0) or logical_not")
    return wrap(np.invert(input._data))


def isnan(input):
    return wrap(np.isnan(input._data))


def isinf(input):
    return wrap(np.isinf(input._data))


def isfinite(input):
    return wrap(np.isfinite(input._data))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return wrap(np.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other):
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


class _Select(Function):
    """maximum/minimum: the gradient goes to the chosen input, split in half on ties (as torch)."""

    ufunc = None

    @classmethod
    def forward(cls, ctx, a, b):
        x, y, _ = _operands(a, b, cls.__name__.lower())
        ctx.save_for_backward(a, b)
        return wrap(np.asarray(cls.ufunc(x, y)))

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        a_wins = cls.wins(a, b)
        tie = a == b
        ga = grad * a_wins + grad * tie * 0.5
        gb = grad * (~a_wins & ~tie) + grad * tie * 0.5
        return ga, gb


class Maximum(_Select):
    node_name = "MaximumBackward0"
    ufunc = staticmethod(np.maximum)
    wins = staticmethod(lambda a, b: a > b)


class Minimum(_Select):
    node_name = "MinimumBackward0"
    ufunc = staticmethod(np.minimum)
    wins = staticmethod(lambda a, b: a < b)


def maximum(input, other):
    if not isinstance(other, Tensor):
        raise TypeError("maximum(): argument 'other' must be Tensor, not "
                        f"{type(other).__name__}; use clamp(min=...) for a number")
    return Maximum.apply(input, other)


def minimum(input, other):
    if not isinstance(other, Tensor):
        raise TypeError("minimum(): argument 'other' must be Tensor, not "
                        f"{type(other).__name__}; use clamp(max=...) for a number")
    return Minimum.apply(input, other)


class Where(Function):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.save_for_backward(condition)
        dtype = _dtypes.result_type(a, b)
        x, y = array_of(a, dtype), array_of(b, dtype)
        return wrap(np.asarray(np.where(condition._data, x, y), dtype=dtype.np))

    @staticmethod
    def backward(ctx, grad):
        condition, = ctx.saved_tensors
        zero = grad * 0
        return None, where(condition, grad, zero), where(condition, zero, grad)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return tuple(wrap(i) for i in np.nonzero(condition._data))
    if condition._dtype is not _dtypes.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition._dtype}; compare first, e.g. where(x > 0, ...)")
    return Where.apply(condition, as_operand(input, "input"), as_operand(other, "other"))
