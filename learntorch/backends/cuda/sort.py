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

**Thread layout, rows up to MAX_ROW (one kernel).**  The sorted axis is moved
last and made contiguous: R rows of n.  One block per row (``blockIdx.x``), T
threads (a power of two, at most P).  The row's values and indices live in
shared memory (P of each); in each step thread t handles pairs i = t, t + T,
... and the block waits (``syncthreads``) before the next step.

**Thread layout, longer rows (one launch per step).**  P values and indices
no longer fit one block's shared memory, and blocks cannot wait for each
other inside a kernel.  So the rows are first copied, padded, into work
arrays in global memory (R, P) -- ``load_padded_rows``, one thread per slot
-- and every step (k, j) is a launch of its own, ``bitonic_step``: one thread
per compare-exchange, R * P/2 of them; the end of a launch is the barrier
between two steps.  Thread t takes row t // (P/2) and pair q = t % (P/2),
whose lower element i is q with a 0 bit inserted at bit j (the partner
i ^ j = i + j has it set), so the P/2 threads of a row cover every pair once.
Both kernels are written as grid-stride loops (thread t also takes t + G,
t + 2G, ... for G threads launched), which lets the simulator run them with
few threads (``covering``).  It is the same network with the same
``comes_after``, so the result is the same, indices included.  It costs
m(m+1)/2 launches (78 for P = 4096), each a pass over global memory; a faster
version would run the steps whose j fits inside one block in shared memory,
but this one reads like the network it is.
"""
import numba
import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda, simulated
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


@cuda.jit
def load_padded_rows(x, n, values, indices, P, total):
    """Fill each slot s of the flat (R, P) work arrays with its value and its index in the row.

    ``x`` is a flat C-contiguous (R, n) array; slots i >= n are padding
    (index i, any value: ``comes_after`` sorts them last by their index).
    """
    for s in range(cuda.grid(1), total, cuda.gridsize(1)):
        row = s // P
        i = s % P
        indices[s] = i
        values[s] = x[row * n + i] if i < n else x[row * n]


@cuda.jit
def bitonic_step(values, indices, n, P, k, j, pairs):
    """Step (k, j) of the network on every row of the flat (R, P) work arrays, in place.

    Pair number t (of R * P/2) is row t // (P/2), lower element i (the pair's
    number q in the row with a 0 bit inserted at bit j) and partner i + j.
    """
    half = P // 2
    for t in range(cuda.grid(1), pairs, cuda.gridsize(1)):
        row = t // half
        q = t % half
        i = (q // j) * (2 * j) + q % j
        a = row * P + i
        b = a + j
        ascending = (i & k) == 0
        if comes_after(values[a], indices[a], values[b], indices[b], n) == ascending:
            values[a], values[b] = values[b], values[a]
            indices[a], indices[b] = indices[b], indices[a]


def covering(kernel, n):
    """``kernel`` launched over ``n`` items: one thread each on a GPU, one block in the simulator.

    The kernels loop over items t, t + G, t + 2G, ... (G: threads launched), so
    any grid covers them all.  On a GPU the grid has a thread per item and the
    loop runs once; the simulator runs every CUDA thread as a Python thread,
    and starting those costs far more than the work, so there 32 threads share
    all the items (a 2 x 1025 sort: 1.3 s instead of 15 s).
    """
    return kernel[1, 32] if simulated() else launch(kernel, n)


def argsort_long_rows(rows, n, P):
    """The (R, n) int64 indices that stably sort the rows of ``rows`` (R, n), in global memory."""
    R = rows.shape[0]
    values = CudaArray.empty((R, P), rows.dtype)
    indices = CudaArray.empty((R, P), np.int64)
    covering(load_padded_rows, R * P)(rows._flat(), n, values._flat(), indices._flat(), P, R * P)
    pairs = R * (P // 2)
    step = covering(bitonic_step, pairs)
    k = 2
    while k <= P:
        j = k // 2
        while j > 0:  # each launch is one step; its end is the barrier before the next
            step(values._flat(), indices._flat(), n, P, k, j, pairs)
            j //= 2
        k *= 2
    return indices[:, :n].copy()  # the padding sorted last: the first n slots are the row


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
    rows, kept, _ = _as_rows(a, (axis,))
    P = padded_length(n)
    if rows.size and n > MAX_ROW:  # too long for one block's shared memory
        out = argsort_long_rows(rows, n, P)
    else:
        out = CudaArray.empty(rows.shape, np.int64)
        if rows.size:
            T = min(P, 32 if simulated() else 256)
            argsort_kernel(rows.dtype, P, T)[rows.shape[0], T](rows._flat(), n, out._flat())
    moved = out.reshape([a.shape[d] for d in kept] + [n])
    order_ = list(range(len(kept)))
    order_.insert(axis, len(kept))
    return moved.transpose(order_).copy()
