"""Activation functions: tanh, sigmoid, relu, gelu, silu, softplus (and clamp).

The backward of tanh, sigmoid, relu, gelu and silu is one derivative op
(``activation_backward.py``): ``grad * f'(x)`` in a single pass of the backend's
``<name>_backward`` kernel, and itself differentiable, for second derivatives.

Kernels may return inf/nan without a numpy warning: ``Function.apply`` and the
backward engine already run every forward and backward with warnings off.
"""
import math

import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import float_array, wrap
from .activation_backward import (gelu_backward, relu_backward, sigmoid_backward, silu_backward,
                                  tanh_backward)
from .broadcast import _broadcast_tuple
from .unary import _check_tensor


def _floating_only(x, kernel):
    """gelu, silu and softplus are defined for floating tensors only (torch's error)."""
    if not x._dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x._dtype}': convert the "
                                  "tensor first, e.g. x.float()")


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
        return tanh_backward(grad, y)  # grad * (1 - y^2)


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
        return sigmoid_backward(grad, y)  # grad * y * (1 - y)


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, x):
        if x._dtype is _dtypes.bool_:
            raise RuntimeError("Boolean inputs not supported for relu: convert the mask first, "
                               "e.g. x.float()")
        y = wrap(backends.current.relu(x._data))
        ctx.save_for_backward(y)  # relu'(x) = (y > 0): the output is enough
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return relu_backward(grad, y)  # grad where y > 0, else 0


class Gelu(Function):
    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x, approximate):
        _floating_only(x, "GeluKernelImpl")
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":  # 0.5 x (1 + tanh(k (x + c x^3)))
            return wrap(backends.current.gelu_tanh(x._data))
        return wrap(backends.current.gelu(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if ctx.approximate == "tanh":
            # y = x * s with s = sigmoid(2u), u = k (x + c x^3)  (the backend's gelu_tanh), so
            # dy/dx = s + x * s (1 - s) * 2 u'  with  u' = k (1 + 3 c x^2)
            if x._dtype is _dtypes.float16:  # x^2 overflows half at |x| > 256: 0 * inf = nan
                x = x.float()
            s = (2 * _GELU_K * (x + _GELU_C * x ** 3)).sigmoid()
            d = s + 2 * x * s * (1 - s) * _GELU_K * (1 + 3 * _GELU_C * x * x)
            return grad * d, None
        return gelu_backward(grad, x), None  # grad * (Phi(x) + x * phi(x))


_GELU_K, _GELU_C = math.sqrt(2 / math.pi), 0.044715  # gelu_tanh's u = k (x + c x^3)


class Silu(Function):
    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):
        _floating_only(x, "silu_cpu")
        ctx.save_for_backward(x)
        return wrap(backends.current.silu(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return silu_backward(grad, x)  # grad * s * (1 + x * (1 - s)), s = sigmoid(x)


class Softplus(Function):
    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x, beta, threshold):
        _floating_only(x, "softplus_cpu")
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        # log(1 + e^(beta x)) / beta, and x itself above the threshold (as torch)
        return wrap(backends.current.softplus(x._data, beta, threshold))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        bx = x * ctx.beta
        return grad * (bx.sigmoid().masked_fill(bx > ctx.threshold, 1.0)), None, None


class Clamp(Function):
    """clamp(x, min, max) = min(max(x, min), max); the bounds are numbers, tensors or None.

    The gradient goes where the value came from: to x where min <= x <= max,
    to a tensor min where x < min, to a tensor max where x > max (when min > max
    every element is max, so max gets it all) -- torch's rules, ties included.
    """

    node_name = "ClampBackward1"  # numbers as bounds; ClampTensor below for tensor bounds

    @staticmethod
    def forward(ctx, x, min, max):
        ctx.save_for_backward(x, *(b if isinstance(b, Tensor) else None for b in (min, max)))
        ctx.bounds = (min, max)
        present = [b for b in (min, max) if b is not None]
        dtype = _dtypes.result_type(x, *present)
        if dtype is _dtypes.bool_:
            raise NotImplementedError("\"clamp_cpu\" not implemented for 'Bool': convert the "
                                      "mask first, e.g. x.long().clamp(...)")
        shapes = [t._data.shape for t in (x, *present) if isinstance(t, Tensor)]
        if len(set(shapes)) > 1:
            _broadcast_tuple(*shapes)  # torch's RuntimeError, naming the shapes
        a = x._data if x._data.dtype == dtype.np else x._data.astype(dtype.np)
        return wrap(backends.current.clamp(a, _bound(min, dtype), _bound(max, dtype)))

    @staticmethod
    def backward(ctx, grad):
        x, lo_t, hi_t = ctx.saved_tensors
        lo, hi = ctx.bounds
        lo = lo_t if lo_t is not None else lo
        hi = hi_t if hi_t is not None else hi
        inside = None
        if lo is not None:
            inside = x >= lo
        if hi is not None:
            inside = (x <= hi) if inside is None else inside & (x <= hi)
        grad_x = grad * inside if ctx.needs_input_grad[0] else None
        grad_lo = grad_hi = None
        if lo_t is not None and ctx.needs_input_grad[1]:
            below = x < lo if hi is None else (x < lo) & (lo < hi)
            grad_lo = grad * below
        if hi_t is not None and ctx.needs_input_grad[2]:
            above = x > hi if lo is None else (x > hi) | (hi < lo)
            grad_hi = grad * above
        return grad_x, grad_lo, grad_hi


class ClampTensor(Clamp):
    node_name = "ClampBackward0"


def _bound(b, dtype):
    if isinstance(b, Tensor):
        return b._data.astype(dtype.np, copy=False)
    # a number as the result's dtype stores it: -1 wraps into uint8 (255), 300 raises, as torch
    return None if b is None else _dtypes.cast_python_scalar(b, dtype)


def tanh(input):
    _check_tensor(input, "tanh")
    return Tanh.apply(input)


def sigmoid(input):
    _check_tensor(input, "sigmoid")
    return Sigmoid.apply(input)


def relu(input):
    _check_tensor(input, "relu")
    return Relu.apply(input)


def gelu(input, approximate="none"):
    _check_tensor(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got "
                           f"{approximate!r}")
    return Gelu.apply(input, approximate)


def silu(input):
    _check_tensor(input, "silu")
    return Silu.apply(input)


def softplus(input, beta=1.0, threshold=20.0):
    _check_tensor(input, "softplus")
    return Softplus.apply(input, beta, threshold)


def clamp(input, min=None, max=None):
    _check_tensor(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    for name, b in (("min", min), ("max", max)):
        if b is not None and not isinstance(b, (Tensor, bool, int, float, np.number)):
            raise TypeError(f"clamp(): argument '{name}' must be a number or a Tensor, not "
                            f"{type(b).__name__}")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(input, min, max)


clip = clamp
