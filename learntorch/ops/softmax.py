"""softmax and log_softmax along one dimension, finite for logits of +-1000.

Both subtract the maximum before exponentiating (softmax is unchanged by a
shift), so ``exp`` never overflows; log_softmax never takes ``log`` of an
underflowed 0.  Backward uses only the saved *output*:

* softmax:     dx = y * (g - sum(g * y))
* log_softmax: dx = g - exp(y) * sum(g)
"""
from .. import _dtypes
from .. import backends
from ..autograd.function import Function
from ._helpers import recording_gradient_graph, wrap


def _float_input(x, dtype):
    a = x._data
    if dtype is not None:
        return a.astype(_dtypes.to_dtype(dtype).np)
    if not x._dtype.is_floating_point:
        return a.astype(_dtypes.get_default_dtype().np)
    return a


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        y = wrap(backends.current.softmax(_float_input(x, dtype), dim))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        if recording_gradient_graph():
            return y * (grad - (grad * y).sum(dim=ctx.dim, keepdim=True)), None, None
        return wrap(backends.current.softmax_backward(y._data, grad._data, ctx.dim)), None, None


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        y = wrap(backends.current.log_softmax(_float_input(x, dtype), dim))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        if recording_gradient_graph():
            return grad - y.exp() * grad.sum(dim=ctx.dim, keepdim=True), None, None
        return wrap(backends.current.log_softmax_backward(y._data, grad._data, ctx.dim)), None, None


def _dim(input, dim):
    if dim is None:
        # torch's legacy implicit choice, kept for compatibility (with its warning's advice)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return input._wrap_dim(dim)


def softmax(input, dim=None, dtype=None):
    return Softmax.apply(input, _dim(input, dim), dtype)


def log_softmax(input, dim=None, dtype=None):
    return LogSoftmax.apply(input, _dim(input, dim), dtype)
