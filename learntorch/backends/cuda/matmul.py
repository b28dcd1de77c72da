"""Matrix multiplication on the GPU: a shared-memory tiled kernel, batched.

C = A @ B for a batch of matrices: A is (batch, M, K), B is (batch, K, N).

**Thread layout.**  The output is cut into TILE x TILE tiles; one block of
TILE x TILE threads computes one tile, and thread (ty, tx) one element
C[row, col].  ``blockIdx.z`` is the batch index.

**Why tiles.**  Computed naively, every thread reads a whole row of A and a
whole column of B from global memory: each input element is fetched M or N
times.  Here the block walks along K one tile at a time: its threads load
one TILE x TILE tile of A and one of B into *shared memory* (each thread one
element of each), ``syncthreads()``, then every thread runs its TILE
multiply-adds out of the fast shared tiles, and ``syncthreads()`` again
before the tiles are overwritten.  Every element fetched from global memory
is now used TILE times.  Threads outside the matrix (ragged edges) load
zeros, which add nothing.

Contract: A and B are C-contiguous with the same dtype; ``matmul`` below
broadcasts batch dims and makes the operands contiguous first.
"""
import numba
import numpy as np

from .array import CudaArray
from .driver import numba_cuda, simulated

cuda = numba_cuda()
TILE = 4 if simulated() else 16  # the simulator runs TILE*TILE Python threads per block

_kernels = {}


def _tiled_kernel(dtype):
    if dtype in _kernels:
        return _kernels[dtype]
    nb_type = numba.from_dtype(dtype)
    # the zero is made inside the kernel: a numpy float16 *constant* captured from here
    # compiles to IR that NVVM rejects, while the conversion dtype.type(0) compiles for every dtype
    cast = dtype.type

    @cuda.jit
    def matmul_tiles(a, b, c, M, K, N):
        zero = cast(0)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col = cuda.blockIdx.x * TILE + tx
        row = cuda.blockIdx.y * TILE + ty
        batch = cuda.blockIdx.z
        a_tile = cuda.shared.array((TILE, TILE), nb_type)
        b_tile = cuda.shared.array((TILE, TILE), nb_type)
        a0, b0 = batch * M * K, batch * K * N
        acc = zero
        for k0 in range(0, K, TILE):
            # each thread loads one element of each tile (zero outside the matrices)
            a_tile[ty, tx] = a[a0 + row * K + k0 + tx] if row < M and k0 + tx < K else zero
            b_tile[ty, tx] = b[b0 + (k0 + ty) * N + col] if k0 + ty < K and col < N else zero
            cuda.syncthreads()
            for k in range(TILE):
                acc += a_tile[ty, k] * b_tile[k, tx]
            cuda.syncthreads()  # everyone is done with these tiles before the next load
        if row < M and col < N:
            c[batch * M * N + row * N + col] = acc

    _kernels[dtype] = matmul_tiles
    return matmul_tiles


def matmul(a, b):
    """``np.matmul(a, b)`` for CudaArrays (1-D operands and batch broadcasting included)."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    dtype = np.result_type(a.dtype, b.dtype)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = a.reshape(1, -1)
    if b_vec:
        b = b.reshape(-1, 1)
    (M, K), (K2, N) = a.shape[-2:], b.shape[-2:]
    if K != K2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {K2} is different from {K})")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = _contiguous(a.broadcast_to(batch + (M, K)), dtype)
    b = _contiguous(b.broadcast_to(batch + (K, N)), dtype)
    n_batch = int(np.prod(batch, dtype=np.int64))
    out = CudaArray.empty(batch + (M, N), dtype)
    if out.size:
        if K == 0:
            out.fill(0)
        else:
            grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE, n_batch)
            _tiled_kernel(dtype)[grid, (TILE, TILE)](a._flat(), b._flat(), out._flat(), M, K, N)
    if a_vec and b_vec:
        return out.reshape(batch)
    if a_vec:
        return out.reshape(batch + (N,))
    if b_vec:
        return out.reshape(batch + (M,))
    return out


def _contiguous(x, dtype):
    if x.dtype != dtype:
        return x.astype(dtype)
    return x if x._is_c_contiguous() else x.copy()
