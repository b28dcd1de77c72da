"""Sorting along a dim: sort, argsort, topk.

``sort`` returns the sorted values *and* where each came from::

    values, indices = torch.sort(torch.tensor([3., 1., 2.]))   # [1, 2, 3], [1, 2, 0]

Sorting only moves elements, so its derivative is a move back: the gradient of
``values[j]`` belongs to ``input[indices[j]]`` (a scatter), and an element that
topk did not select gets zero.  ``indices`` has no gradient (it is integers).

Order rules, as in torch: NaN counts as larger than every number (last in an
ascending sort, first in a descending one); -0.0 and 0.0 are equal.  The sort
here is always stable (equal elements keep their input order), which is what
``stable=True`` promises and a valid answer for ``stable=False`` too.
"""
import collections

import numpy as np

from ..autograd.function import Function
from ._helpers import wrap
from .linalg import require_tensors

# torch.return_types.sort / .topk: r.values, r.indices, or `values, indices = r`
sort_result = collections.namedtuple("sort", ["values", "indices"])
topk_result = collections.namedtuple("topk", ["values", "indices"])


def stable_order(a, axis, descending):
    """Indices that sort ``a`` along ``axis``, keeping equal elements in input order.

    numpy's stable sort already puts NaN last.  For a descending sort that is still
    stable, sort the *reversed* array ascending and reverse the answer: equal
    elements then come out in their original order (negating would not work for
    bools, unsigned ints or NaN).
    """
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    reversed_order = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(reversed_order, axis)


class _SelectAlongDim(Function):
    """Values picked along ``dim`` by an index array (``forward`` computes ``order``)."""

    @staticmethod
    def select(ctx, x, dim, order):
        a = x._data.reshape(1) if x.ndim == 0 else x._data  # a number: a row of one
        values = np.take_along_axis(a, order, axis=dim).reshape(order.shape)
        if x.ndim == 0:
            values, order = values.reshape(()), order.reshape(())
        indices = wrap(order.astype(np.int64, copy=False))
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.dim, ctx.shape = dim, x.shape
        return wrap(values), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        no_grads = (None,) * (len(ctx.needs_input_grad) - 1)  # for dim, descending, ...
        if not ctx.shape:  # a number sorts to itself
            return (grad.clone(),) + no_grads
        from ..factories import zeros
        out = zeros(ctx.shape, dtype=grad.dtype, device=grad.device)
        # each value's gradient goes back to the position it was taken from
        return (out.scatter_add(ctx.dim, indices, grad),) + no_grads


class Sort(_SelectAlongDim):
    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, x, dim, descending):
        a = x._data.reshape(1) if x.ndim == 0 else x._data
        return _SelectAlongDim.select(ctx, x, dim, stable_order(a, dim, descending))


class Topk(_SelectAlongDim):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, x, dim, k, largest):
        a = x._data.reshape(1) if x.ndim == 0 else x._data
        # a full sort is the simplest correct top-k; np.argpartition would be faster for
        # k much smaller than the dim, but its order among the k needs a sort anyway
        order = np.take(stable_order(a, dim, largest), np.arange(k), axis=dim)
        return _SelectAlongDim.select(ctx, x, dim, order)


def _dim(input, dim, name):
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return input._wrap_dims(dim)[0]


def sort(input, dim=-1, descending=False, *, stable=False):
    """(values, indices) sorted along ``dim``: ascending, or descending with ``descending=True``."""
    require_tensors("sort", ("input", input))
    return sort_result(*Sort.apply(input, _dim(input, dim, "sort"), bool(descending)))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (``sort(...).indices``)."""
    require_tensors("argsort", ("input", input))
    d = _dim(input, dim, "argsort")
    a = input._data.reshape(1) if input.ndim == 0 else input._data
    return wrap(stable_order(a, d, bool(descending)).astype(np.int64).reshape(input.shape))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or, with ``largest=False``, smallest) elements along ``dim``.

    Returns (values, indices), largest first (smallest first when ``largest=False``);
    ``sorted=False`` allows any order, and this one is sorted too.  Among equal
    elements torch may pick any; this picks the first ones.
    """
    require_tensors("topk", ("input", input))
    if hasattr(k, "ndim") and k.ndim == 0 and not k.is_floating_point():
        k = k.item()  # torch accepts a 0-d integer tensor as k
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"topk(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    d = _dim(input, dim, "topk")
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"selected index k out of range: k={k} but dim {d} of the input "
                           f"(shape {list(input.shape)}) has {size} elements; k must be in "
                           f"[0, {size}]")
    if input.dtype.name == "bool":
        raise RuntimeError("topk does not support bool dtypes on CPU: convert first, e.g. "
                           "x.long() or x.float()")
    return topk_result(*Topk.apply(input, d, int(k), bool(largest)))
