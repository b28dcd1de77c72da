"""Comparisons, logical ops, maximum/minimum and where.

Comparisons and logical ops return bool tensors and are not differentiable
(their result never requires grad).  ``maximum``, ``minimum`` and ``where``
route the gradient to whichever input was chosen.
"""
from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_operand, array_of, wrap
from .arithmetic import _operands
from .broadcast import _broadcast_tuple as broadcast_shapes


def _compare(name):
    def compare(input, other):
        _check_tensors(name, input)  # `2 < x` reaches here as x > 2, through Tensor.__gt__
        other = as_operand(other)
        x, y, _ = _operands(input, other, name)
        return wrap(getattr(backends.current, name)(x, y))
    compare.__name__ = name
    compare.__doc__ = f"Elementwise ``{name}`` with broadcasting; returns a bool tensor."
    return compare


eq, ne, lt, le, gt, ge = (_compare(name) for name in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(name):
    def logical(input, other):
        _check_tensors(name, input, other)
        x, y, _ = _operands(input, other, name)
        return wrap(getattr(backends.current, name)(x, y))
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


logical_and, logical_or, logical_xor = (_logical(name) for name in
                                        ("logical_and", "logical_or", "logical_xor"))


def logical_not(input):
    _check_tensors("logical_not", input)
    return wrap(backends.current.logical_not(input._data))


def _bitwise(name):
    def bitwise(input, other):
        other = as_operand(other)
        x, y, dtype = _operands(input, other, name)
        if dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{_TORCH_NAMES[dtype.name]}': bitwise ops "
                f"take integer and bool tensors; for masks use logical_and/logical_or/"
                "logical_xor, or compare first (x > 0)")
        out = getattr(backends.current, name)(x, y)
        return wrap(out if out.dtype == dtype.np else out.astype(dtype.np))
    bitwise.__name__ = name
    bitwise.__doc__ = f"Elementwise ``{name}`` of integer or bool tensors, with broadcasting."
    return bitwise


_TORCH_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}

bitwise_and, bitwise_or, bitwise_xor = (_bitwise(name) for name in
                                        ("bitwise_and", "bitwise_or", "bitwise_xor"))


def bitwise_not(input):
    _check_tensors("bitwise_not", input)
    if input._dtype.is_floating_point:
        raise NotImplementedError(
            f"\"bitwise_not_cpu\" not implemented for '{_TORCH_NAMES[input._dtype.name]}': ~ "
            f"(bitwise_not) takes integer and bool tensors, got {input._dtype}; for a float "
            "mask use (x == 0) or logical_not")
    return wrap(backends.current.bitwise_not(input._data))


def _classify(name):
    def classify(input):
        _check_tensors(name, input)
        return wrap(getattr(backends.current, name)(input._data))
    classify.__name__ = name
    return classify


isnan, isinf, isfinite, signbit = (_classify(name) for name in
                                   ("isnan", "isinf", "isfinite", "signbit"))
isnan.__doc__ = "True where the element is nan (not a number)."
isinf.__doc__ = "True where the element is +inf or -inf."
isfinite.__doc__ = "True where the element is neither nan nor infinite."
signbit.__doc__ = "True where the sign bit is set (negative numbers, -0.0 and -inf)."


def isposinf(input):
    """True where the element is +inf."""
    return isinf(input) & gt(input, 0)


def isneginf(input):
    """True where the element is -inf."""
    return isinf(input) & lt(input, 0)


def isreal(input):
    """True everywhere: learntorch has no complex dtypes."""
    _check_tensors("isreal", input)
    return wrap(backends.current.full(input.shape, True, _dtypes.bool_.np, like=input._data))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (infinities close only to themselves)."""
    _check_tensors("isclose", input, other)
    if input._dtype is not other._dtype:
        raise RuntimeError(f"isclose: {_TORCH_NAMES.get(input._dtype.name, input._dtype.name)} "
                           f"did not match {_TORCH_NAMES.get(other._dtype.name, other._dtype.name)}"
                           f" ({input._dtype} vs {other._dtype}); convert one, e.g. "
                           "b.to(a.dtype)")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"{'rtol' if rtol < 0 else 'atol'} must be greater than or equal to "
                           f"zero, but got {rtol if rtol < 0 else atol}")
    _check_broadcast_shapes("isclose", input, other)
    if input._dtype is _dtypes.bool_:  # torch: two bools are close when they are equal
        return eq(input, other)
    return wrap(backends.current.isclose(input._data, other._data, rtol, atol, equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is ``isclose``."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both have the same shape and the same values (dtypes may differ)."""
    _check_tensors("equal", input, other)
    return input.shape == other.shape and backends.current.array_equal(input._data, other._data)


def _check_broadcast_shapes(name, *tensors):
    try:
        broadcast_shapes(*(t._data.shape for t in tensors))
    except RuntimeError as e:
        raise RuntimeError(f"{name}: {e}") from None


class _Select(Function):
    """maximum/minimum: the gradient goes to the chosen input, split in half on ties, and to
    both where one is nan (nan is chosen, and nothing says it lost) -- torch's rule::

        d/da = where(a == b, g / 2, g) masked to 0 where a loses (a < b for maximum)
    """

    method = None

    @classmethod
    def forward(cls, ctx, a, b):
        x, y, _ = _operands(a, b, cls.method)
        ctx.save_for_backward(a, b)
        return wrap(getattr(backends.current, cls.method)(x, y))

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        shared = where(a == b, grad / 2, grad)
        return (shared.masked_fill(cls.loses(a, b), 0.0) if ctx.needs_input_grad[0] else None,
                shared.masked_fill(cls.loses(b, a), 0.0) if ctx.needs_input_grad[1] else None)


class Maximum(_Select):
    node_name, method = "MaximumBackward0", "maximum"
    loses = staticmethod(lambda a, b: a < b)


class Minimum(_Select):
    node_name, method = "MinimumBackward0", "minimum"
    loses = staticmethod(lambda a, b: a > b)


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
        out = backends.current.where(condition._data, x, y)
        return wrap(out if out.dtype == dtype.np else out.astype(dtype.np))

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
    if input is None and other is None:  # where(condition): nonzero(condition, as_tuple=True)
        return tuple(wrap(i) for i in backends.current.nonzero_tuple(condition._data))
    if condition._dtype is not _dtypes.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition._dtype}; compare first, e.g. where(x > 0, ...)")
    return Where.apply(condition, as_operand(input, "input"), as_operand(other, "other"))
