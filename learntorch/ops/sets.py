"""The distinct values of a tensor, and where values would go in a sorted sequence:
unique, unique_consecutive, searchsorted, bucketize.

``unique`` sorts (NaNs come last, each one distinct, as in torch); the inverse indices
say, for every input element, which distinct value it is, so ``values[inverse]``
rebuilds the input.  None of these is differentiable: torch records ``unique`` with a
node whose backward is not implemented, and so does this one.
"""
import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import require_tensors, wrap


class Unique(Function):
    """The distinct values (sorted), the inverse indices and the counts, in one pass."""

    node_name = "Unique2Backward0"

    @staticmethod
    def forward(ctx, x, dim, consecutive):
        b = backends.current
        if consecutive:
            values, inverse, counts = b.unique_consecutive(x._data, dim)
        elif dim is None:
            values, inverse, counts = b.unique(x._data, True, True)
        else:
            values, inverse, counts = b.unique_dim(x._data, dim, True, True)
        inverse, counts = wrap(inverse), wrap(counts)
        ctx.mark_non_differentiable(inverse, counts)
        return wrap(values), inverse, counts

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("the derivative for 'unique' is not implemented (torch has none "
                           "either): the distinct values do not move smoothly with the input. "
                           "Detach the input first, or index it with the inverse indices.")


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (or distinct slices along ``dim``), sorted; with the
    inverse indices (``values[inverse]`` is the input) and the counts when asked."""
    require_tensors("unique", ("input", input))
    d = None if dim is None else input._wrap_dim(dim)
    values, inverse, counts = Unique.apply(input, d, False)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive elements (or slices along ``dim``) kept once."""
    require_tensors("unique_consecutive", ("input", input))
    d = None if dim is None else input._wrap_dim(dim)
    values, inverse, counts = Unique.apply(input, d, True)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each element of ``input``, the index where it would be inserted into the sorted
    last dim of ``sorted_sequence`` to keep it sorted (before equal elements, or after them
    with ``right=True`` / ``side='right'``)."""
    require_tensors("searchsorted", ("sorted_sequence", sorted_sequence))
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    values = input._data if not scalar else backends.current.full(
        (), input, sorted_sequence._data.dtype, like=sorted_sequence._data)
    if sorted_sequence.ndim > 1 and (scalar or values.shape[:-1] !=
                                     sorted_sequence.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor "
                           f"{list(np.shape(values))}")
    dtype = _dtypes.promote_types(sorted_sequence._dtype,
                                  input._dtype if not scalar else sorted_sequence._dtype)
    b = backends.current
    out = b.searchsorted(b.cast(sorted_sequence._data, dtype.np), b.cast(values, dtype.np),
                         bool(right))
    return wrap(b.cast(out, np.int32) if out_int32 else out)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """For each element of ``input``, the index of the bucket of the sorted 1-D
    ``boundaries`` it falls in: boundaries[i-1] < x <= boundaries[i] (or <= x < with
    ``right=True``)."""
    require_tensors("bucketize", ("boundaries", boundaries))
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
