"""Order statistics along a dim: median, nanmedian, kthvalue, mode, quantile, nanquantile.

Each picks elements by their rank, so (like max with a dim) the picked value's
gradient goes back to the index it came from.  ``median()`` of a whole tensor picks a
value without an index: its gradient is shared by the elements equal to it.  The
lower of the two middle elements is the median of an even count, as in torch.
Where values tie, the index is the one torch's CPU kernels report (the backend
replays them).  ``quantile`` interpolates between two sorted neighbours, written with
differentiable ops (sort, gather, lerp), as torch writes it.
"""
import collections

import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import require_tensors, wrap

median_result = collections.namedtuple("median", ["values", "indices"])
nanmedian_result = collections.namedtuple("nanmedian", ["values", "indices"])
kthvalue_result = collections.namedtuple("kthvalue", ["values", "indices"])
mode_result = collections.namedtuple("mode", ["values", "indices"])


class _PickAlongDim(Function):
    """(values, indices) picked along ``dim`` (one per row); the gradient of each value goes
    back to its index.  ``pick(ctx, a, dim)`` returns the keepdims indices."""

    @classmethod
    def forward(cls, ctx, x, dim, keepdim, *args):
        a = x._data.reshape(1) if x.ndim == 0 else x._data  # a number: a row of one
        d = 0 if x.ndim == 0 else dim
        indices = cls.pick(a, d, *args)
        values = backends.current.gather(a, d, indices)
        if x.ndim == 0:
            values, indices = values.reshape(()), indices.reshape(())
        elif not keepdim:
            values, indices = values.squeeze(axis=d), indices.squeeze(axis=d)
        values, indices = wrap(values), wrap(indices)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.dim, ctx.keepdim, ctx.shape = dim, keepdim, x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        nones = (None,) * (len(ctx.needs_input_grad) - 1)
        if not ctx.shape:
            return (grad,) + nones
        if not ctx.keepdim:
            grad, indices = grad.unsqueeze(ctx.dim), indices.unsqueeze(ctx.dim)
        canvas = Tensor._wrap(backends.current.full(ctx.shape, 0, grad._data.dtype,
                                                    like=grad._data))
        return (canvas.scatter_add(ctx.dim, indices, grad),) + nones


class MedianDim(_PickAlongDim):
    node_name = "MedianBackward1"

    @staticmethod
    def pick(a, dim):
        return backends.current.median_index(a, dim)


class NanmedianDim(_PickAlongDim):
    node_name = "NanmedianBackward1"

    @staticmethod
    def pick(a, dim):
        # the median of the non-nan elements: the ((count - 1) // 2)-th in a stable sort
        # where nan is last (a row of nans only: its first nan)
        b = backends.current
        if a.dtype.kind != "f":
            return b.median_index(a, dim)
        order = b.argsort(a, dim, False)  # nan last
        count = b.sum(b.cast(b.logical_not(b.isnan(a)), np.int64), (dim,), True)
        return b.gather(order, dim, b.maximum(b.floor_divide(b.sub(count, 1), 2), 0))


class Kthvalue(_PickAlongDim):
    node_name = "KthvalueBackward0"

    @staticmethod
    def pick(a, dim, k):
        return backends.current.kthvalue(a, k, dim)


class Mode(_PickAlongDim):
    node_name = "ModeBackward0"

    @staticmethod
    def pick(a, dim):
        return backends.current.mode(a, dim)[1]


class MedianAll(Function):
    """median() of everything: a value with no index; its gradient is shared by the
    elements equal to it (the nans, when it is nan) -- torch's rule."""

    node_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, x, ignore_nan):
        flat = x._data.reshape(-1)
        b = backends.current
        if flat.size == 0:  # torch: the median of nothing is nan
            out = wrap(b.full((), float("nan"), flat.dtype, like=flat))
            ctx.save_for_backward(x, out)
            return out
        if ignore_nan:
            index = NanmedianDim.pick(flat, 0)
        else:
            index = b.median_index(flat, 0)
        out = wrap(b.gather(flat, 0, index).reshape(()))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        mask = (x == out) | (x.isnan() & out.isnan())
        return grad * mask / mask.sum(), None


def _not_for_bool(input, kernel):
    if input._dtype is _dtypes.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool': convert the mask "
                                  "first, e.g. x.long() or x.float()")


