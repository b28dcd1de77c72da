"""The activations of ``nn.functional`` that are Functions of their own.

Each forward is one backend method (``backends/numpy_families/nn_activations.py``).
The piecewise ones (leaky_relu, the ELU family, hardtanh, hardsigmoid, hardswish) have
a derivative that is one backend pass too, ``<name>_backward``, an op of its own
(``activation_derivatives.py``) that can be differentiated again; log_sigmoid, mish and
prelu write their backward with tensor ops.

    leaky_relu(x)  = x if x > 0 else slope * x          d: 1 or slope
    elu(x)         = s x if x > 0 else a s (e^(i x) - 1)    d: s, or a s i e^(i x)
                     (ELU: a, s, i = alpha, 1, 1; SELU: the fixed a, s; CELU: alpha, 1, 1/alpha)
    hardtanh(x)    = clamp(x, lo, hi)                   d: 1 strictly inside, else 0
    hardsigmoid(x) = clamp(x / 6 + 1/2, 0, 1)           d: 1/6 strictly inside (-3, 3)
    hardswish(x)   = x * hardsigmoid(x)                 d: 0, x / 3 + 1/2, 1
    log_sigmoid(x) = log(1 / (1 + e^-x))                d: sigmoid(-x)
    mish(x)        = x * tanh(softplus(x))              d: t + x * sigmoid(x) * (1 - t^2)
    prelu(x, w)    = x if x > 0 else w * x (w per channel)
"""
import numpy as np

from ... import backends
from ...autograd.function import Function
from ...ops._helpers import wrap
from ...ops.comparison import where
from ...ops.activations import softplus
from .activation_derivatives import (EluBackward, HardsigmoidBackward, HardswishBackward,
                                     HardtanhBackward, LeakyReluBackward)


class _Activation(Function):
    """An activation f(x; params): forward is the backend's ``backend_method(x, *params)``
    (x is saved), backward is ``derivative(grad, x, *params)`` -- one per subclass."""

    backend_method = None

    @classmethod
    def forward(cls, ctx, x, *params):
        ctx.save_for_backward(x)
        ctx.params = params
        return wrap(getattr(backends.current, cls.backend_method)(x._data, *params))

    @classmethod
    def backward(cls, ctx, grad):
        x, = ctx.saved_tensors
        return (cls.derivative(grad, x, *ctx.params),) + (None,) * len(ctx.params)


class LeakyRelu(_Activation):
    node_name = "LeakyReluBackward0"
    backend_method = "leaky_relu"
    derivative = LeakyReluBackward.apply


class LeakyReluInplace(LeakyRelu):
    """The in-place form; torch cannot differentiate it when the slope is negative."""

    node_name = "LeakyReluBackward1"

    @classmethod
    def backward(cls, ctx, grad):
        slope, = ctx.params
        if slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which "
                "is not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead "
                f"(F.leaky_relu(x, {slope}) without inplace=True).")
        return super().backward(ctx, grad)


class Elu(_Activation):
    """ELU, SELU and CELU: one formula with params (alpha, scale, input_scale)."""

    node_name = "EluBackward0"
    backend_method = "elu"
    derivative = EluBackward.apply


class Celu(Elu):
    node_name = "CeluBackward0"

    @staticmethod
    def derivative(grad, x, alpha, scale, input_scale):
        # torch's derivative of celu uses 1 / alpha with alpha rounded to float32 first
        # (``1.0 / alpha.toFloat()``): the same here, so float64 gradients agree with torch's
        return EluBackward.apply(grad, x, alpha, scale, 1.0 / float(np.float32(alpha)))


class _RefusesNegativeAlpha:
    """The in-place forms of ELU, SELU and CELU: torch refuses a negative alpha there."""

    @classmethod
    def backward(cls, ctx, grad):
        if ctx.params[0] < 0:
            raise RuntimeError(
                "In-place elu backward calculation is triggered with a negative slope which is "
                "not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead.")
        return super().backward(ctx, grad)


class EluInplace(_RefusesNegativeAlpha, Elu):
    node_name = "EluBackward1"


class CeluInplace(_RefusesNegativeAlpha, Celu):
    node_name = "CeluBackward1"


class Hardtanh(_Activation):
    node_name = "HardtanhBackward0"
    backend_method = "hardtanh"
    derivative = HardtanhBackward.apply


class Hardsigmoid(_Activation):
    node_name = "HardsigmoidBackward0"
    backend_method = "hardsigmoid"
    derivative = HardsigmoidBackward.apply


class Hardswish(_Activation):
    node_name = "HardswishBackward0"
    backend_method = "hardswish"
    derivative = HardswishBackward.apply


class LogSigmoid(_Activation):
    node_name = "LogSigmoidBackward0"
    backend_method = "log_sigmoid"

    @staticmethod
    def derivative(grad, x):
        return grad * (-x).sigmoid()  # d log(sigmoid(x)) / dx = 1 - sigmoid(x) = sigmoid(-x)


class Mish(_Activation):
    node_name = "MishBackward0"
    backend_method = "mish"

    @staticmethod
    def derivative(grad, x):
        t = softplus(x).tanh()
        return grad * (t + x * x.sigmoid() * (1 - t * t))


class Prelu(Function):
    """x where x > 0, else weight * x, with one weight per channel (dim 1) or one for all."""

    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return wrap(backends.current.prelu(x._data, _channel_view(weight._data, x._data.ndim)))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        w = weight.reshape(_channel_shape(weight.numel(), x.ndim))
        positive = x > 0
        needs = ctx.needs_input_grad
        gx = where(positive, grad, w * grad) if needs[0] else None
        gw = None
        if needs[1]:
            gw = where(positive, 0.0, x * grad)
            # summed over everything but the channels (over everything for one weight)
            kept = (1,) if weight.numel() > 1 else ()
            other = tuple(d for d in range(x.ndim) if d not in kept)
            gw = (gw.sum(dim=other) if other else gw).reshape(weight.shape)
        return gx, gw


def _channel_shape(n_weights, ndim):
    """The shape that puts one weight per channel along dim 1 (or 0 of a 1-D input)."""
    if n_weights == 1 or ndim < 2:
        return (n_weights,) if ndim else ()
    return (1, n_weights) + (1,) * (ndim - 2)


def _channel_view(w, ndim):
    return w.reshape(_channel_shape(w.size, ndim))
