"""A copy whose source is the destination's own memory, rearranged, in torch's loop order.

``x.copy_(x[:, 0])`` (broadcast over a square ``x``) reads elements of ``x`` that the same
copy writes.  torch does not refuse it (it cannot cheaply tell whether a non-dense source
overlaps; dense overlaps it refuses, see ``ops/_inplace.check_no_partial_overlap``) and
its result is whatever its CPU loop leaves: elements are copied one after another, so a
later element may read a value an earlier one wrote.  numpy's ``copyto`` reads the whole
source first, as if it were a clone.  To give torch's values, this replays torch's loop:

* the order: TensorIterator sorts the dims by the destination's strides (then the
  source's; broadcast dims skipped), the smallest stride fastest, and merges dims that
  step through memory as one (``reorder_dimensions``, ``coalesce_dimensions``);
* the inner loop: with the same dtype and a contiguous row (source contiguous too, or one
  broadcast element) torch's vectorized loop reads ``VECTOR_BYTES`` bytes of source
  before it writes them (measured: ``x[:, 1:n + 1].copy_(x[:, :n])`` shifts 16 floats at a
  time, then cascades one float through the rest of the row), and a broadcast element
  once per row; the rest of the row, and every other loop, goes element by element.

``VECTOR_BYTES`` is 64: torch's AVX512 build, what it runs on x86 CPUs that have AVX512
(on AVX2-only CPUs torch reads 32 bytes at a time, so rows of 8 floats or more with
such an overlap differ there between torch and torch).  Copies over 32768 elements torch
splits between threads, whose interleaving decides; this replays them on one thread.
"""
import numpy as np

VECTOR_BYTES = 64


def reads_what_it_writes(dst, src):
    """Could copying ``src`` into ``dst`` element by element read a value it wrote?"""
    if dst.__class__ is not np.ndarray or src.__class__ is not np.ndarray or src is dst:
        return False
    if src.base is None and dst.base is None:
        return False  # two arrays that own their memory (an in-place op's result, most often)
    return (dst.size > 0 and np.may_share_memory(dst, src)
            and not (dst.__array_interface__["data"][0] == src.__array_interface__["data"][0]
                     and dst.shape == src.shape and dst.strides == src.strides))


def copy_in_loop_order(dst, src):
    """dst[...] = src (broadcast, cast to dst's dtype), element by element as torch's loop."""
    src = np.broadcast_to(src, dst.shape)
    shape, strides = _loop_dims(dst.shape, [dst.strides, src.strides])
    dsz, ssz = dst.itemsize, src.itemsize
    odd = any(s % dsz or s < 0 for s in strides[0]) or any(s % ssz or s < 0 for s in strides[1])
    if not dst.ndim or odd:
        np.copyto(dst, src, casting="unsafe")  # (one element; or no torch layout)
        return
    d_mem, s_mem = _flat_view(dst), _flat_view(src)
    # each element's place in those views, in loop order (the first dim fastest)
    grids = np.indices(shape[::-1]).reshape(len(shape), -1)[::-1]
    d_at = sum(g * (st // dsz) for g, st in zip(grids, strides[0]))
    s_at = sum(g * (st // ssz) for g, st in zip(grids, strides[1]))
    row, inner = shape[0], (strides[0][0], strides[1][0])
    vector = dst.dtype == src.dtype and inner[0] == dsz and inner[1] in (ssz, 0)
    chunk = VECTOR_BYTES // dsz
    for start in range(0, d_at.size, row):
        i = 0
        if vector:
            scalar = s_mem[s_at[start]] if inner[1] == 0 else None  # read once per row
            while i + chunk <= row:
                d, s = d_at[start + i:start + i + chunk], s_at[start + i:start + i + chunk]
                d_mem[d] = scalar if scalar is not None else s_mem[s]  # (read, then write)
                i += chunk
        for k in range(start + i, start + row):
            if vector or dst.dtype == src.dtype:
                d_mem[d_at[k]] = s_mem[s_at[k]]
            else:  # C's conversion, as np.copyto's (a scalar assignment refuses nan -> int)
                d, s = d_at[k], s_at[k]
                np.copyto(d_mem[d:d + 1], s_mem[s:s + 1], casting="unsafe")


def _loop_dims(shape, strides):
    """TensorIterator's dims for these operands (output first): (shape, strides per operand),
    fastest dim first, sorted as ``reorder_dimensions`` does and merged as
    ``coalesce_dimensions`` does."""
    ndim = len(shape)
    strides = [list(st) for st in strides]
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    for i in range(1, ndim):  # torch's insertion sort, which leaves ambiguous pairs alone
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    shape = [shape[p] for p in perm]
    strides = [[st[p] for p in perm] for st in strides]
    if ndim <= 1:
        return shape, strides
    prev = 0
    for d in range(1, ndim):
        if shape[prev] == 1 or shape[d] == 1 or all(
                shape[prev] * st[prev] == st[d] for st in strides):
            if shape[prev] == 1:
                for st in strides:
                    st[prev] = st[d]
            shape[prev] *= shape[d]
        else:
            prev += 1
            if prev != d:
                for st in strides:
                    st[prev] = st[d]
                shape[prev] = shape[d]
    return shape[:prev + 1], [st[:prev + 1] for st in strides]


def _flat_view(a):
    """A 1-d view (a's dtype) of the memory from a's first element on, as far as a reaches."""
    count = sum(s * (n - 1) for s, n in zip(a.strides, a.shape)) // a.itemsize + 1
    return np.lib.stride_tricks.as_strided(a, shape=(count,), strides=(a.itemsize,))
