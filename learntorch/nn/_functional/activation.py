"""Activations in ``nn.functional``: relu, leaky_relu, gelu, silu, tanh, sigmoid, softmax,
log_softmax.

Most are the ops of ``learntorch/ops`` under their ``F`` names, plus what only
the functional forms have: an ``inplace=`` flag (the result is written into
the input, which is returned) and softmax's legacy *implicit dim* (omitting
``dim`` picks one, with torch's deprecation warning).  ``leaky_relu`` is new
here: its own ``Function``.
"""
import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops import activations as _act
from ...ops import softmax as _softmax
from ...ops._helpers import wrap
from ...ops._inplace import apply_inplace
from ...ops.activations import gelu, sigmoid, softplus, tanh  # noqa: F401  (F.gelu, ...)
from ...ops.comparison import where


class LeakyRelu(Function):
    """leaky_relu(x) = x where x > 0, else negative_slope * x.

    Its derivative is 1 where x > 0 and negative_slope elsewhere (at x = 0 too,
    as torch chooses).
    """

    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        a = x._data
        # numpy multiplies in a's dtype (the Python float is cast to it first), as torch
        # does -- except in half precision, where torch multiplies in float32, then rounds
        scaled = (a.astype(np.float32) * negative_slope).astype(a.dtype) \
            if a.dtype == np.float16 else a * negative_slope
        return wrap(np.where(a > 0, a, scaled))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        # written with tensor ops, so it is itself differentiable (create_graph=True)
        return where(x > 0, grad, grad * ctx.negative_slope), None


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


def _require_tensor(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}; convert it first with torch.tensor(...)")


def relu(input, inplace=False):
    _require_tensor(input, "relu")
    return input.relu_() if inplace else _act.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _require_tensor(input, "leaky_relu")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for '{input.dtype}': "
                                  "convert the tensor first, e.g. x.float()")
    negative_slope = float(negative_slope)
    if inplace:
        return apply_inplace(input, lambda src: LeakyReluInplace.apply(src, negative_slope))
    return LeakyRelu.apply(input, negative_slope)


def silu(input, inplace=False):
    _require_tensor(input, "silu")
    if inplace:
        return apply_inplace(input, _act.silu)
    return _act.silu(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    _require_tensor(input, "softmax")
    if dim is None:
        dim = _softmax.implicit_dim("softmax", input.ndim, _stacklevel)
    return _softmax.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    _require_tensor(input, "log_softmax")
    if dim is None:
        dim = _softmax.implicit_dim("log_softmax", input.ndim, _stacklevel)
    return _softmax.log_softmax(input, dim, dtype=dtype)
