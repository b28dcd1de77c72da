"""Cumulative sums on the GPU: ``np.cumsum`` along any axis, one row per block.

A scan (prefix sum) looks sequential -- ``out[j] = out[j - 1] + x[j]`` -- but
it parallelizes: after round r of the *Hillis-Steele* scan, slot t holds the
sum of the 2**r elements ending at t::

    x            3 1 4 1 5 9 2 6
    offset 1     3 4 5 5 6 14 11 8      slot t += slot t - 1
    offset 2     3 4 8 9 11 19 17 22    slot t += slot t - 2
    offset 4     3 4 8 9 14 23 25 31    slot t += slot t - 4: the inclusive scan

**Thread layout.**  The scanned axis is moved last and the array made
contiguous, so the problem is R *rows* of n contiguous elements.  One block
per row (``blockIdx.x``), ``T`` threads (a power of two).  The row is walked
in *tiles* of T elements: thread t loads element ``base + t`` of the tile
into shared memory (0 past the row's end), the block scans the tile in
log2(T) rounds -- each round every thread reads its two slots, waits
(``syncthreads``), then writes, so no thread reads a slot that another has
already overwritten in the same round -- and adds the *carry*, the sum of
all earlier tiles.  The tile's last slot is then the new carry.

The scan is inclusive (``out[j]`` includes ``x[j]``), as numpy's is.  Sums
are added in a tree order, not left to right, so float results can differ
from the cpu's in the last bits.  ``mask.py`` uses the same kernel to number
the True elements of a mask.
"""
import numba
import numpy as np

from .array import CudaArray
from .driver import numba_cuda
from .reduction import _as_rows, threads

cuda = numba_cuda()

_kernels = {}


def scan_kernel(dtype, T):
    """The inclusive-sum kernel for rows of ``dtype`` and blocks of ``T`` threads."""
    key = (np.dtype(dtype), T)
    if key in _kernels:
        return _kernels[key]
    acc_type = numba.from_dtype(np.dtype(dtype))
    # the zero is converted inside the kernel: a captured numpy float16 constant compiles
    # to IR that NVVM rejects
    cast = np.dtype(dtype).type

    @cuda.jit
    def cumsum_rows(x, n, out):
        """out[row, j] = x[row, 0] + ... + x[row, j]; one block per row, T threads per block.

        ``x`` and ``out`` are flat C-contiguous (R, n) arrays; shared memory holds one
        tile of T partial sums.
        """
        row = cuda.blockIdx.x
        t = cuda.threadIdx.x
        tile = cuda.shared.array(T, acc_type)
        start = row * n
        carry = cast(0)
        for base in range(0, n, T):
            j = base + t
            tile[t] = x[start + j] if j < n else cast(0)
            cuda.syncthreads()
            offset = 1
            while offset < T:
                v = tile[t]
                if t >= offset:
                    v += tile[t - offset]
                cuda.syncthreads()  # everyone has read this round's slots ...
                tile[t] = v
                cuda.syncthreads()  # ... and written them before the next round reads
                offset *= 2
            if j < n:
                out[start + j] = carry + tile[t]
            carry += tile[T - 1]
            cuda.syncthreads()  # all have read the tile total before the next tile is loaded

    _kernels[key] = cumsum_rows
    return cumsum_rows


def cumsum(a, axis=None, dtype=None):
    """``np.cumsum(a, axis, dtype)``: inclusive sums along ``axis`` (the flattened array if None)."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        a = a.reshape(1)
    axis = int(axis)
    if not -a.ndim <= axis < a.ndim:
        raise np.exceptions.AxisError(axis, a.ndim)
    axis %= a.ndim
    # numpy's accumulation dtype: bools and small ints add up as int64
    out_dtype = np.cumsum(np.zeros(1, a.dtype), dtype=dtype).dtype
    rows, kept, n = _as_rows(a, (axis,))
    if rows.dtype != out_dtype:
        rows = rows.astype(out_dtype)
    out = CudaArray.empty(rows.shape, out_dtype)
    if rows.size:
        T = threads(n)
        scan_kernel(out_dtype, T)[rows.shape[0], T](rows._flat(), n, out._flat())
    # the rows are a.transpose(kept + [axis]): put the axis back where it was
    moved = out.reshape([a.shape[d] for d in kept] + [n])
    order = list(range(len(kept)))
    order.insert(axis, len(kept))
    return moved.transpose(order).copy()
