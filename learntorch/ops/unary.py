"""Elementwise math on one tensor: exp, log, sqrt, sin, tan, abs, floor, ... with their derivatives.

Each class is one derivative rule next to its forward, and each forward is one call of
the backend (``backends.current.log(a)``, ...).  Integer and bool inputs of floating
functions compute in the default float dtype, as torch does.  Forwards run with
numpy's floating-point warnings off (``Function.apply`` switches them off around
every forward, and the engine around every backward): log(0) = -inf, sqrt(-1) = nan
and exp(1000) = inf are the answers (torch's too), not reasons for numpy to print a
RuntimeWarning.
"""
import math

import numpy as np

from .. import backends
from .._tensor import Tensor
from .._type_info import finfo
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
        return wrap(backends.current.neg(x._data))

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


class _OfInput(Function):
    """A floating function of x (the backend's ``method``) whose derivative rule is
    written with x: ``derivative_of(grad, x)`` is grad times f'(x)."""

    method = None

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return wrap(getattr(backends.current, cls.method)(float_array(x)))

    @classmethod
    def backward(cls, ctx, grad):
        x, = ctx.saved_tensors
        return cls.derivative_of(grad, x)


class Log(_OfInput):
    node_name, method = "LogBackward0", "log"

    @staticmethod
    def derivative_of(grad, x):
        return grad / x


class Log2(_OfInput):
    node_name, method = "Log2Backward0", "log2"

    @staticmethod
    def derivative_of(grad, x):
        return grad / (x * math.log(2.0))


class Log10(_OfInput):
    node_name, method = "Log10Backward0", "log10"

    @staticmethod
    def derivative_of(grad, x):
        return grad / (x * math.log(10.0))


class Log1p(_OfInput):
    """log(1 + x), accurate for tiny x where 1 + x would round to 1."""

    node_name, method = "Log1PBackward0", "log1p"

    @staticmethod
    def derivative_of(grad, x):
        return grad / (x + 1)


class Sin(_OfInput):
    node_name, method = "SinBackward0", "sin"

    @staticmethod
    def derivative_of(grad, x):
        return grad * x.cos()


class Cos(_OfInput):
    node_name, method = "CosBackward0", "cos"

    @staticmethod
    def derivative_of(grad, x):
        return -grad * x.sin()


class Asin(_OfInput):
    node_name, method = "AsinBackward0", "asin"

    @staticmethod
    def derivative_of(grad, x):
        return grad * (1 - x * x).rsqrt()  # 1 / sqrt(1 - x^2)


class Acos(_OfInput):
    node_name, method = "AcosBackward0", "acos"

    @staticmethod
    def derivative_of(grad, x):
        return grad * -(1 - x * x).rsqrt()


class Atan(_OfInput):
    node_name, method = "AtanBackward0", "atan"

    @staticmethod
    def derivative_of(grad, x):
        return grad / (x * x + 1)


class Sinh(_OfInput):
    node_name, method = "SinhBackward0", "sinh"

    @staticmethod
    def derivative_of(grad, x):
        return grad * x.cosh()


class Cosh(_OfInput):
    node_name, method = "CoshBackward0", "cosh"

    @staticmethod
    def derivative_of(grad, x):
        return grad * x.sinh()


class Asinh(_OfInput):
    node_name, method = "AsinhBackward0", "asinh"

    @staticmethod
    def derivative_of(grad, x):
        return grad * (x * x + 1).rsqrt()


class Acosh(_OfInput):
    node_name, method = "AcoshBackward0", "acosh"

    @staticmethod
    def derivative_of(grad, x):
        return grad * (x * x - 1).rsqrt()


class Atanh(_OfInput):
    node_name, method = "AtanhBackward0", "atanh"

    @staticmethod
    def derivative_of(grad, x):
        return grad / (1 - x * x)


class Lgamma(_OfInput):
    """log |Gamma(x)|, whose derivative is digamma."""

    node_name, method = "LgammaBackward0", "lgamma"

    @staticmethod
    def derivative_of(grad, x):
        return grad * x.digamma()


class Digamma(_OfInput):
    """psi(x) = d lgamma(x)/dx, whose derivative is polygamma(1, x) (trigamma)."""

    node_name, method = "DigammaBackward0", "digamma"

    @staticmethod
    def derivative_of(grad, x):
        return grad * polygamma(1, x)


