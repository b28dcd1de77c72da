"""Elementwise math on one tensor: exp, log, sqrt, sin, abs, floor, ... with their derivatives.

Each class is one derivative rule next to its forward.  Integer and bool
inputs of floating functions compute in the default float dtype, as torch
does.  Forwards run with numpy's floating-point warnings off (``Function.apply``
switches them off around every forward, and the engine around every backward):
log(0) = -inf, sqrt(-1) = nan and exp(1000) = inf are the answers (torch's too),
not reasons for numpy to print a RuntimeWarning.
"""
import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import float_array, wrap


def _check_tensor(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}; convert it first with torch.tensor(...)")


def _not_for_bool(x, name):
    if x._dtype.name == "bool":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool': convert the mask "
                                  "first, e.g. x.float() or x.long()")


class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        if x._dtype.name == "bool":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return wrap(np.negative(x._data))

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Exp(Function):
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(backends.current.exp(float_array(x)))
        ctx.save_for_backward(y)  # e^x is its own derivative: keep the output
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.log(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / x


class Log2(Function):
    node_name = "Log2Backward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.log2(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / (x * float(np.log(2.0)))


class Log10(Function):
    node_name = "Log10Backward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.log10(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / (x * float(np.log(10.0)))


class Log1p(Function):
    """log(1 + x), accurate for tiny x where 1 + x would round to 1."""

    node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.log1p(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / (x + 1)


class Expm1(Function):
    """e^x - 1, accurate for tiny x."""

    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(np.expm1(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * (y + 1)  # d(e^x - 1)/dx = e^x = y + 1


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(np.sqrt(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad / (2 * y)  # d sqrt(x) = 1 / (2 sqrt(x))


class Rsqrt(Function):
    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        a = float_array(x)
        y = wrap((1 / np.sqrt(a)).astype(a.dtype, copy=False))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return -0.5 * grad * y * y * y  # d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3


class Reciprocal(Function):
    node_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx, x):
        a = float_array(x)
        y = wrap(np.reciprocal(a))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return -grad * y * y  # d (1/x) = -1/x^2 = -y^2


class Sin(Function):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.sin(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos()


class Cos(Function):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.cos(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return -grad * x.sin()


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        _not_for_bool(x, "abs")
        ctx.save_for_backward(x)
        return wrap(np.abs(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.sign()  # sign(0) = 0: torch's choice of subgradient at the kink


class _Piecewise(Function):
    """sign, floor, ceil, round, trunc: flat almost everywhere, so the gradient is zero."""

    numpy_fn = None

    @classmethod
    def forward(cls, ctx, x):
        return wrap(cls.numpy_fn(x._data))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


def _sign(a):
    """-1, 0 or 1; torch gives 0 for nan (numpy gives nan)."""
    s = np.sign(a)
    return np.where(np.isnan(a), 0, s).astype(a.dtype, copy=False) if a.dtype.kind == "f" else s


class Sign(_Piecewise):
    node_name = "SignBackward0"
    numpy_fn = staticmethod(_sign)


class Floor(_Piecewise):
    node_name = "FloorBackward0"
    numpy_fn = staticmethod(np.floor)


class Ceil(_Piecewise):
    node_name = "CeilBackward0"
    numpy_fn = staticmethod(np.ceil)


class Trunc(_Piecewise):
    node_name = "TruncBackward0"
    numpy_fn = staticmethod(np.trunc)


class Round(_Piecewise):
    node_name = "RoundBackward0"
    numpy_fn = staticmethod(np.round)  # half to even, like torch


class RoundDecimals(Function):
    node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, x, decimals):
        return wrap(np.round(x._data, decimals))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


def _integer_passthrough(fn, x, name):
    """floor/ceil/round/trunc of an integer tensor is the tensor itself (a copy); bools fail."""
    _check_tensor(x, name)
    if not x._dtype.is_floating_point:
        _not_for_bool(x, name + "_vml")
        return Tensor._wrap(x._data.copy())
    return fn.apply(x)


def _unary(fn, name):
    """The public function ``name(input)`` applying the Function ``fn``."""
    def function(input):
        _check_tensor(input, name)
        return fn.apply(input)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``{name}`` (differentiable: see ``{fn.__name__}``)."
    return function


neg = negative = _unary(Neg, "neg")
exp = _unary(Exp, "exp")
log = _unary(Log, "log")
log2 = _unary(Log2, "log2")
log10 = _unary(Log10, "log10")
log1p = _unary(Log1p, "log1p")
expm1 = _unary(Expm1, "expm1")
sqrt = _unary(Sqrt, "sqrt")
rsqrt = _unary(Rsqrt, "rsqrt")
reciprocal = _unary(Reciprocal, "reciprocal")
sin = _unary(Sin, "sin")
cos = _unary(Cos, "cos")
abs = absolute = _unary(Abs, "abs")


def sign(input):
    _check_tensor(input, "sign")
    if input._dtype.name == "bool":  # sign of True/False is itself
        return Tensor._wrap(input._data.copy())
    return Sign.apply(input)


def floor(input):
    return _integer_passthrough(Floor, input, "floor")


def ceil(input):
    return _integer_passthrough(Ceil, input, "ceil")


def trunc(input):
    return _integer_passthrough(Trunc, input, "trunc")


def round(input, *, decimals=0):
    if decimals:
        _check_tensor(input, "round")
        if not input._dtype.is_floating_point:
            raise NotImplementedError(f"\"round_cpu\" not implemented for '{input._dtype}' with "
                                      "decimals: round integers without decimals, or convert "
                                      "them with .float() first")
        return RoundDecimals.apply(input, decimals)
    return _integer_passthrough(Round, input, "round")


def square(input):
    """input ** 2 (as torch: bool becomes int64, and the node is a PowBackward0)."""
    _check_tensor(input, "square")
    return input ** 2
