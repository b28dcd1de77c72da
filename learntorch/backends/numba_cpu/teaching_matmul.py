"""A blocked (tiled) matrix multiply in Numba: teaching material, not the hot path.

The backend's ``matmul`` stays ``np.matmul``, which calls a BLAS library
(OpenBLAS or MKL) tuned by experts for years: register blocking, hand-written
SIMD, packing of panels into cache-friendly buffers.  This file shows the two
ideas that get most of the way there, so that a learner can read them, time
them against ``np.matmul`` and see what is left.

1. **Tiling for the cache.**  The naive triple loop streams all of ``b`` from
   memory once per row of ``a``.  Splitting the loops into TILE x TILE blocks
   works on blocks of ``a``, ``b`` and ``out`` small enough to stay in the
   cache while they are reused TILE times.
2. **Loop order for contiguous access.**  The innermost loop runs along ``j``,
   a row of ``b`` and a row of ``out``, both contiguous in memory, with
   ``a[i, p]`` held in a register: the compiler turns it into SIMD
   multiply-adds.  (The textbook order i, j, p would stride down a column of
   ``b`` instead.)

Thread layout: ``prange`` over bands of TILE rows of ``out``.  Each thread owns
its band: it is the only one writing those rows, so no two threads ever write
the same element and no locking is needed.  Within a band the thread walks
the tiles of ``p`` (the shared dimension) and ``j``.

Contract of ``matmul(a, b)``: ``a`` is (n, k), ``b`` is (k, m), both of one
float dtype (any strides: strided inputs are copied to C order first); returns a new C-contiguous (n, m) array of that
dtype.  Compare with ``np.matmul(a, b)``: equal up to rounding (the additions
happen in another order).  The shapes are checked in Python first, because the
compiled loops do not check bounds: a wrong shape would read past the arrays.
"""
import numpy as np
from numba import njit, prange

TILE = 64  # 64 x 64 float64 tiles are 32 KiB each: a tile of b and of out fit in L1/L2


def matmul(a, b):
    """``a @ b`` for 2-D float arrays with the tiled kernel below (checks shapes first)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and "
            f"{'x'.join(map(str, b.shape))}): the teaching matmul takes a (n, k) and a (k, m) "
            "array, the inner sizes k must agree")
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        raise RuntimeError(
            f"expected a and b to have one dtype, float32 or float64, but got {a.dtype} and "
            f"{b.dtype}; convert first, e.g. b.astype(np.float32)")
    # one memory layout, one compiled version per dtype (every new stride pattern would
    # compile another): the copy costs n*k + k*m steps, nothing next to the n*k*m multiply
    return _matmul_tiles(np.ascontiguousarray(a), np.ascontiguousarray(b))


@njit(parallel=True, cache=True)
def _matmul_tiles(a, b):
    n, k = a.shape
    m = b.shape[1]
    out = np.zeros((n, m), dtype=a.dtype)
    for band in prange((n + TILE - 1) // TILE):  # each thread owns rows i0:i1 of out
        i0 = band * TILE
        i1 = min(i0 + TILE, n)
        for p0 in range(0, k, TILE):
            p1 = min(p0 + TILE, k)
            for j0 in range(0, m, TILE):
                j1 = min(j0 + TILE, m)
                # one tile of out += one tile of a @ one tile of b
                for i in range(i0, i1):
                    for p in range(p0, p1):
                        a_ip = a[i, p]
                        for j in range(j0, j1):
                            out[i, j] += a_ip * b[p, j]
    return out