class Polygamma(Function):
    """The n-th derivative of digamma; its derivative is the (n+1)-th."""

    node_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, n, x):
        ctx.n = n
        ctx.save_for_backward(x)
        return wrap(backends.current.polygamma(n, float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return None, grad * polygamma(ctx.n + 1, x)


class _OfOutput(Function):
    """A floating function whose derivative is written with its output y."""

    method = None

    @classmethod
    def forward(cls, ctx, x):
        y = wrap(getattr(backends.current, cls.method)(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @classmethod
    def backward(cls, ctx, grad):
        y, = ctx.saved_tensors
        return cls.derivative_of(grad, y)


class Expm1(_OfOutput):
    """e^x - 1, accurate for tiny x."""

    node_name, method = "Expm1Backward0", "expm1"

    @staticmethod
    def derivative_of(grad, y):
        return grad * (y + 1)  # d(e^x - 1)/dx = e^x = y + 1


class Sqrt(_OfOutput):
    node_name, method = "SqrtBackward0", "sqrt"

    @staticmethod
    def derivative_of(grad, y):
        return grad / (2 * y)  # d sqrt(x) = 1 / (2 sqrt(x))


class Rsqrt(_OfOutput):
    node_name, method = "RsqrtBackward0", "rsqrt"

    @staticmethod
    def derivative_of(grad, y):
        return -0.5 * grad * y * y * y  # d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3


class Reciprocal(_OfOutput):
    node_name, method = "ReciprocalBackward0", "reciprocal"

    @staticmethod
    def derivative_of(grad, y):
        return -grad * y * y  # d (1/x) = -1/x^2 = -y^2


class Tan(_OfOutput):
    node_name, method = "TanBackward0", "tan"

    @staticmethod
    def derivative_of(grad, y):
        return grad * (1 + y * y)  # d tan = 1 + tan^2


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        _not_for_bool(x, "abs")
        ctx.save_for_backward(x)
        return wrap(backends.current.abs(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.sign()  # sign(0) = 0: torch's choice of subgradient at the kink


class Logit(Function):
    """log(x / (1 - x)), the inverse of sigmoid; with ``eps``, x is first clamped to
    [eps, 1 - eps] (and the gradient is 0 outside that range, as torch's)."""

    node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        ctx.eps = eps
        return wrap(backends.current.logit(float_array(x), eps))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        g = grad / (x * (1 - x))
        if ctx.eps is not None:
            g = g.masked_fill((x < ctx.eps) | (x > 1 - ctx.eps), 0.0)
        return g, None


class NanToNum(Function):
    """nan, +inf and -inf replaced by numbers; the gradient flows where x was finite."""

    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x)
        return wrap(backends.current.nan_to_num(x._data, nan, posinf, neginf))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.isfinite(), None, None, None


class _Piecewise(Function):
    """sign, floor, ceil, round, trunc: flat almost everywhere, so the gradient is zero."""

    method = None

    @classmethod
    def forward(cls, ctx, x):
        return wrap(getattr(backends.current, cls.method)(x._data))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


class Sign(_Piecewise):
    node_name, method = "SignBackward0", "sign"  # 0 for nan, as torch


class Floor(_Piecewise):
    node_name, method = "FloorBackward0", "floor"


class Ceil(_Piecewise):
    node_name, method = "CeilBackward0", "ceil"


class Trunc(_Piecewise):
    node_name, method = "TruncBackward0", "trunc"


class Round(_Piecewise):
    node_name, method = "RoundBackward0", "round"  # half to even, like torch


class RoundDecimals(Function):
    node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, x, decimals):
        return wrap(backends.current.round(x._data, decimals))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


def _integer_passthrough(fn, x, name):
    """floor/ceil/round/trunc of an integer tensor is the tensor itself (a copy); bools fail."""
    _check_tensor(x, name)
    if not x._dtype.is_floating_point:
        _not_for_bool(x, name + "_vml")
        return Tensor._wrap(backends.current.copy(x._data))
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
tan = _unary(Tan, "tan")
asin = arcsin = _unary(Asin, "asin")
acos = arccos = _unary(Acos, "acos")
atan = arctan = _unary(Atan, "atan")
sinh = _unary(Sinh, "sinh")
cosh = _unary(Cosh, "cosh")
asinh = arcsinh = _unary(Asinh, "asinh")
acosh = arccosh = _unary(Acosh, "acosh")
atanh = arctanh = _unary(Atanh, "atanh")
lgamma = _unary(Lgamma, "lgamma")
digamma = _unary(Digamma, "digamma")
abs = absolute = _unary(Abs, "abs")


def polygamma(n, input):
    """The n-th derivative of ``digamma`` (n >= 0), elementwise."""
    _check_tensor(input, "polygamma")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={n}); n is the "
                           "order of the derivative of digamma, 0, 1, 2, ...")
    return Polygamma.apply(int(n), input)


def logit(input, eps=None):
    """log(p / (1 - p)): the inverse of sigmoid (``eps`` clamps p to [eps, 1 - eps] first)."""
    _check_tensor(input, "logit")
    return Logit.apply(input, None if eps is None else float(eps))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan becomes ``nan``, +inf ``posinf`` and -inf ``neginf`` (by default the largest and
    lowest finite values of the dtype); integer tensors come back as a copy."""
    _check_tensor(input, "nan_to_num")
    if not input._dtype.is_floating_point:
        return Tensor._wrap(backends.current.copy(input._data))
    info = finfo(input._dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    return NanToNum.apply(input, float(nan), float(posinf), float(neginf))


def sign(input):
    _check_tensor(input, "sign")
    if input._dtype.name == "bool":  # sign of True/False is itself
        return Tensor._wrap(backends.current.copy(input._data))
    return Sign.apply(input)


def floor(input):
    return _integer_passthrough(Floor, input, "floor")


def ceil(input):
    return _integer_passthrough(Ceil, input, "ceil")


def trunc(input):
    return _integer_passthrough(Trunc, input, "trunc")


fix = trunc


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
