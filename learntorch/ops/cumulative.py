"""Running totals along one dim: cumsum, cumprod, cummax, cummin.

Element i of the result combines elements 0..i of the input, so each input element
feeds every later output: gradients run the other way, as reversed running totals.

    cumsum   d/dx_i = sum_{j >= i} g_j
    cumprod  d/dx_i = sum_{j >= i} g_j * out_j / x_i      (and, with zeros, the product
                                                          of the others, written out)
    cummax   the gradient of out_j goes to the element it came from (the indices)
"""
import collections

import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import require_tensors, wrap


class Cumsum(Function):
    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        ctx.dim = dim
        a = _in_result_dtype(x, dtype)
        return wrap(backends.current.cumsum(a, dim) if a.ndim else backends.current.copy(a))

    @staticmethod
    def backward(ctx, grad):
        # each input feeds every later output: the gradient is a reversed cumulative sum
        if grad.ndim == 0:
            return grad, None, None
        return grad.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim), None, None


class Cumprod(Function):
    node_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, x, dim, dtype):
        a = _in_result_dtype(x, dtype)
        out = wrap(backends.current.cumprod(a, dim) if a.ndim else backends.current.copy(a))
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if grad.ndim == 0:
            return grad, None, None
        d = ctx.dim
        if x.shape[d] == 1:  # one factor: torch passes grad on (no graph to go on)
            return grad, None, None
        if not (x == 0).any():  # sum_{j >= i} g_j out_j, divided by x_i
            return (grad * out).flip(d).cumsum(d).flip(d) / x, None, None
        return _cumprod_grad_with_zeros(x, grad, d), None, None


def _cumprod_grad_with_zeros(x, grad, dim):
    """d/dx_i sum_j g_j out_j with out_j = x_0 ... x_j, without dividing by a zero x_i:
    row i of an n x n matrix holds x with its i-th entry replaced by 1, so its running
    product at j (for j >= i) is the product of the others up to j.  n^2 work, used only
    when a zero forbids dividing; built from tensor ops, so it differentiates again."""
    from ..factories import eye, ones
    moved, g = x.movedim(dim, -1), grad.movedim(dim, -1)
    n = moved.shape[-1]
    rows = moved.unsqueeze(-2).expand(*moved.shape[:-1], n, n)
    diagonal = eye(n, dtype=_dtypes.bool_, device=x.device)
    others = rows.masked_fill(diagonal, 1).cumprod(-1)   # [..., i, j]: prod_{k<=j, k!=i}
    upper = ones(n, n, dtype=_dtypes.bool_, device=x.device).triu()  # j >= i
    grad_x = (others * g.unsqueeze(-2)).masked_fill(~upper, 0).sum(-1)
    return grad_x.movedim(-1, dim)


class _RunningExtreme(Function):
    """cummax / cummin: (values, indices); the gradient of each value goes to the index
    it came from (several values may come from one element: they add up)."""

    method = None

    @classmethod
    def forward(cls, ctx, x, dim):
        if x.ndim == 0:
            values, indices = backends.current.copy(x._data), backends.current.full(
                (), 0, np.int64, like=x._data)
        else:
            values, indices = getattr(backends.current, cls.method)(x._data, dim)
        values, indices = wrap(values), wrap(indices)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.dim, ctx.shape = dim, x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        if not ctx.shape:
            return grad, None
        canvas = Tensor._wrap(backends.current.full(ctx.shape, 0, grad._data.dtype,
                                                    like=grad._data))
        return canvas.scatter_add(ctx.dim, indices, grad), None


class Cummax(_RunningExtreme):
    node_name, method = "CummaxBackward0", "cummax"


class Cummin(_RunningExtreme):
    node_name, method = "CumminBackward0", "cummin"


def _in_result_dtype(x, dtype):
    """x's array in the result dtype: ``dtype`` if given, int64 for bool/integers (torch
    accumulates them in int64), else x's own."""
    a = x._data
    if dtype is not None:
        return backends.current.cast(a, dtype.np)
    if not x._dtype.is_floating_point:
        return backends.current.cast(a, np.int64)
    return a


def _prepare(name, input, dim, dtype):
    require_tensors(name, ("input", input))
    d = input._wrap_dim(dim)
    return d, _dtypes.to_dtype(dtype) if dtype is not None else None


def cumsum(input, dim, *, dtype=None):
    """Running sums along ``dim``: out[i] = x[0] + ... + x[i]."""
    return Cumsum.apply(input, *_prepare("cumsum", input, dim, dtype))


def cumprod(input, dim, *, dtype=None):
    """Running products along ``dim``: out[i] = x[0] * ... * x[i]."""
    return Cumprod.apply(input, *_prepare("cumprod", input, dim, dtype))


cummax_result = collections.namedtuple("cummax", ["values", "indices"])
cummin_result = collections.namedtuple("cummin", ["values", "indices"])


def _running_extreme(cls, result, name, input, dim):
    require_tensors(name, ("input", input))
    # (torch does not check dim for an empty tensor: there is nothing to run along)
    d = input._wrap_dim(dim) if input.numel() else 0
    return result(*cls.apply(input, d))


def cummax(input, dim):
    """(values, indices): the largest element so far along ``dim`` and the last index where
    it was reached (a nan, once met, is the maximum from then on)."""
    return _running_extreme(Cummax, cummax_result, "cummax", input, dim)


def cummin(input, dim):
    """(values, indices): the smallest element so far along ``dim``, and where."""
    return _running_extreme(Cummin, cummin_result, "cummin", input, dim)
