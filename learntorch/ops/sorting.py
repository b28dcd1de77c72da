"""Sorting along a dim: sort, argsort, topk.

``sort`` returns the sorted values *and* where each came from::

    values, indices = torch.sort(torch.tensor([3., 1., 2.]))   # [1, 2, 3], [1, 2, 0]

Sorting only moves elements, so its derivative is a move back: the gradient of
``values[j]`` belongs to ``input[indices[j]]`` (a scatter), and an element that
topk did not select gets zero.  ``indices`` has no gradient (it is integers).

Order rules, as in torch: NaN counts as larger than every number (last in an
ascending sort, first in a descending one); -0.0 and 0.0 are equal.  The sort
here is always stable (equal elements keep their input order), which is what
``stable=True`` promises and a valid answer for ``stable=False`` too (torch's own
unstable order among equals depends on the CPU's SIMD sort).  ``topk`` picks among
equal values exactly the indices torch's CPU kernel picks (the backend replays its
selection algorithm), so its gradient reaches the same elements.
"""
import collections

import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import require_tensors, wrap

# torch.return_types.sort / .topk: r.values, r.indices, or `values, indices = r`
sort_result = collections.namedtuple("sort", ["values", "indices"])
topk_result = collections.namedtuple("topk", ["values", "indices"])


class _SelectAlongDim(Function):
    """Values picked along ``dim`` by an index array (``forward`` computes ``order``)."""

    @staticmethod
    def select(ctx, x, dim, order):
        a = x._data.reshape(1) if x.ndim == 0 else x._data  # a number: a row of one
        values = backends.current.gather(a, dim, order)
        if x.ndim == 0:
            values, order = values.reshape(()), order.reshape(())
        indices = wrap(order)
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
        out = Tensor._wrap(backends.current.full(ctx.shape, 0, grad._data.dtype,
                                                 like=grad._data))
        # each value's gradient goes back to the position it was taken from
        return (out.scatter_add(ctx.dim, indices, grad),) + no_grads


class Sort(_SelectAlongDim):
    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, x, dim, descending, stable):
        a = x._data.reshape(1) if x.ndim == 0 else x._data
        order = backends.current.argsort(a, dim, descending, stable)
        return _SelectAlongDim.select(ctx, x, dim, order)


class Topk(_SelectAlongDim):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, x, dim, k, largest, sorted):
        if x.ndim == 0:  # a number is its own top (even for k = 0: torch returns it anyway)
            order = backends.current.full((1,), 0, np.int64, like=x._data)
        else:  # the same indices as torch, equal values included (see the backend's topk)
            order = backends.current.topk(x._data, k, dim, largest, sorted)
        return _SelectAlongDim.select(ctx, x, dim, order)


def _dim(input, dim, name):
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return input._wrap_dims(dim)[0]


def sort(input, dim=-1, descending=False, *, stable=False):
    """(values, indices) sorted along ``dim``: ascending, or descending with ``descending=True``."""
    require_tensors("sort", ("input", input))
    return sort_result(*Sort.apply(input, _dim(input, dim, "sort"), bool(descending),
                                   bool(stable)))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (``sort(...).indices``)."""
    require_tensors("argsort", ("input", input))
    d = _dim(input, dim, "argsort")
    a = input._data.reshape(1) if input.ndim == 0 else input._data
    return wrap(backends.current.argsort(a, d, bool(descending), bool(stable))
                .reshape(input.shape))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or, with ``largest=False``, smallest) elements along ``dim``.

    Returns (values, indices), largest first (smallest first when ``largest=False``);
    ``sorted=False`` allows any order: torch's.  Among equal elements the indices are
    the ones torch's CPU kernel picks.
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
    return topk_result(*Topk.apply(input, d, int(k), bool(largest), bool(sorted)))
