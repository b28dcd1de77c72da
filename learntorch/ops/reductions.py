"""Reductions: sum, mean, prod, max/min, var/std, logsumexp, norm, all/any, cumsum.

Every reduction takes ``dim`` (None, an int or a tuple of ints) and
``keepdim``.  Backward of a reduction *broadcasts* the gradient back over the
reduced dimensions (``_expand_back``): each input element contributed to one
output element, so it receives that element's gradient (times its local
derivative).
"""
import builtins
import collections

import numpy as np

from .. import _dtypes
from .. import backends
from ..autograd.function import Function
from ._helpers import normalize_dims, wrap

values_indices = collections.namedtuple("return_types", ["values", "indices"])


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast ``grad`` (the reduced shape) back to ``shape`` over ``dims``."""
    if not keepdim:
        kept = [1 if i in dims else s for i, s in enumerate(shape)]
        grad = grad.reshape(kept)
    return grad.expand(shape)


class Sum(Function):
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        a = x._data
        if dtype is not None:
            a = a.astype(dtype.np)
        elif not x._dtype.is_floating_point:
            a = a.astype(np.int64)  # torch sums bool/integer tensors as int64
        return wrap(np.asarray(backends.current.sum(a, dims, keepdim)))

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Mean(Function):
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        a = x._data if dtype is None else x._data.astype(dtype.np)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
        return wrap(np.asarray(np.mean(a, axis=dims, keepdims=keepdim), dtype=a.dtype))

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad / ctx.count, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Prod(Function):
    node_name = "ProdBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        a = x._data if x._dtype.is_floating_point else x._data.astype(np.int64)
        out = wrap(np.asarray(np.prod(a, axis=dims, keepdims=keepdim)))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape, dims, keepdim = x.shape, ctx.dims, ctx.keepdim
        if not (x._data == 0).any():
            # product of the others = product / self, when nothing is zero
            return _expand_back(grad * out, shape, dims, keepdim) / x, None, None
        # with zeros, multiply the exclusive products from the left and from the right
        moved = np.moveaxis(x._data, dims, range(len(dims)))
        flat = moved.reshape((-1,) + moved.shape[len(dims):])
        left = np.cumprod(np.concatenate([np.ones_like(flat[:1]), flat[:-1]]), axis=0)
        right = np.cumprod(np.concatenate([np.ones_like(flat[:1]), flat[::-1][:-1]]), axis=0)[::-1]
        others = np.moveaxis((left * right).reshape(moved.shape), range(len(dims)), dims)
        return _expand_back(grad, shape, dims, keepdim) * wrap(np.ascontiguousarray(others)), None, None


class _Extreme(Function):
    """amax/amin: the gradient is shared evenly among the elements equal to the extreme."""

    @classmethod
    def forward(cls, ctx, x, dims, keepdim):
        if x._data.size == 0:
            raise IndexError(f"{cls.fname}(): Expected reduction dim to be specified for "
                             "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        out = wrap(np.asarray(cls.numpy_fn(x._data, axis=dims, keepdims=keepdim)))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        full = _expand_back(out, x.shape, ctx.dims, ctx.keepdim)
        mask = (x == full)
        count = mask.sum(dim=ctx.dims, keepdim=True)
        g = _expand_back(grad, x.shape, ctx.dims, ctx.keepdim)
        return g * mask / count, None, None


class Amax(_Extreme):
    node_name = "AmaxBackward0"
    fname = "amax"
    numpy_fn = staticmethod(np.max)


class Amin(_Extreme):
    node_name = "AminBackward0"
    fname = "amin"
    numpy_fn = staticmethod(np.min)


class _ExtremeWithIndices(Function):
    """max(dim)/min(dim): values and int64 indices; the gradient goes to the index taken."""

    @classmethod
    def forward(cls, ctx, x, dim, keepdim):
        if x._data.ndim and x._data.shape[dim] == 0:
            raise IndexError(f"{cls.fname}(): Expected reduction dim {dim} to have non-zero size.")
        idx = cls.arg_fn(x._data, axis=dim, keepdims=True) if x._data.ndim else np.zeros((), np.int64)
        vals = np.take_along_axis(x._data, idx, axis=dim) if x._data.ndim else x._data.copy()
        if not keepdim and x._data.ndim:
            idx, vals = np.squeeze(idx, dim), np.squeeze(vals, dim)
        values, indices = wrap(np.ascontiguousarray(vals)), wrap(np.asarray(idx, dtype=np.int64))
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        if not ctx.shape:
            return grad.clone(), None, None
        if not ctx.keepdim:
            grad, indices = grad.unsqueeze(ctx.dim), indices.unsqueeze(ctx.dim)
        from ..factories import zeros
        out = zeros(ctx.shape, dtype=grad.dtype)
        return out.scatter_add(ctx.dim, indices, grad), None, None


class MaxDim(_ExtremeWithIndices):
    node_name = "MaxBackward0"
    fname = "max"
    arg_fn = staticmethod(lambda a, axis, keepdims: _nan_aware_arg(a, axis, keepdims, np.argmax))


class MinDim(_ExtremeWithIndices):
    node_name = "MinBackward0"
    fname = "min"
    arg_fn = staticmethod(lambda a, axis, keepdims: _nan_aware_arg(a, axis, keepdims, np.argmin))


def _nan_aware_arg(a, axis, keepdims, fn):
    # numpy's argmax already returns the first nan, matching torch (nan propagates)
    return fn(a, axis=axis, keepdims=keepdims)


class Var(Function):
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        a = x._data
        n = int(np.prod([a.shape[d] for d in dims])) if dims else 1
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim, ctx.divisor = dims, keepdim, builtins.max(n - correction, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = a.mean(axis=dims, keepdims=True)
            out = ((a - mean) ** 2).sum(axis=dims, keepdims=keepdim) / ctx.divisor
        return wrap(np.asarray(out, dtype=a.dtype))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        centered = x - x.mean(dim=ctx.dims, keepdim=True)
        g = _expand_back(grad, x.shape, ctx.dims, ctx.keepdim)
        return g * centered * (2.0 / ctx.divisor), None, None, None


class Logsumexp(Function):
    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        a = x._data if x._dtype.is_floating_point else x._data.astype(
            _dtypes.get_default_dtype().np)
        out = wrap(np.asarray(backends.current.logsumexp(a, dims, keepdim), dtype=a.dtype))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        # d logsumexp / dx = softmax(x) = exp(x - logsumexp(x))
        full = _expand_back(out, x.shape, ctx.dims, ctx.keepdim)
        g = _expand_back(grad, x.shape, ctx.dims, ctx.keepdim)
        return g * (x - full).exp(), None, None


class Norm2(Function):
    node_name = "NormBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        a = x._data
        out = wrap(np.asarray(np.sqrt((a * a).sum(axis=dims, keepdims=keepdim)), dtype=a.dtype))
        ctx.save_for_backward(x, out)
        ctx.dims, ctx.keepdim = dims, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        full = _expand_back(out, x.shape, ctx.dims, ctx.keepdim)
        g = _expand_back(grad, x.shape, ctx.dims, ctx.keepdim)
        # x / ||x||, defined as 0 for the zero vector (torch's subgradient)
        safe = full.masked_fill(full == 0, 1.0)
        return g * x / safe, None, None


class Cumsum(Function):
    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        ctx.dim = dim
        a = x._data
        if dtype is not None:
            a = a.astype(dtype.np)
        elif not x._dtype.is_floating_point:
            a = a.astype(np.int64)
        return wrap(np.cumsum(a, axis=dim) if a.ndim else a.copy())

    @staticmethod
    def backward(ctx, grad):
        # each input feeds every later output: the gradient is a reversed cumulative sum
        if grad.ndim == 0:
            return grad, None, None
        return grad.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim), None, None


# ---------------------------------------------------------------- public functions
def _dims(input, dim):
    return normalize_dims(dim, input._data.ndim, input.shape)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        dtype = _dtypes.to_dtype(dtype)
    return Sum.apply(input, _dims(input, dim), keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    dt = _dtypes.to_dtype(dtype) if dtype is not None else input._dtype
    if not dt.is_floating_point:
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {input._type_name().split('.')[-1].replace('Tensor', '')}. "
            "Convert first, e.g. x.float().mean()")
    return Mean.apply(input, _dims(input, dim), keepdim, _dtypes.to_dtype(dtype) if dtype else None)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(input, dim)
    if dim is not None and len(dims) != 1:
        raise TypeError("prod(): dim must be a single int")
    return Prod.apply(input, dims, keepdim)


def amax(input, dim=(), keepdim=False):
    return Amax.apply(input, _dims(input, dim if dim != () else None), keepdim)


def amin(input, dim=(), keepdim=False):
    return Amin.apply(input, _dims(input, dim if dim != () else None), keepdim)


def _max_min(input, dim, keepdim, other, full_cls, dim_cls, name):
    from .._tensor import Tensor
    if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
        other, dim = dim, None
    if other is not None:
        from . import comparison
        return (comparison.maximum if name == "max" else comparison.minimum)(input, other)
    if dim is None:
        return full_cls.apply(input, _dims(input, None), False)
    d = input._wrap_dim(dim)
    return values_indices(*dim_cls.apply(input, d, keepdim))


def max(input, dim=None, keepdim=False, *, other=None):
    return _max_min(input, dim, keepdim, other, Amax, MaxDim, "max")


def min(input, dim=None, keepdim=False, *, other=None):
    return _max_min(input, dim, keepdim, other, Amin, MinDim, "min")


def argmax(input, dim=None, keepdim=False):
    if dim is None:
        out = np.asarray(np.argmax(input._data), dtype=np.int64)
        return wrap(out.reshape((1,) * input.ndim) if keepdim else out)
    d = input._wrap_dim(dim)
    return wrap(np.asarray(np.argmax(input._data, axis=d, keepdims=keepdim), dtype=np.int64)
                if input.ndim else np.zeros((), np.int64))


def argmin(input, dim=None, keepdim=False):
    if dim is None:
        out = np.asarray(np.argmin(input._data), dtype=np.int64)
        return wrap(out.reshape((1,) * input.ndim) if keepdim else out)
    d = input._wrap_dim(dim)
    return wrap(np.asarray(np.argmin(input._data, axis=d, keepdims=keepdim), dtype=np.int64)
                if input.ndim else np.zeros((), np.int64))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(unbiased, bool) is False and unbiased is not None and dim is None:
        dim, unbiased = unbiased, None
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"var(): expected a floating point tensor, got {input._dtype}; "
                           "use x.float().var()")
    return Var.apply(input, _dims(input, dim), _correction(unbiased, correction), keepdim)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (var(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (std(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim))


def logsumexp(input, dim, keepdim=False):
    return Logsumexp.apply(input, _dims(input, dim), keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    dims = _dims(input, dim)
    if p in ("fro", 2, 2.0):
        return Norm2.apply(input, dims, keepdim)
    if p in (float("inf"), "inf"):
        return amax(input.abs(), dims, keepdim)
    if p in (float("-inf"), "-inf"):
        return amin(input.abs(), dims, keepdim)
    if p == 1:
        return sum(input.abs(), dims, keepdim)
    if p == 0:
        return sum((input != 0).to(input.dtype), dims, keepdim)
    if isinstance(p, (int, float)):
        return sum(input.abs() ** p, dims, keepdim) ** (1.0 / p)
    raise ValueError(f"norm: unsupported p={p!r}; use a number, 'fro', inf or -inf")


def all(input, dim=None, keepdim=False):
    dims = _dims(input, dim)
    return wrap(np.asarray(np.all(input._data, axis=dims, keepdims=keepdim)))


def any(input, dim=None, keepdim=False):
    dims = _dims(input, dim)
    return wrap(np.asarray(np.any(input._data, axis=dims, keepdims=keepdim)))


def cumsum(input, dim, *, dtype=None):
    d = input._wrap_dim(dim)
    return Cumsum.apply(input, d, _dtypes.to_dtype(dtype) if dtype is not None else None)


def count_nonzero(input, dim=None):
    return wrap(np.asarray(np.count_nonzero(input._data, axis=_dims(input, dim)), dtype=np.int64))
