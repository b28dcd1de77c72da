"""Comparisons, logical ops, maximum/minimum and where.

Comparisons and logical ops return bool tensors and are not differentiable
(their result never requires grad).  ``maximum``, ``minimum`` and ``where``
route the gradient to whichever input was chosen.
"""
import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_array, as_operand, array_of, wrap
from .arithmetic import _operands
from .broadcast import _broadcast_tuple as broadcast_shapes


def _compare(ufunc, name):
    def compare(input, other):
        _check_tensors(name, input)  # `2 < x` reaches here as x > 2, through Tensor.__gt__
        other = as_operand(other)
        x, y, _ = _operands(input, other, name)
        return wrap(as_array(ufunc(x, y)))
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
        _check_tensors(name, input, other)
        x, y, _ = _operands(input, other, name)
        return wrap(as_array(ufunc(x, y)))
    logical.__name__ = name
    logical.__doc__ = f"Elementwise ``{name}`` of truth values (nonzero is True); a bool tensor."
    return logical


def _check_tensors(name, *args):
    """Functions whose torch signature takes tensors only (no Python numbers)."""
    for position, (arg_name, x) in enumerate(zip(("input", "other"), args), 1):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg_name}' (position {position}) must be "
                            f"Tensor, not {type(x).__name__}; wrap numbers with "
                            "torch.tensor(...) or torch.full_like(input, value)")


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


def logical_not(input):
    _check_tensors("logical_not", input)
    return wrap(np.logical_not(input._data))


def _bitwise(ufunc, name):
    def bitwise(input, other):
        other = as_operand(other)
        x, y, dtype = _operands(input, other, name)
        if dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{_TORCH_NAMES[dtype.name]}': bitwise ops "
                f"take integer and bool tensors; for masks use logical_and/logical_or/"
                "logical_xor, or compare first (x > 0)")
        return wrap(as_array(ufunc(x, y), dtype=dtype.np))
    bitwise.__name__ = name
    bitwise.__doc__ = f"Elementwise ``{name}`` of integer or bool tensors, with broadcasting."
    return bitwise


_TORCH_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}

bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def bitwise_not(input):
    _check_tensors("bitwise_not", input)
    if input._dtype.is_floating_point:
        raise TypeError(f"~ (operator.invert) is only implemented on integer and Boolean-type "
                        f"tensors, got {input._dtype}; for a float mask use (x == 0) or "
                        "logical_not")
    return wrap(np.invert(input._data))


def isnan(input):
    _check_tensors("isnan", input)
    return wrap(np.isnan(input._data))


def isinf(input):
    _check_tensors("isinf", input)
    return wrap(np.isinf(input._data))


def isfinite(input):
    _check_tensors("isfinite", input)
    return wrap(np.isfinite(input._data))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (infinities close only to themselves)."""
    _check_tensors("isclose", input, other)
    if input._dtype is not other._dtype:
        raise RuntimeError(f"isclose: {_TORCH_NAMES.get(input._dtype.name, input._dtype.name)} "
                           f"did not match {_TORCH_NAMES.get(other._dtype.name, other._dtype.name)}"
                           f" ({input._dtype} vs {other._dtype}); convert one, e.g. "
                           "b.to(a.dtype)")
    _check_broadcast_shapes("isclose", input, other)
    with np.errstate(all="ignore"):
        return wrap(np.isclose(input._data, other._data, rtol=rtol, atol=atol,
                               equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is ``isclose``."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """True when both have the same shape and the same values (dtypes may differ)."""
    _check_tensors("equal", input, other)
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


def _check_broadcast_shapes(name, *tensors):
    try:
        broadcast_shapes(*(t._data.shape for t in tensors))
    except RuntimeError as e:
        raise RuntimeError(f"{name}: {e}") from None


class _Select(Function):
    """maximum/minimum: the gradient goes to the chosen input, split in half on ties (as torch)."""

    ufunc = None

    @classmethod
    def forward(cls, ctx, a, b):
        x, y, _ = _operands(a, b, cls.__name__.lower())
        ctx.save_for_backward(a, b)
        return wrap(as_array(cls.ufunc(x, y)))

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
    """The larger of two tensors, elementwise (nan if either is nan); clamp(min=...) for a number."""
    _check_tensors("maximum", input, other)
    return Maximum.apply(input, other)


def minimum(input, other):
    """The smaller of two tensors, elementwise (nan if either is nan); clamp(max=...) for a number."""
    _check_tensors("minimum", input, other)
    return Minimum.apply(input, other)


class Where(Function):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.save_for_backward(condition)
        _check_broadcast_shapes("where", *(t for t in (condition, a, b) if isinstance(t, Tensor)))
        dtype = _dtypes.result_type(a, b)
        x, y = array_of(a, dtype), array_of(b, dtype)
        return wrap(as_array(np.where(condition._data, x, y), dtype=dtype.np))

    @staticmethod
    def backward(ctx, grad):
        condition, = ctx.saved_tensors
        # a real 0 for the branch not taken (grad * 0 would turn an inf gradient into nan)
        zero = 0.0 if grad._dtype.is_floating_point else 0
        return None, where(condition, grad, zero), where(condition, zero, grad)


def where(condition, input=None, other=None):
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not "
                        f"{type(condition).__name__}; build the mask with a comparison, "
                        "e.g. where(x > 0, ...)")
    if input is None and other is None:
        return tuple(wrap(i) for i in np.nonzero(condition._data))
    if condition._dtype is not _dtypes.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition._dtype}; compare first, e.g. where(x > 0, ...)")
    return Where.apply(condition, as_operand(input, "input"), as_operand(other, "other"))
