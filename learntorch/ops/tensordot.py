"""``tensordot(a, b, dims)``: sum the products of ``a`` and ``b`` over pairs of dimensions.

    tensordot(a, b, dims=1)               a matrix product: a's last dim with b's first
    tensordot(a, b, dims=2)               a's last two dims with b's first two (the default)
    tensordot(a, b, dims=([1, 0], [0, 2]))  a's dim 1 with b's dim 0, a's dim 0 with b's dim 2

It is a matrix product in disguise, and written as one (as torch does): move a's contracted
dims to the end and b's to the front, merge each side's contracted dims into one and its
free dims into one, multiply the two matrices with ``mm``, and unmerge the free dims.  So it
records no node of its own: its graph is permute, reshape, mm, reshape, and under autocast
it runs in 16 bits because ``mm`` does.
"""
import math

from .._tensor import Tensor
from ._helpers import require_tensors
from .linalg import mm


def tensordot(a, b, dims=2, out=None):
    require_tensors("tensordot", ("a", a), ("b", b))
    if out is not None:
        raise TypeError("tensordot(): out= is not supported: assign the result instead")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"both inputs should have same dtype (got {a.dtype} and {b.dtype}): "
                           "convert one with .to(dtype)")
    dims_a, dims_b = _dim_lists(dims, a.ndim, b.ndim)
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    shape_a, shape_b = [a.shape[d] for d in free_a], [b.shape[d] for d in free_b]
    size = math.prod(a.shape[d] for d in dims_a)   # the length of each summed dot product
    left = a.permute(*free_a, *dims_a).reshape(math.prod(shape_a), size)
    right = b.permute(*dims_b, *free_b).reshape(size, math.prod(shape_b))
    return mm(left, right).reshape(*shape_a, *shape_b)


def _dim_lists(dims, ndim_a, ndim_b):
    """``dims`` as two lists of dims (non-negative), checked as torch checks them."""
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, bool) or not isinstance(dims, (int, list, tuple)):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(ndim_a, ndim_b):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(ndim_a - dims, ndim_a)), list(range(dims))
    if len(dims) != 2:
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    first, second = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(first) != len(second):
        raise RuntimeError("both dimension lists should have same length (got "
                           f"{first} and {second}): pair each dim of a with one dim of b")
    return _normalized(first, ndim_a), _normalized(second, ndim_b)


def _normalized(dims, ndim):
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
        d %= ndim
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out
