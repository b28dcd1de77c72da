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


class LeakyRelu(Function):
    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return wrap(backends.current.leaky_relu(x._data, negative_slope))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return LeakyReluBackward.apply(grad, x, ctx.negative_slope), None


class LeakyReluInplace(LeakyRelu):
    """The in-place form; torch cannot differentiate it when the slope is negative."""

    node_name = "LeakyReluBackward1"

    @staticmethod
    def backward(ctx, grad):
        if ctx.negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which "
                "is not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead "
                f"(F.leaky_relu(x, {ctx.negative_slope}) without inplace=True).")
        return LeakyRelu.backward(ctx, grad)


class Elu(Function):
    """ELU, SELU and CELU: one formula with (alpha, scale, input_scale)."""

    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        ctx.save_for_backward(x)
        ctx.params = (alpha, scale, input_scale)
        return wrap(backends.current.elu(x._data, alpha, scale, input_scale))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return EluBackward.apply(grad, x, *ctx.params), None, None, None


class Celu(Elu):
    node_name = "CeluBackward0"

    @staticmethod
    def backward(ctx, grad):
        # torch's derivative of celu uses 1 / alpha with alpha rounded to float32 first
        # (``1.0 / alpha.toFloat()``): the same here, so float64 gradients agree with torch's
        x, = ctx.saved_tensors
        alpha = ctx.params[0]
        return EluBackward.apply(grad, x, alpha, 1.0, 1.0 / float(np.float32(alpha))), None, \
            None, None


def _refuse_negative_alpha(ctx):
    if ctx.params[0] < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead.")


class EluInplace(Elu):
    """The in-place forms of ELU and SELU; torch refuses a negative alpha there."""

    node_name = "EluBackward1"

    @staticmethod
    def backward(ctx, grad):
        _refuse_negative_alpha(ctx)
        return Elu.backward(ctx, grad)


class CeluInplace(Celu):
    node_name = "CeluBackward1"

    @staticmethod
    def backward(ctx, grad):
        _refuse_negative_alpha(ctx)
        return Celu.backward(ctx, grad)


class Hardtanh(Function):
    node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, x, min_val, max_val):
        ctx.save_for_backward(x)
        ctx.bounds = (min_val, max_val)
        return wrap(backends.current.hardtanh(x._data, min_val, max_val))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return HardtanhBackward.apply(grad, x, *ctx.bounds), None, None


class Hardsigmoid(Function):
    node_name = "HardsigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(backends.current.hardsigmoid(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return HardsigmoidBackward.apply(grad, x)


class Hardswish(Function):
    node_name = "HardswishBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(backends.current.hardswish(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return HardswishBackward.apply(grad, x)


class LogSigmoid(Function):
    node_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(backends.current.log_sigmoid(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (-x).sigmoid()  # d log(sigmoid(x)) / dx = 1 - sigmoid(x) = sigmoid(-x)


class Mish(Function):
    node_name = "MishBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(backends.current.mish(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
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
