"""Activation functions: tanh, sigmoid, relu, gelu, silu, softplus (and clamp).

Each backward has two paths that compute the same thing:

* while recording a graph of the gradient (``create_graph=True``) the
  derivative is written with differentiable tensor ops, so it can itself be
  differentiated (grad of grad);
* otherwise one fused backend kernel computes ``grad * f'(x)`` in a single
  pass (``backends.current.<name>_backward``), the fast path of training.
"""
import numpy as np

from .. import backends
from ..autograd.function import Function
from ._helpers import float_array, recording_gradient_graph, wrap


class Tanh(Function):
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(backends.current.tanh(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        if recording_gradient_graph():
            return grad * (1 - y * y)
        return wrap(backends.current.tanh_backward(y._data, grad._data))


class Sigmoid(Function):
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(backends.current.sigmoid(float_array(x)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        if recording_gradient_graph():
            return grad * y * (1 - y)
        return wrap(backends.current.sigmoid_backward(y._data, grad._data))


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, x):
        y = wrap(backends.current.relu(x._data))
        ctx.save_for_backward(y)  # relu'(x) = (y > 0): the output is enough
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        if recording_gradient_graph():
            return grad * (y > 0)
        return wrap(backends.current.relu_backward(y._data, grad._data))


class Gelu(Function):
    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        a = float_array(x)
        if approximate == "tanh":
            return wrap(_gelu_tanh(a))
        return wrap(backends.current.gelu(a))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if ctx.approximate == "tanh":
            k = np.sqrt(2 / np.pi)
            inner = k * (x + 0.044715 * x ** 3)
            t = inner.tanh()
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
            return grad * d, None
        if recording_gradient_graph():
            cdf = 0.5 * (1 + _erf_tensor(x / np.sqrt(2)))
            pdf = (-0.5 * x * x).exp() / np.sqrt(2 * np.pi)
            return grad * (cdf + x * pdf), None
        return wrap(backends.current.gelu_backward(x._data, grad._data)), None


def _gelu_tanh(a):
    k = np.sqrt(2 / np.pi)
    return (0.5 * a * (1 + np.tanh(k * (a + 0.044715 * a ** 3)))).astype(a.dtype, copy=False)


def _erf_tensor(x):
    from .special import erf
    return erf(x)


class Silu(Function):
    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(backends.current.silu(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if recording_gradient_graph():
            s = x.sigmoid()
            return grad * s * (1 + x * (1 - s))
        return wrap(backends.current.silu_backward(x._data, grad._data))


class Softplus(Function):
    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        a = float_array(x)
        bx = a * beta
        # log(1 + e^bx) / beta, computed as logaddexp so that large bx cannot overflow;
        # above the threshold torch returns x itself
        out = np.where(bx > threshold, a, np.logaddexp(0, bx) / beta)
        return wrap(out.astype(a.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        bx = x * ctx.beta
        return grad * (bx.sigmoid().masked_fill(bx > ctx.threshold, 1.0)), None, None


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, x, min, max):
        ctx.save_for_backward(x)
        ctx.bounds = (min, max)
        a = x._data
        out = a
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        return wrap(np.asarray(out, dtype=a.dtype) if out is not a else a.copy())

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        lo, hi = ctx.bounds
        inside = None
        if lo is not None:
            inside = x >= lo
        if hi is not None:
            inside = (x <= hi) if inside is None else inside & (x <= hi)
        return (grad if inside is None else grad * inside), None, None


def tanh(input):
    return Tanh.apply(input)


def sigmoid(input):
    return Sigmoid.apply(input)


def relu(input):
    return Relu.apply(input)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return Gelu.apply(input, approximate)


def silu(input):
    return Silu.apply(input)


def softplus(input, beta=1.0, threshold=20.0):
    return Softplus.apply(input, beta, threshold)


def clamp(input, min=None, max=None):
    from .._tensor import Tensor
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        from .comparison import maximum, minimum
        out = input
        if min is not None:
            out = maximum(out, min if isinstance(min, Tensor) else out.new_full((), min))
        if max is not None:
            out = minimum(out, max if isinstance(max, Tensor) else out.new_full((), max))
        return out
    return Clamp.apply(input, min, max)


clip = clamp
