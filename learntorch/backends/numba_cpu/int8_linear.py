"""The int8 Linear in one pass: quantize a block of input rows, multiply it with the packed
weight in registers, and write floats -- the fast ``quantized_linear`` of the Numba backend.

Replaces, for one call, the three reference steps of ``QuantizedFamily.quantized_linear``
(``backends/numpy_families/quantized.py``): ``quantize_per_tensor``, ``quantized_matmul``
and ``dequantize_matmul``.  Same values bit for bit (tests/quantization): the same float32
quantize step, the same exact integer sums, the same one rounding at the end.

Why it is faster than ``int8_kernels.quantized_matmul`` (one dot product per output
element, each ending in a horizontal sum of a vector register):

* **the weight is packed once**, when the layer is built (``pack_weight_tiles``; fbgemm's
  "packed params" do the same): blocks of 16 output columns, and inside a block, for each
  group of 4 k-steps, the 16 x 4 bytes that one ``vpdpbusd`` reads (``int8_vnni.py``);
* **a register tile**: 4 input rows x 16 columns of int32 sums stay in four vector
  registers for the whole of K; each instruction adds 64 multiply-adds, and nothing is
  summed horizontally;
* **fused ends**: the input is quantized in the same call, and each block of 4 rows is
  turned into floats as soon as its sums are done: zero-point corrections, scale, bias.
  No (M, N) int32 matrix is ever written, and the Python between the steps is gone.

The zero points stay out of the hot loop by expanding the product::

    sum_k (a - za)(w - zw) = sum_k a*w  -  za * sum_k w  -  zw * sum_k a  +  K * za * zw

``sum_k w`` per column is computed at packing; ``sum_k a`` per row while quantizing.
Rows in parallel (``prange`` over blocks of 4 rows) only when the product is big enough
to pay for waking the other threads (``loader.use_threads``).
"""
import numpy as np
from numba import njit, prange

from .int8_vnni import K_GROUP, TILE_COLUMNS, dot4_tile, vnni_available  # noqa: F401

_KERNEL = dict(cache=True, error_model="numpy", boundscheck=False)
#: input rows per register tile (four 512-bit registers of sums; with the weight register
#: and the broadcast codes, well inside the 32 registers AVX-512 has)
TILE_ROWS = 4


