"""Reductions on the GPU: sum, prod, max, min, argmax, argmin along any dims.

The reduced dims are moved last and the array is made contiguous (one copy
kernel when it is not already so), so that every reduction becomes the same
problem: R *rows* of n contiguous elements, one result per row.

**Thread layout.**  One block per row (``blockIdx.x``), ``T`` threads per
block (a power of two, at most 256; fewer for short rows).  Phase 1: thread t folds elements t, t+T, t+2T, ...
of its row into a private running value -- any row length works.  Phase 2, a
*shared-memory tree*: the T running values go to a shared array, and in
log2(T) rounds thread t (t < step) combines slot t with slot t + step, with
``syncthreads()`` between rounds so that nobody reads a slot before it is
written.  Thread 0 writes the row's result.

Short rows (n <= SERIAL_UP_TO) take the other layout: one *thread* per row,
folding its row alone (``reduce_rows_serial``).  A block per row would leave
most of its threads idle, and a thousand rows of 3 are better served by a
thousand threads than by a thousand blocks.

A thread with no element (t >= n) needs a value that changes nothing:
0 for sum, 1 for prod, and for max/min simply the row's first element
(max(a, a) = a), which works for every dtype.  Arg-reductions carry
(value, index) pairs; ties go to the smaller index and NaN counts as the
largest (and smallest) value, as in numpy and torch.
"""
import numba
import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda, simulated

cuda = numba_cuda()


def _sum(a, b):
    return a + b


def _prod(a, b):
    return a * b


def _max(a, b):
    if a != a or b != b:  # NaN wins
        return a if a != a else b
    return a if a >= b else b


def _min(a, b):
    if a != a or b != b:
        return a if a != a else b
    return a if a <= b else b


COMBINE = {"sum": _sum, "prod": _prod, "max": _max, "min": _min}
IDENTITY = {"sum": 0, "prod": 1}


def _better_max(v, i, w, j):
    """True when (w, j) should replace (v, i) in an argmax."""
    if v != v:
        return w != w and j < i
    return w != w or w > v or (w == v and j < i)


def _better_min(v, i, w, j):
    if v != v:
        return w != w and j < i
    return w != w or w < v or (w == v and j < i)


def threads(n):
    """Threads per block for rows of ``n``: a power of two, no more than the row needs.

    Short rows (softmax over a small dim, a reduction over dim 0 of a wide array)
    would leave most of a large block idle.
    """
    most = 32 if simulated() else 256
    t = 1
    while t < n and t < most:
        t *= 2
    return t


SERIAL_UP_TO = 16  # rows at most this long: one thread per row, no tree

_kernels = {}


def _serial_kernel(op, acc_dtype):
    """One thread per row: thread ``r`` folds row r from left to right (no shared memory)."""
    key = ("serial", op, acc_dtype)
    if key in _kernels:
        return _kernels[key]
    combine = cuda.jit(device=True)(COMBINE[op])

    @cuda.jit
    def reduce_rows_serial(x, rows, n, out):
        r = cuda.grid(1)
        if r < rows:
            acc = x[r * n]
            for j in range(1, n):
                acc = combine(acc, x[r * n + j])
            out[r] = acc

    _kernels[key] = reduce_rows_serial
    return reduce_rows_serial


def _serial_arg_kernel(op, dtype):
    key = ("serial_arg", op, dtype)
    if key in _kernels:
        return _kernels[key]
    better = cuda.jit(device=True)(_better_max if op == "max" else _better_min)

    @cuda.jit
    def arg_rows_serial(x, rows, n, out):
        r = cuda.grid(1)
        if r < rows:
            v, i = x[r * n], 0
            for j in range(1, n):
                if better(v, i, x[r * n + j], j):
                    v, i = x[r * n + j], j
            out[r] = i

    _kernels[key] = arg_rows_serial
    return arg_rows_serial


def _row_kernel(op, acc_dtype, T):
    key = (op, acc_dtype, T)
    if key in _kernels:
        return _kernels[key]
    combine = cuda.jit(device=True)(COMBINE[op])
    acc_type = numba.from_dtype(acc_dtype)
    uses_identity = op in IDENTITY
    identity = IDENTITY.get(op, 0)
    # the identity is converted inside the kernel: a numpy float16 *constant* captured from
    # here compiles to IR that NVVM rejects, while the conversion compiles for every dtype
    cast = acc_dtype.type

    @cuda.jit
    def reduce_rows(x, n, out):
        row = cuda.blockIdx.x
        t = cuda.threadIdx.x
        partial = cuda.shared.array(T, acc_type)
        start = row * n
        if uses_identity:
            acc = cast(identity)
        else:
            acc = x[start + t] if t < n else x[start]  # filler: the row's first element
        first = t if uses_identity else t + T
        for j in range(first, n, T):
            acc = combine(acc, x[start + j])
        partial[t] = acc
        cuda.syncthreads()
        step = T // 2
        while step > 0:
            if t < step:
                partial[t] = combine(partial[t], partial[t + step])
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[row] = partial[0]

    _kernels[key] = reduce_rows
    return reduce_rows


