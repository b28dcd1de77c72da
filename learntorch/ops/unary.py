"""Elementwise math on one tensor: exp, log, sqrt, sin, abs, floor, ... with their derivatives.

Each class is one derivative rule next to its forward.  Integer inputs of
floating functions compute in the default float dtype, as torch does.
"""
import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import float_array, wrap


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
        ctx.save_for_backward(y)
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
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / x


class Log1p(Function):
    node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log1p(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / (x + 1)


class Expm1(Function):
    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(np.expm1(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * (y + 1)


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            y = wrap(np.sqrt(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad / (2 * y)


class Rsqrt(Function):
    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore", divide="ignore"):
            a = float_array(x)
            y = wrap((1 / np.sqrt(a)).astype(a.dtype, copy=False))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return -0.5 * grad * y * y * y


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
        ctx.save_for_backward(x)
        return wrap(np.abs(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.sign()


class _Piecewise(Function):
    """sign, floor, ceil, round, trunc: flat almost everywhere, so the gradient is zero."""

    numpy_fn = None

    @classmethod
    def forward(cls, ctx, x):
        return wrap(cls.numpy_fn(x._data))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


class Sign(_Piecewise):
    node_name = "SignBackward0"
    numpy_fn = staticmethod(np.sign)


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


def _integer_passthrough(fn, x):
    """floor/ceil/round/trunc of an integer tensor is the tensor itself (a copy)."""
    if not x._dtype.is_floating_point:
        return Tensor._wrap(x._data.copy())
    return fn.apply(x)


def neg(input):
    return Neg.apply(input)


negative = neg


def exp(input):
    return Exp.apply(input)


def log(input):
    return Log.apply(input)


def log1p(input):
    return Log1p.apply(input)


def expm1(input):
    return Expm1.apply(input)


def sqrt(input):
    return Sqrt.apply(input)


def rsqrt(input):
    return Rsqrt.apply(input)


def sin(input):
    return Sin.apply(input)


def cos(input):
    return Cos.apply(input)


def abs(input):
    return Abs.apply(input)


absolute = abs


def sign(input):
    return Sign.apply(input)


def floor(input):
    return _integer_passthrough(Floor, input)


def ceil(input):
    return _integer_passthrough(Ceil, input)


def trunc(input):
    return _integer_passthrough(Trunc, input)


def round(input, *, decimals=0):
    if decimals:
        return RoundDecimals.apply(input, decimals)
    return _integer_passthrough(Round, input)


def square(input):
    return input * input


def log2(input):
    return log(input) / float(np.log(2.0))


def log10(input):
    return log(input) / float(np.log(10.0))


def reciprocal(input):
    return 1 / input
