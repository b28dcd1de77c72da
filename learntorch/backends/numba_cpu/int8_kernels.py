"""int8 inference kernels: quantize a float row, multiply int8 codes with int32 sums, and
turn the int32 sums back into floats.

Why int8 is faster at all: a code is one byte instead of four, so four times as many
fit in a cache line and in a SIMD register, and CPUs have instructions that multiply
bytes and add the products into 32-bit sums in one step (x86's VNNI ``vpdpwssd`` /
``vpdpbusd``, ARM's ``sdot``).  The integer product itself is exact: no rounding
happens until the very end, when the int32 sum is scaled back into a float.

The kernels, each one loop nest (the numpy reference of each is the method of the same
name in ``backends/numpy_families/quantized.py``; the tests check they agree bit for
bit):

* ``quantized_matmul(a, a_zero_point, b, b_zero_point, out)`` -- the int8 GEMM.
  **Contract**: ``a`` (M, K) uint8 or int8 codes, ``b`` (N, K) int8 codes (a Linear
  weight, out_features x in_features), both C-contiguous; ``out`` (M, N) int32 receives
  ``sum_k (a[i, k] - a_zero_point) * (b[j, k] - b_zero_point)``, accumulated in int32
  (exact while ``K * 255 * 128 < 2**31``, i.e. K below ~65,000).  Rows of ``out`` are
  shared among the threads (``prange`` over i): each thread writes only its own rows,
  so no two threads ever write the same element.  The inner loop is a dot product of two
  contiguous byte rows, which the compiler vectorises into SIMD multiply-adds.  The zero
  points are kept *out* of that loop by expanding the product::

      sum (a - za)(b - zb) = sum a*b  -  zb * sum a  -  za * sum b  +  K * za * zb

  so the inner loop multiplies raw codes; ``sum b`` is one pass over b before the rows
  start, ``sum a`` one more pass over a row of a (only when ``b_zero_point`` is not 0).
* ``quantize_rows(x, inv_scale, zero_point, quant_min, quant_max, out)`` -- float32 ``x``
  (flat) to codes ``out`` (flat) in one pass: multiply by the reciprocal of the scale and
  add the zero point in float32, round half to even, clamp; NaN becomes ``quant_max``.
* ``min_max(x)`` -- the smallest and largest value of float32 ``x`` (flat) in one pass
  (numpy's ``x.min()`` and ``x.max()`` take two), NaN for both when x holds a NaN (as
  numpy).  It compares the floats' bits as integers, because LLVM vectorises integer
  min/max reductions but not float ones (whose NaN rules it must keep): a float32's bits
  read as an int32 are in the floats' order for positive numbers, and in reverse order
  for negative ones, so flipping a negative number's 31 magnitude bits makes the integer
  order the float order (-0.0 then sorts just below +0.0).  A NaN's magnitude bits are
  above infinity's.
* ``dequantize_matmul_rows(acc, scale, bias, out)`` -- ``out[i, j] = acc[i, j] * scale[j]
  + bias[j]`` in float64, rounded once to float32 (the fused multiply-add of torch's
  kernel); ``scale`` and ``bias`` are (N,) arrays (a per-tensor scale is repeated N
  times; no bias: zeros).  Parallel over rows.
"""
import numpy as np
from numba import njit, prange

_KERNEL = dict(cache=True, error_model="numpy", boundscheck=False)


@njit(parallel=True, **_KERNEL)
def quantized_matmul(a, a_zero_point, b, b_zero_point, out):
    m, k = a.shape
    n = b.shape[0]
    # the zero points' share of every sum: za * sum(b[j]) per column, k * za * zb overall
    column_terms = np.empty(n, np.int32)
    for j in range(n):
        b_sum = 0
        for p in range(k):
            b_sum += b[j, p]
        column_terms[j] = a_zero_point * b_sum - k * a_zero_point * b_zero_point
    for i in prange(m):
        # 1. raw dot products of byte rows: the hot loop, nothing but codes in it
        for j in range(n):
            acc = np.int32(0)
            for p in range(k):
                acc += np.int32(a[i, p]) * np.int32(b[j, p])
            out[i, j] = acc
        # 2. the zero points, subtracted afterwards (a separate loop keeps the one above
        #    in 32-bit SIMD lanes: mixing these 64-bit products into it made it 2x slower)
        a_sum = 0
        if b_zero_point != 0:
            for p in range(k):
                a_sum += a[i, p]
        row_term = np.int32(b_zero_point * a_sum)
        for j in range(n):
            out[i, j] -= column_terms[j] + row_term


@njit(**_KERNEL)
def quantize_rows(x, inv_scale, zero_point, quant_min, quant_max, out):
    lo, hi = np.float64(quant_min), np.float64(quant_max)
    shift = np.float32(zero_point)
    for i in range(x.shape[0]):
        code = np.float64(np.rint(x[i] * inv_scale + shift))  # float32 arithmetic, as fbgemm
        if np.isnan(code) or code > hi:
            code = hi
        elif code < lo:
            code = lo
        out[i] = code


@njit(**_KERNEL)
def min_max(x):
    bits = x.view(np.int32)
    low, high, magnitude = np.int32(2**31 - 1), np.int32(-2**31), np.int32(0)
    for i in range(bits.shape[0]):
        b = bits[i]
        key = b ^ ((b >> 31) & 0x7FFFFFFF)  # negative floats: flip the magnitude bits
        low = min(low, key)
        high = max(high, key)
        magnitude = max(magnitude, b & 0x7FFFFFFF)
    if magnitude > 0x7F800000:  # above infinity's bits: a NaN
        return np.float32(np.nan), np.float32(np.nan)
    ends = np.array([low, high], np.int32)
    ends ^= (ends >> 31) & 0x7FFFFFFF  # the same flip turns a key back into the float's bits
    values = ends.view(np.float32)
    return values[0], values[1]


@njit(parallel=True, **_KERNEL)
def dequantize_matmul_rows(acc, scale, bias, out):
    m, n = acc.shape
    for i in prange(m):
        for j in range(n):
            out[i, j] = np.float32(np.float64(acc[i, j]) * np.float64(scale[j])
                                   + np.float64(bias[j]))
