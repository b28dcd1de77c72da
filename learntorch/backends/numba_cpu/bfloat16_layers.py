"""bfloat16 kernels for the layers autocast runs in 16 bits: a matrix product (with a bias,
for ``linear``) and relu, on the arrays' bit patterns.

The numpy backend computes a bfloat16 matmul as torch's CPU kernels do -- operands
widened to float32, one float32 product, rounded once (``backends/opmath.py``) -- in five
calls: three widening casts, the product, the rounding.  On the layers of a small MLP
under autocast (a 32 x 64 batch, a 64 x 64 weight) each call's fixed cost outweighs its
arithmetic, and those calls made ``linear`` in bfloat16 ~2.7x its float32 time.  These
kernels do the same arithmetic in one call: widen, multiply-add in float32, add the bias,
round once.  relu is here because numpy's relu on bfloat16 runs ``ml_dtypes``' per-element
comparison (~13 us on 2,048 numbers); on the bits it is an integer test.

The product sums over k in order, element by element (``acc[j] += a[i, p] * b[p, j]``,
the loop over j on SIMD lanes); BLAS sums in blocks, so a float32 sum here may differ from
the reference's in its last bits, and the rounded bfloat16 result in rare cases by one
unit (``tests/backends/test_bfloat16_layers.py`` bounds it).  Products too large for a
plain loop to keep up with BLAS go to the reference (``bfloat16_backend.py``).

Contract: bfloat16 arrays are passed as their ``uint16`` bits (numba cannot type
``ml_dtypes.bfloat16``); any strides (a transposed weight is read in place); the last
argument is the output, C-contiguous, which the kernel fills.  One thread: the sizes that
come here take microseconds, less than waking a second thread.
"""
import numpy as np
from numba import njit

from . import bfloat16_bits as convert  # (a module: its functions are not kernels of this file)

_KERNEL = dict(cache=True, fastmath={"contract"})  # a*b + c as one FMA (one rounding)

_SIGN16 = np.uint16(0x8000)
_ABS16 = np.uint16(0x7FFF)
_INF16 = np.uint16(0x7F80)
_ZERO16 = np.uint16(0)


@njit(**_KERNEL)
def _widened(b):
    """``b`` (bfloat16 bits, any layout) as a C-contiguous float32 array of its shape."""
    rows, columns = b.shape
    wide = np.empty((rows, columns), np.uint32)
    if b.strides[0] >= b.strides[1]:
        for p in range(rows):
            for j in range(columns):
                wide[p, j] = convert.widen_bits(b[p, j])
    else:  # a transpose (a weight read as (in, out)): read it in memory order
        for j in range(columns):
            for p in range(rows):
                wide[p, j] = convert.widen_bits(b[p, j])
    return wide.view(np.float32)


_ROWS = 4  # rows of ``a`` per pass over ``b``: each b[p, j] loaded once feeds four sums


@njit(**_KERNEL)
def matmul(a, b, bias, has_bias, out):
    """``out = round(a @ b + bias)``: a (m, k), b (k, n), bias (n,) added when ``has_bias``
    (else any array, unread); float32 sums, one rounding per element.

    Each element's sum runs over p in order; rows are taken four at a time so that the
    inner loop over j (SIMD lanes) does four multiply-adds per load of ``b`` -- on a 32 x 64
    by 64 x 64 product one row at a time spent most of its time entering that short loop."""
    m, k = a.shape
    n = b.shape[1]
    wide_b = _widened(b)
    wide_a = _widened(a)
    wide_bias_bits = np.zeros(n, np.uint32)
    if has_bias:
        for j in range(n):
            wide_bias_bits[j] = convert.widen_bits(bias[j])
    wide_bias = wide_bias_bits.view(np.float32)
    acc = np.empty((_ROWS, n), np.float32)
    acc_bits = acc.view(np.uint32)
    for first in range(0, m, _ROWS):
        rows = min(_ROWS, m - first)
        acc[:] = 0.0
        if rows == _ROWS:
            for p in range(k):
                v0, v1 = wide_a[first, p], wide_a[first + 1, p]
                v2, v3 = wide_a[first + 2, p], wide_a[first + 3, p]
                for j in range(n):
                    w = wide_b[p, j]
                    acc[0, j] += v0 * w
                    acc[1, j] += v1 * w
                    acc[2, j] += v2 * w
                    acc[3, j] += v3 * w
        else:
            for r in range(rows):
                for p in range(k):
                    v = wide_a[first + r, p]
                    for j in range(n):
                        acc[r, j] += v * wide_b[p, j]
        for r in range(rows):
            for j in range(n):
                total = acc[r, j]
                if has_bias:  # after the sum, as the reference adds it into the product
                    total += wide_bias[j]
                acc[r, j] = total
                out[first + r, j] = convert.round_to_bfloat16(acc_bits[r, j])


@njit(**_KERNEL)
def relu(x, out):
    """``np.maximum(x, 0)`` on bfloat16 bits: a number with the sign bit set (-0 included)
    becomes +0, unless it is NaN; everything else stays as it is."""
    bits, result = x.reshape(x.size), out.reshape(out.size)
    for i in range(bits.size):
        b = bits[i]
        negative = (b & _SIGN16) != 0 and (b & _ABS16) <= _INF16
        result[i] = _ZERO16 if negative else b


@njit(**_KERNEL)
def relu_backward(y, grad, out):
    """``where(y <= 0, 0, grad)`` on bfloat16 bits: +-0 and negative numbers (not NaN)
    stop the gradient; a positive or NaN ``y`` passes it."""
    ys, grads, result = y.reshape(y.size), grad.reshape(grad.size), out.reshape(out.size)
    for i in range(ys.size):
        b = ys[i]
        magnitude = b & _ABS16
        stopped = magnitude == 0 or ((b & _SIGN16) != 0 and magnitude <= _INF16)
        result[i] = _ZERO16 if stopped else grads[i]