def _check_dim_not_empty(input, dim, name):
    size = input.shape[dim] if input.ndim else 1
    if size == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def median(input, dim=None, keepdim=False):
    """The lower median: of everything (a 0-d tensor, nan if there is a nan), or along
    ``dim`` as (values, indices)."""
    require_tensors("median", ("input", input))
    if dim is None:
        if input.numel():  # (torch answers an empty bool tensor before checking its dtype)
            _not_for_bool(input, "median_cpu")
        return MedianAll.apply(input, False)
    d = input._wrap_dim(dim)
    _check_dim_not_empty(input, d, "median")
    _not_for_bool(input, "median_out")
    return median_result(*MedianDim.apply(input, d, bool(keepdim)))


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring nan (nan only where a row is all nan)."""
    require_tensors("nanmedian", ("input", input))
    if dim is None:
        if input.numel():
            _not_for_bool(input, "median_cpu")
        return MedianAll.apply(input, True)
    d = input._wrap_dim(dim)
    _check_dim_not_empty(input, d, "nanmedian")
    _not_for_bool(input, "median_out")
    return nanmedian_result(*NanmedianDim.apply(input, d, bool(keepdim)))


def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest element along ``dim`` (k counts from 1)."""
    require_tensors("kthvalue", ("input", input))
    d = input._wrap_dim(dim)
    _check_dim_not_empty(input, d, "kthvalue")
    if input.ndim:  # (torch's kernel is never reached for one number, bool or not)
        _not_for_bool(input, "kthvalue_cpu")
    size = input.shape[d] if input.ndim else 1
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' (position 2) must be int, not "
                        f"{type(k).__name__}")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}: "
                           f"k={k}, but the dim has {size} elements (k counts from 1)")
    return kthvalue_result(*Kthvalue.apply(input, d, bool(keepdim), int(k)))


def mode(input, dim=-1, keepdim=False):
    """(values, indices): the most frequent value along ``dim`` (the smallest of equally
    frequent ones) and an index where it occurs."""
    require_tensors("mode", ("input", input))
    d = input._wrap_dim(dim)
    _check_dim_not_empty(input, d, "mode")
    return mode_result(*Mode.apply(input, d, bool(keepdim)))


# ---------------------------------------------------------------- quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    require_tensors(name, ("input", input))
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input._dtype not in (_dtypes.float32, _dtypes.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype, got "
                           f"{input._dtype}; convert first, e.g. x.float()")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                         f"midpoint or nearest, but got {interpolation}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._dtype is not input._dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor (got "
                               f"{q._dtype} and {input._dtype})")
        if not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = Tensor._wrap(backends.current.full((), q, input._data.dtype, like=input._data))
    # sort the reduced dim last (everything flattened when dim is None)
    if dim is None:
        sorted_ = input.reshape(-1).sort().values
        out_shape = [1] * input.ndim if keepdim else []
    else:
        d = input._wrap_dim(dim)
        sorted_ = input.unsqueeze(-1).transpose(d, -1).squeeze(d).sort().values \
            if input.ndim else input.reshape(1)
        out_shape = list(input.shape)
        if input.ndim:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    n = sorted_.shape[-1]
    rows = sorted_.reshape(-1, n)
    qs = q.reshape(-1)
    # ranks in [0, n - 1]; rows with a nan: rank n - 1 (nan), or nanquantile's non-nan count
    if ignore_nan:
        valid = (~rows.isnan()).sum(-1, keepdim=True)
        ranks = qs.unsqueeze(0) * (valid - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        has_nan = rows.isnan().any(-1, keepdim=True)
        ranks = (qs.unsqueeze(0) * (n - 1)).expand(rows.shape[0], qs.shape[0])
        ranks = ranks.masked_fill(has_nan, n - 1)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    values = rows.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks - below if interpolation == "linear" else ranks * 0 + 0.5
        above = rows.gather(-1, ranks.ceil().long())
        values = values.lerp(above, weights)
    # rows x quantiles -> quantiles first, then the reduced shape
    values = values.t().reshape([qs.shape[0]] + out_shape)
    return values[0] if q.ndim == 0 else values


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantile(s) of ``input`` (along ``dim``, or of everything): q in [0, 1], a
    number or a 1-D tensor; between two elements by ``interpolation``."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring nan."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")

