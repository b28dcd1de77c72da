"""Elementwise functions of two tensors beyond arithmetic: atan2, hypot, xlogy.

Both operands broadcast and promote as in ``+`` (integers compute in the default float
dtype); a Python number may stand for either.  Each derivative is one line::

    atan2(a, b)   d/da = b / (a^2 + b^2)      d/db = -a / (a^2 + b^2)
    hypot(a, b)   d/da = a / hypot(a, b)      d/db = b / hypot(a, b)
    xlogy(a, b)   d/da = log(b) (0 where a = 0 and b <= 0)   d/db = a / b
"""
from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import as_operand, wrap
from .arithmetic import _load, _operands, _save


def _float_operands(a, b, op):
    """The arrays of ``a op b`` in the result dtype, which is floating (torch's rule for
    these functions: integers compute in the default float dtype)."""
    dtype = _dtypes.result_type(a, b)
    if not dtype.is_floating_point:
        dtype = _dtypes.get_default_dtype()
    return _operands(a, b, op, dtype)


class Atan2(Function):
    node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _float_operands(a, b, "atan2")
        _save(ctx, a, b)
        return wrap(backends.current.atan2(x, y).astype(dtype.np, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        r2 = a * a + b * b
        return (grad * b / r2 if ctx.needs_input_grad[0] else None,
                grad * -a / r2 if ctx.needs_input_grad[1] else None)


class Hypot(Function):
    node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        dtype = _dtypes.result_type(a, b)
        if not dtype.is_floating_point:  # (unlike atan2, torch's hypot has no integer kernel)
            raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{dtype}': hypot "
                                      "takes floating tensors, e.g. a.float().hypot(b.float())")
        x, y, dtype = _float_operands(a, b, "hypot")
        _save(ctx, a, b)
        return wrap(backends.current.hypot(x, y).astype(dtype.np, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        h = hypot(a, b)
        return (grad * a / h if ctx.needs_input_grad[0] else None,
                grad * b / h if ctx.needs_input_grad[1] else None)


class Xlogy(Function):
    node_name = "XlogyBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y, dtype = _float_operands(a, b, "xlogy")
        _save(ctx, a, b)
        return wrap(backends.current.xlogy(x, y).astype(dtype.np, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, b = _load(ctx)
        ga = gb = None
        if ctx.needs_input_grad[0]:  # log(b), and 0 where a == 0 and b <= 0 (torch's rule)
            ga = xlogy(grad, b).masked_fill((a == 0) & (b <= 0), 0.0)
        if ctx.needs_input_grad[1]:
            gb = grad * a / b
        return ga, gb


def _binary(fn, name, numbers_allowed=("other",)):
    def function(input, other):
        if not isinstance(input, Tensor) and not (isinstance(other, Tensor) and
                                                  "input" in numbers_allowed):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if not isinstance(other, Tensor) and "other" not in numbers_allowed:
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return fn.apply(as_operand(input, "input"), as_operand(other))
    function.__name__ = function.__qualname__ = name
    return function


atan2 = arctan2 = _binary(Atan2, "atan2", numbers_allowed=())
atan2.__doc__ = "The angle of the point (other, input): atan(input / other) in the right quadrant."
hypot = _binary(Hypot, "hypot", numbers_allowed=())
hypot.__doc__ = "sqrt(input^2 + other^2), without overflowing where the squares would."
xlogy = _binary(Xlogy, "xlogy", numbers_allowed=("input", "other"))
xlogy.__doc__ = "input * log(other), and 0 where input is 0 (unless other is nan)."
