"""How a tensor addresses its memory: shapes, strides and offsets.

A tensor's elements live in a flat *storage*; ``shape``, ``stride`` and
``storage_offset`` say where element ``[i, j, ...]`` is: at
``offset + i*stride[0] + j*stride[1] + ...`` (counted in elements).  Every
view op is a rule for new (shape, strides, offset) over the same storage;
the rules below are torch's, so ``stride()`` and ``storage_offset()`` agree
with torch's for the same ops, down to the strides of size-1 dims (which
never change which element is read, but are still reported).

numpy arrays carry the same three numbers (in bytes), so a view is built as a
numpy array over the memory of the array that owns it (``strided_array``, which the
backends share: a copy with a chosen layout is one of their primitives).
"""
from ..backends.strided import strided_array  # noqa: F401  (the views below are built with it)


def contiguous_strides(shape):
    """Row-major strides (in elements) of a fresh tensor of ``shape``, as torch computes them."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def view_strides(shape, strides, new_shape):
    """Strides that let ``new_shape`` view memory laid out as (shape, strides), or None.

    This is torch's rule (``computeStride``).  Walking from the last dim, the
    old dims are cut into *chunks* that are contiguous within themselves (each
    dim's stride is the next one's stride times its size).  A view can split
    or merge dims only inside a chunk: the new dims must cover each chunk
    exactly.  ``x.t().view(-1)`` fails because the two dims of ``x.t()`` are
    two separate chunks that -1 would have to merge.
    """
    shape, new_shape = tuple(shape), tuple(new_shape)
    if not shape:
        return (1,) * len(new_shape)
    if 0 in shape:
        if shape == new_shape:
            return tuple(strides)
        return contiguous_strides(new_shape)
    result = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_stride = strides[-1]  # stride of the innermost dim of the current chunk
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        chunk_ends = d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_stride)
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
            result[view_d] = view_numel * chunk_stride
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if d > 0:
            chunk_stride = strides[d - 1]
            tensor_numel = view_numel = 1
    return tuple(result) if view_d == -1 else None


def _element_strides(a):
    return [s // a.itemsize for s in a.strides]


def slice_array(a, dim, index):
    """``a`` sliced along ``dim`` by the slice ``index`` (step > 0), as torch: a view whose
    offset moves by start*stride and whose stride is multiplied by the step."""
    start, stop, step = index.indices(a.shape[dim])  # clamped into [0, size], as torch
    stop = max(stop, start)
    strides = _element_strides(a)
    shape = list(a.shape)
    shape[dim] = len(range(start, stop, step))
    offset = start * strides[dim]
    strides[dim] *= step
    return strided_array(a, tuple(shape), strides, offset)


def select_array(a, dim, index):
    """``a`` with ``dim`` removed at position ``index``: the offset moves by index*stride."""
    strides = _element_strides(a)
    index = index + a.shape[dim] if index < 0 else index
    return strided_array(a, a.shape[:dim] + a.shape[dim + 1:], strides[:dim] + strides[dim + 1:],
                         index * strides[dim])


def is_non_overlapping_and_dense(shape, strides):
    """True when the elements fill a block of memory exactly once, in some order of dims."""
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def clone_strides(shape, strides):
    """The strides of ``clone()`` (torch's preserve_format): the same strides when the input
    is dense, otherwise dense strides that keep the input's order of dims in memory."""
    if is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first; torch's insertion sort
    for i in range(1, ndim):
        j = i
        for k in range(i - 1, -1, -1):
            order = _stride_order(perm[k], perm[j], shape, strides)
            if order > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif order < 0:
                break
    out, step = [0] * ndim, 1
    for d in perm:
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return tuple(out)


def _stride_order(a, b, shape, strides):
    """+1 if dim a must go after dim b in memory, -1 if before, 0 if either (torch's rule)."""
    if strides[a] == 0 or strides[b] == 0:
        return 0  # an expanded dim keeps its place
    if strides[a] != strides[b]:
        return 1 if strides[a] > strides[b] else -1
    return 1 if shape[a] > shape[b] else 0


def has_internal_overlap(a):
    """True when two elements of ``a`` share memory (an expanded dim: stride 0, size > 1)."""
    # (an empty array shares nothing, whatever strides numpy gave it)
    return a.size > 0 and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape))


def unsqueeze_array(a, dim):
    """numpy view of ``a`` with a size-1 dim inserted at ``dim``, with torch's stride for it."""
    strides = [s // a.itemsize for s in a.strides]
    # torch: the new dim steps over the whole dim it is inserted before (1 at the end)
    new = a.shape[dim] * strides[dim] if dim < a.ndim else 1
    return strided_array(a, a.shape[:dim] + (1,) + a.shape[dim:],
                         strides[:dim] + [new] + strides[dim:])
