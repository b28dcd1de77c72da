"""softmax and log_softmax along one dimension, finite for logits of +-1000.

Both subtract the maximum before exponentiating (softmax is unchanged by a
shift), so ``exp`` never overflows; log_softmax never takes ``log`` of an
underflowed 0.  Backward uses only the saved *output*, in one backend pass each
(``softmax_backward``, ``log_softmax_backward``), themselves differentiable:

* softmax:     dx = y * (g - sum(g * y))
* log_softmax: dx = g - exp(y) * sum(g)
"""
import warnings


from .. import _dtypes
from .. import backends
from ..autograd.function import Function
from ._helpers import as_array, require_tensors, wrap


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        a = x._data
        # (np.asarray: numpy turns 0-dim results into scalars; a tensor needs an array)
        y = wrap(as_array(backends.current.softmax(a, dim)) if a.size else
                 backends.current.copy(a))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return SoftmaxBackward.apply(grad, y, ctx.dim), None


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        a = x._data
        y = wrap(as_array(backends.current.log_softmax(a, dim)) if a.size else
                 backends.current.copy(a))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return LogSoftmaxBackward.apply(grad, y, ctx.dim), None


class SoftmaxBackward(Function):
    """y * (g - sum(g * y)) along ``dim``, for y = softmax(x): one backend pass."""

    node_name = "SoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        return wrap(as_array(backends.current.softmax_backward(y._data, grad._data, dim)))

    @staticmethod
    def backward(ctx, gg):
        # out = y*g - y*s with s = sum(g*y): d/dg = y*gg - y*sum(y*gg);
        # d/dy = gg*g - gg*s - g*sum(gg*y)
        grad, y = ctx.saved_tensors
        dim = ctx.dim
        s = (grad * y).sum(dim=dim, keepdim=True)
        gy = (gg * y).sum(dim=dim, keepdim=True)
        return (y * (gg - gy) if ctx.needs_input_grad[0] else None,
                gg * (grad - s) - grad * gy if ctx.needs_input_grad[1] else None, None)


class LogSoftmaxBackward(Function):
    """g - exp(y) * sum(g) along ``dim``, for y = log_softmax(x): one backend pass."""

    node_name = "LogSoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        return wrap(as_array(backends.current.log_softmax_backward(y._data, grad._data, dim)))

    @staticmethod
    def backward(ctx, gg):
        # out = g - e^y * sum(g): d/dg = gg - sum(gg * e^y); d/dy = -gg * e^y * sum(g)
        grad, y = ctx.saved_tensors
        dim = ctx.dim
        p = y.exp()
        return (gg - (gg * p).sum(dim=dim, keepdim=True) if ctx.needs_input_grad[0] else None,
                -gg * p * grad.sum(dim=dim, keepdim=True) if ctx.needs_input_grad[1] else None,
                None)


def _prepare(name, input, dim, dtype):
    """Check ``dim``, cast to ``dtype`` first (as torch does) and refuse integer tensors."""
    require_tensors(name, ("input", input))
    if dim is None:
        raise TypeError(f"{name}() missing 1 required positional argument: 'dim' (the "
                        f"dimension that sums to 1), e.g. x.{name}(dim=-1)")
    d = input._wrap_dim(dim)
    if dtype is not None:
        # a recorded cast, so the gradient flows back in the input's dtype
        input = input.to(_dtypes.to_dtype(dtype))
    if not input._dtype.is_floating_point:
        raise NotImplementedError(
            f"{name}() is not implemented for {input._dtype} ('Long' in torch): it needs a "
            f"floating point tensor; pass dtype=torch.float32 or convert with x.float()")
    return input, d


def softmax(input, dim=None, dtype=None):
    input, d = _prepare("softmax", input, dim, dtype)
    return Softmax.apply(input, d)


def log_softmax(input, dim=None, dtype=None):
    input, d = _prepare("log_softmax", input, dim, dtype)
    return LogSoftmax.apply(input, d)


def implicit_dim(name, ndim, stacklevel=3):
    """torch.nn.functional's legacy choice when ``dim`` is omitted, with torch's warning.

    Only ``nn.functional.softmax(x)`` may omit dim; ``torch.softmax(x)`` and
    ``x.softmax()`` require it.
    """
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1
