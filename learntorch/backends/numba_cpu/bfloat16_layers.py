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

from .bfloat16_casts import round_to_bfloat16, widen_bits

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
    for p in range(rows):
        for j in range(columns):
            wide[p, j] = widen_bits(b[p, j])
    return wide.view(np.float32)


@njit(**_KERNEL)
def matmul(a, b, bias, has_bias, out):
    """``out = round(a @ b + bias)``: a (m, k), b (k, n), bias (n,) added when ``has_bias``
    (else any array, unread); float32 sums, one rounding per element."""
    m, k = a.shape
    n = b.shape[1]
    wide_b = _widened(b)
    row_bits = np.empty(k, np.uint32)
    row = row_bits.view(np.float32)
    acc = np.empty(n, np.float32)
    acc_bits = acc.view(np.uint32)
    wide_bias_bits = np.empty(n, np.uint32)
    if has_bias:
        for j in range(n):
            wide_bias_bits[j] = widen_bits(bias[j])
    wide_bias = wide_bias_bits.view(np.float32)
    for i in range(m):
        for p in range(k):
            row_bits[p] = widen_bits(a[i, p])
        acc[:] = 0.0
        for p in range(k):
            v = row[p]
            for j in range(n):
                acc[j] += v * wide_b[p, j]
        if has_bias:  # after the sum, as the reference adds it into the product's result
            for j in range(n):
                acc[j] += wide_bias[j]
        for j in range(n):
            out[i, j] = round_to_bfloat16(acc_bits[j])


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
