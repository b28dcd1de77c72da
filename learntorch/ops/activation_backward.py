"""The derivatives of the activations, as operations of their own (torch's ``*_backward`` ops).

``Tanh.backward`` returns ``tanh_backward(grad, y)``, which is ``grad * (1 - y*y)``
computed in one pass by the backend (``backends.current.tanh_backward``): one
kernel instead of three ops, and the place a learner's backend or the Numba
kernels take over.  Because each derivative is itself a ``Function``, it has a
``backward`` too: that is what ``create_graph=True`` differentiates for second
derivatives (torch names those nodes ``TanhBackwardBackward0`` and so on).

Arguments follow torch's order: the incoming gradient first, then what the
forward saved (the output ``y`` for tanh, sigmoid and relu; the input ``x`` for
gelu and silu).
"""
import math

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function


class TanhBackward(Function):
    """grad * (1 - y^2), with y = tanh(x)."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return Tensor._wrap(backends.current.tanh_backward(y._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        return (gg * (1 - y * y) if ctx.needs_input_grad[0] else None,
                gg * grad * -2 * y if ctx.needs_input_grad[1] else None)


class SigmoidBackward(Function):
    """grad * y * (1 - y), with y = sigmoid(x)."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return Tensor._wrap(backends.current.sigmoid_backward(y._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        return (gg * y * (1 - y) if ctx.needs_input_grad[0] else None,
                gg * grad * (1 - 2 * y) if ctx.needs_input_grad[1] else None)


class ReluBackward(Function):
    """grad where y > 0, else 0 (torch's threshold_backward); flat in y."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(y)
        return Tensor._wrap(backends.current.relu_backward(y._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        # flat in y: its derivative is zero -- a zero tensor, as torch's, not None (so a
        # second-order gradient reaching y through here is 0, not missing)
        y, = ctx.saved_tensors
        return (relu_backward(gg, y) if ctx.needs_input_grad[0] else None,
                Tensor._wrap(backends.current.full(y.shape, 0, gg._data.dtype, like=gg._data))
                if ctx.needs_input_grad[1] else None)


class GeluBackward(Function):
    """grad * (Phi(x) + x * phi(x)) for the exact gelu x * Phi(x)."""

    node_name = "GeluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x):
        ctx.save_for_backward(grad, x)
        return Tensor._wrap(backends.current.gelu_backward(x._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
        return (gelu_backward(gg, x) if ctx.needs_input_grad[0] else None,
                gg * grad * pdf * (2 - x * x) if ctx.needs_input_grad[1] else None)


class SiluBackward(Function):
    """grad * s * (1 + x * (1 - s)), with s = sigmoid(x)."""

    node_name = "SiluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x):
        ctx.save_for_backward(grad, x)
        return Tensor._wrap(backends.current.silu_backward(x._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        s = x.sigmoid()
        return (silu_backward(gg, x) if ctx.needs_input_grad[0] else None,
                gg * grad * s * (1 - s) * (2 + x * (1 - 2 * s))
                if ctx.needs_input_grad[1] else None)


def tanh_backward(grad, y):
    return TanhBackward.apply(grad, y)


def sigmoid_backward(grad, y):
    return SigmoidBackward.apply(grad, y)


def relu_backward(grad, y):
    return ReluBackward.apply(grad, y)


def gelu_backward(grad, x):
    return GeluBackward.apply(grad, x)


def silu_backward(grad, x):
    return SiluBackward.apply(grad, x)