def _arg_kernel(op, dtype, T):
    key = ("arg" + op, dtype, T)
    if key in _kernels:
        return _kernels[key]
    better = cuda.jit(device=True)(_better_max if op == "max" else _better_min)
    val_type = numba.from_dtype(dtype)

    @cuda.jit
    def arg_rows(x, n, out):
        row = cuda.blockIdx.x
        t = cuda.threadIdx.x
        values = cuda.shared.array(T, val_type)
        indices = cuda.shared.array(T, numba.int64)
        start = row * n
        i = t if t < n else 0  # filler: the first element, index 0
        v = x[start + i]
        for j in range(t + T, n, T):
            if better(v, i, x[start + j], j):
                v, i = x[start + j], j
        values[t], indices[t] = v, i
        cuda.syncthreads()
        step = T // 2
        while step > 0:
            if t < step and better(values[t], indices[t], values[t + step], indices[t + step]):
                values[t], indices[t] = values[t + step], indices[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[row] = indices[0]

    _kernels[key] = arg_rows
    return arg_rows


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, tuple):
        axis = (axis,)
    out = []
    for d in axis:
        d = int(d)
        if not -ndim <= d < max(ndim, 1):
            raise np.exceptions.AxisError(d, ndim)
        out.append(d % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def _as_rows(a, axes):
    """``a`` with ``axes`` moved last, as a C-contiguous (rows, n) CudaArray."""
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = a.transpose(kept + list(axes)) if a.ndim else a
    n = 1
    for d in axes:
        n *= a.shape[d]
    if not moved._is_c_contiguous():
        moved = moved.copy()
    rows = max(a.size // n, 1) if n else int(np.prod([a.shape[d] for d in kept]))
    return moved.reshape(rows, n), kept, n


def _result_shape(a, axes, kept, keepdims):
    if keepdims:
        return tuple(1 if d in axes else s for d, s in enumerate(a.shape))
    return tuple(a.shape[d] for d in kept)


def reduce(op, a, axis=None, keepdims=False, dtype=None):
    """``np.<op>(a, axis, keepdims)`` for op in sum / prod / max / min / argmax / argmin."""
    if op in ("argmax", "argmin"):
        return _arg_reduce(op[3:], a, axis, keepdims)
    probe = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
    out_dtype = probe(np.zeros(1, a.dtype), dtype=dtype).dtype if op in ("sum", "prod") \
        else a.dtype
    axes = _axes(axis, a.ndim)
    if not axes and a.ndim:
        return a.astype(out_dtype)
    rows, kept, n = _as_rows(a, axes)
    shape = _result_shape(a, axes, kept, keepdims)
    if n == 0:
        if op not in IDENTITY:
            raise ValueError(f"zero-size array to reduction operation {op}imum which has no "
                             "identity")
        out = CudaArray.empty(shape, out_dtype)
        out.fill(IDENTITY[op])
        return out
    if rows.dtype != out_dtype:
        rows = rows.astype(out_dtype)
    out = CudaArray.empty((rows.shape[0],), out_dtype)
    if rows.shape[0] and n <= SERIAL_UP_TO:
        launch(_serial_kernel(op, out_dtype), rows.shape[0])(rows._flat(), rows.shape[0], n,
                                                            out._buffer)
    elif rows.shape[0]:
        T = threads(n)
        _row_kernel(op, out_dtype, T)[rows.shape[0], T](rows._flat(), n, out._buffer)
    return out.reshape(shape)


def _arg_reduce(op, a, axis, keepdims):
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    axes = _axes(axis, a.ndim)
    rows, kept, n = _as_rows(a, axes)
    if n == 0:
        raise ValueError(f"attempt to get arg{op} of an empty sequence")
    out = CudaArray.empty((rows.shape[0],), np.int64)
    if rows.shape[0] and n <= SERIAL_UP_TO:
        launch(_serial_arg_kernel(op, rows.dtype), rows.shape[0])(rows._flat(), rows.shape[0], n,
                                                                 out._buffer)
    elif rows.shape[0]:
        T = threads(n)
        _arg_kernel(op, rows.dtype, T)[rows.shape[0], T](rows._flat(), n, out._buffer)
    return out.reshape(_result_shape(a, axes, kept, keepdims))
