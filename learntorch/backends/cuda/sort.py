"""Sorting on the GPU: ``np.argsort`` along an axis, a bitonic sort per row.

A *bitonic sort* is a sorting network: a fixed schedule of compare-and-swap
steps that does not depend on the data, so every step can run on all pairs at
once.  For P = 2**m elements it runs m(m+1)/2 steps; in step (k, j) element i
is compared with element ``i ^ j`` and the pair is put in ascending order when
bit k of i is 0, descending when it is 1.  Each k-stage merges bitonic runs of
length k into sorted runs of length k; the last stage (k = P) sorts the row.

**Stable, with torch's order.**  The network itself is not stable, so what it
sorts is the pair (value, original index): equal values are ordered by index,
which is exactly what a stable sort returns.  NaN is larger than every number
(last), -0.0 equals 0.0.  A row of n is padded to the next power of two P;
the padding elements have indices >= n and sort after everything, NaN too,
so the first n slots are the real row.

**Thread layout.**  The sorted axis is moved last and made contiguous: R rows
of n.  One block per row (``blockIdx.x``), T threads (a power of two, at most
P).  The row's values and indices live in shared memory (P of each); in each
step thread t handles pairs i = t, t + T, ... and the block waits
(``syncthreads``) before the next step.  Rows longer than MAX_ROW do not fit
one block's shared memory this way and raise NotImplementedError (a merge
sort across blocks would be next).
"""
import numba
import numpy as np

from .array import CudaArray
from .driver import numba_cuda, simulated
from .reduction import _as_rows

cuda = numba_cuda()

MAX_ROW = 1024  # the longest row one block sorts in shared memory


@cuda.jit(device=True)
def comes_after(v, i, w, j, n):
    """True when (value v, index i) sorts after (w, j): padding last, then NaN, then by value."""
    if i >= n or j >= n:  # padding (index >= n) is larger than anything, NaN included
        return i > j
    v_nan = v != v
    w_nan = w != w
    if v_nan or w_nan:
        return i > j if v_nan and w_nan else v_nan
    if v == w:  # equal values keep their input order: that makes the sort stable
        return i > j
    return v > w


_kernels = {}


def argsort_kernel(dtype, P, T):
    """The bitonic argsort of rows of ``dtype``, padded to ``P``, with ``T`` threads per block."""
    key = (np.dtype(dtype), P, T)
    if key in _kernels:
        return _kernels[key]
    value_type = numba.from_dtype(np.dtype(dtype))

    @cuda.jit
    def argsort_rows(x, n, out):
        """out[row, :] = the indices that stably sort x[row, :]; one block per row.

        ``x`` is a flat C-contiguous (R, n) array, ``out`` a flat (R, n) int64 array;
        shared memory holds the row's P values and P indices.
        """
        row = cuda.blockIdx.x
        t = cuda.threadIdx.x
        values = cuda.shared.array(P, value_type)
        indices = cuda.shared.array(P, numba.int64)
        start = row * n
        for i in range(t, P, T):
            indices[i] = i
            values[i] = x[start + i] if i < n else x[start]  # padding: any value will do
        cuda.syncthreads()
        k = 2
        while k <= P:
            j = k // 2
            while j > 0:
                for i in range(t, P, T):
                    partner = i ^ j
                    if partner > i:  # each pair is handled once, by its lower element
                        ascending = (i & k) == 0
                        if comes_after(values[i], indices[i], values[partner], indices[partner],
                                       n) == ascending:
                            values[i], values[partner] = values[partner], values[i]
                            indices[i], indices[partner] = indices[partner], indices[i]
                cuda.syncthreads()
                j //= 2
            k *= 2
        for i in range(t, n, T):
            out[start + i] = indices[i]

    _kernels[key] = argsort_rows
    return argsort_rows


def padded_length(n):
    """The power of two a row of ``n`` is padded to (at least 1)."""
    P = 1
    while P < n:
        P *= 2
    return P


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    """``np.argsort(a, axis)``, always stable (numpy's ``kind='stable'``), NaN last."""
    if order is not None:
        raise NotImplementedError("np.argsort(order=...) (structured arrays) has no CUDA kernel")
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    axis = int(axis)
    if not -a.ndim <= axis < a.ndim:
        raise np.exceptions.AxisError(axis, a.ndim)
    axis %= a.ndim
    n = a.shape[axis]
    if n > MAX_ROW:
        raise NotImplementedError(
            f"sorting on cuda works on rows of at most {MAX_ROW} elements (one block sorts a "
            f"row in shared memory), but dim {axis} of the array of shape {a.shape} has {n}; "
            "sort it on the cpu (x.cpu().sort(...)) or sort a reshaped tensor")
    rows, kept, _ = _as_rows(a, (axis,))
    out = CudaArray.empty(rows.shape, np.int64)
    if rows.size:
        P = padded_length(n)
        T = min(P, 32 if simulated() else 256)
        argsort_kernel(rows.dtype, P, T)[rows.shape[0], T](rows._flat(), n, out._flat())
    moved = out.reshape([a.shape[d] for d in kept] + [n])
    order_ = list(range(len(kept)))
    order_.insert(axis, len(kept))
    return moved.transpose(order_).copy()