def pack_weight_tiles(codes):
    """The (N, K) int8 weight codes as (ceil(N/16), ceil(K/4), 64) tiles, zero padded:
    ``tiles[b, g, 4*j + t] = codes[16*b + j, 4*g + t]`` -- for each block of 16 columns and
    each group of 4 k-steps, the 64 bytes one ``vpdpbusd`` reads.  Also ``sum_k codes`` per
    column (int32): the zero-point correction's share that never changes."""
    n, k = codes.shape
    n_pad = -(-n // TILE_COLUMNS) * TILE_COLUMNS
    k_pad = -(-k // K_GROUP) * K_GROUP
    padded = np.zeros((n_pad, k_pad), np.int8)
    padded[:n, :k] = codes
    tiles = padded.reshape(n_pad // TILE_COLUMNS, TILE_COLUMNS, k_pad // K_GROUP, K_GROUP)
    tiles = np.ascontiguousarray(tiles.transpose(0, 2, 1, 3)).reshape(
        n_pad // TILE_COLUMNS, k_pad // K_GROUP, K_GROUP * TILE_COLUMNS)
    column_sums = codes.sum(axis=1, dtype=np.int64).astype(np.int32)
    return tiles, column_sums


@njit(inline="always", **_KERNEL)
def _quantize_rows(x, first, rows, inv_scale, zero_point, quant_max, codes):
    """Codes of x[first:first+rows] into codes[first:first+rows] (as
    ``int8_kernels.quantize_rows``: float32 multiply and shift, round half to even, clamp,
    NaN to quant_max).  All in float32 -- the rounded value is a whole number, so its
    comparisons with the ends are the reference's float64 ones -- over 1-D views, which
    LLVM vectorises 16 floats at a time."""
    k = x.shape[1]
    hi = np.float32(quant_max)
    shift = np.float32(zero_point)
    for i in range(first, first + rows):
        x_row, code_row = x[i], codes[i]
        for p in range(k, codes.shape[1]):
            code_row[p] = 0  # the padding up to a multiple of 4 multiplies zero weights
        for p in range(k):
            code = np.rint(x_row[p] * inv_scale + shift)
            if not code <= hi:  # above the top, or NaN
                code = hi
            elif code < 0:
                code = np.float32(0)
            code_row[p] = np.uint8(np.int32(code))


@njit(inline="always", **_KERNEL)
def _column_terms(k, zero_point, weight_zero_point, column_sums, scale, weight_scales, bias):
    """Per output column, what every row shares: the zero points' int32 term
    ``za * sum_k w - K * za * zw``, the float32 scale ``input scale * weight scale`` (as
    the reference multiplies it) as a float64, and the bias as a float64."""
    n = column_sums.shape[0]
    offsets = np.empty(n, np.int32)
    scales = np.empty(n, np.float64)
    biases = np.empty(n, np.float64)
    for c in range(n):
        offsets[c] = np.int32(zero_point * column_sums[c] - k * zero_point * weight_zero_point)
        scales[c] = np.float64(np.float32(scale) * weight_scales[c])
        biases[c] = np.float64(bias[c])
    return offsets, scales, biases


@njit(inline="always", **_KERNEL)
def _row_block(codes, first, rows, k, tiles, n, weight_zero_point, offsets, scales, biases,
               sums, out):
    """Rows first..first+rows-1 of ``out``: each block of 16 columns summed in registers
    (``dot4_tile``) into ``sums``, then each row written out as floats -- the zero points'
    terms taken off the raw sums (exact int32, as ``int8_kernels.quantized_matmul``), then
    ``sum * scale + bias`` in float64, rounded once (as
    ``int8_kernels.dequantize_matmul_rows``)."""
    block = codes[first:]
    for b in range(tiles.shape[0]):
        if rows == TILE_ROWS:
            dot4_tile(block, 4, tiles, b, sums[:, b * TILE_COLUMNS:])
        else:
            for r in range(rows):  # the last rows of the batch, one at a time
                dot4_tile(block[r:], 1, tiles, b, sums[r:, b * TILE_COLUMNS:])
    for r in range(rows):
        row_term = np.int32(0)
        if weight_zero_point != 0:  # rare: symmetric weights have zero point 0
            code_row = codes[first + r]
            code_sum = 0
            for p in range(k):
                code_sum += code_row[p]
            row_term = np.int32(weight_zero_point * code_sum)
        sum_row, out_row = sums[r], out[first + r]
        for c in range(n):
            exact = np.int32(sum_row[c] - offsets[c] - row_term)
            out_row[c] = np.float32(np.float64(exact) * scales[c] + biases[c])


@njit(**_KERNEL)
def quantized_linear_rows(x, scale, zero_point, quant_max, tiles, n, weight_zero_point,
                          column_sums, weight_scales, bias, out):
    """``out`` (M, N) float32 = dequantize(quantize(x) @ W.T) + bias, one thread.

    ``x`` (M, K) float32 C-contiguous; ``scale``, ``zero_point`` and ``quant_max`` the
    input codes' (uint8 0..quant_max; x is multiplied by the float32 1 / scale, as
    ``quantize_per_tensor``); ``tiles``, ``column_sums`` from ``pack_weight_tiles``;
    ``weight_zero_point`` one int; ``weight_scales`` (N,) float32; ``bias`` (N,) float32
    (zeros when the layer has none)."""
    m, k = x.shape
    inv_scale = np.float32(1.0) / np.float32(scale)
    codes = np.empty((m, tiles.shape[1] * K_GROUP), np.uint8)
    _quantize_rows(x, 0, m, inv_scale, zero_point, quant_max, codes)
    offsets, scales, biases = _column_terms(k, zero_point, weight_zero_point, column_sums,
                                            scale, weight_scales, bias)
    sums = np.empty((TILE_ROWS, tiles.shape[0] * TILE_COLUMNS), np.int32)
    for first in range(0, m, TILE_ROWS):
        _row_block(codes, first, min(TILE_ROWS, m - first), k, tiles, n, weight_zero_point,
                   offsets, scales, biases, sums, out)


@njit(parallel=True, **_KERNEL)
def quantized_linear_rows_parallel(x, scale, zero_point, quant_max, tiles, n,
                                   weight_zero_point, column_sums, weight_scales, bias, out):
    """``quantized_linear_rows`` with the rows shared among the threads: each block of
    rows has its own sums and writes only its own rows of the codes and of ``out``."""
    m, k = x.shape
    inv_scale = np.float32(1.0) / np.float32(scale)
    codes = np.empty((m, tiles.shape[1] * K_GROUP), np.uint8)
    blocks = (m + TILE_ROWS - 1) // TILE_ROWS
    for block_index in prange(blocks):
        first = block_index * TILE_ROWS
        _quantize_rows(x, first, min(TILE_ROWS, m - first), inv_scale, zero_point,
                       quant_max, codes)
    offsets, scales, biases = _column_terms(k, zero_point, weight_zero_point, column_sums,
                                            scale, weight_scales, bias)
    for block_index in prange(blocks):
        first = block_index * TILE_ROWS
        sums = np.empty((TILE_ROWS, tiles.shape[0] * TILE_COLUMNS), np.int32)
        _row_block(codes, first, min(TILE_ROWS, m - first), k, tiles, n, weight_zero_point,
                   offsets, scales, biases, sums, out)
