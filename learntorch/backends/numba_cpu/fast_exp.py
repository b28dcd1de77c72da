"""``fast_exp``: e**x from plain arithmetic, so that a Numba loop can run it on SIMD lanes.

Why not ``math.exp``?
    Inside a Numba loop ``math.exp(v)`` becomes a call to the C library's scalar
    ``exp``, once per element (Numba vectorizes it only with Intel's SVML
    library, which most machines do not have).  A function call stops the
    compiler from vectorizing the loop, while numpy's ``np.exp`` evaluates 8 or
    16 elements per instruction.  Written with only ``+ - *``, comparisons and
    integer bit operations, the same loop compiles to SIMD instructions and
    computes 16 float32 exponentials at a time (AVX-512), like numpy.

How: three steps, the ones every ``exp`` in a maths library takes.

1. **Range reduction.**  Write x = k*ln2 + r with k = round(x / ln2), an
   integer, and |r| <= ln2/2 ~ 0.347.  Then e**x = 2**k * e**r: a power of two,
   which is exact and cheap, times e**r on a short interval, where a short
   polynomial is accurate.

   *Rounding without a function call*: adding ``shift = 1.5 * 2**23`` (float32;
   ``2**52`` for float64) to x/ln2 pushes the fraction bits out of the
   significand, so the sum is rounded to an integer by the addition itself;
   subtracting ``shift`` again gives k as a float, and the low bits of the sum,
   read as an integer, hold k as an integer.

   *ln2 in two pieces* (Cody and Waite): ``ln2_hi`` keeps only the leading
   bits of ln2, so ``k * ln2_hi`` is exact; ``ln2_lo = ln2 - ln2_hi`` adds the
   rest.  One rounded ``k * ln2`` would lose up to k/2 units in the last place
   of r, which is an error of the same size in the result.

2. **Polynomial.**  e**r = 1 + r + r**2/2! + r**3/3! + ...; on |r| <= 0.347 the
   first omitted term of a degree-7 (float32) or degree-13 (float64) Taylor
   polynomial is below a tenth of a unit in the last place.  Horner's form,
   ``p = p*r + c`` from the highest coefficient down, is one fused multiply-add
   per coefficient.  (Libraries fit "minimax" coefficients instead of 1/n! and
   save a term or two; the Taylor ones need no explanation.)

3. **2**k from exponent bits.**  A float is ``sign | exponent | fraction``;
   with fraction 0 and exponent field ``k + bias`` (bias 127 for float32, 1023
   for float64) its value is exactly 2**k.  So ``(k + bias) << mantissa_bits``,
   read back as a float (``.view``), is 2**k without any call.  k is split into
   two halves and the result multiplied by both: 2**k alone is not a normal
   float at the ends of the range (k = 128 for results near float32's maximum,
   k down to -150 for results that are subnormal), while each half is, and the
   last multiplication rounds once, overflowing to inf or underflowing
   gradually to subnormals and 0 exactly as the true value would.

Edge values: x is first clamped to [lowest, highest] (float32: [-104, 89];
float64: [-746, 710]), just outside the range where e**x is a nonzero finite
float, which keeps k small; -inf and very negative x give 0, +inf and large x
give inf.  NaN fails both comparisons, passes the clamp unchanged and makes r,
the polynomial and the result NaN.

Accuracy (``tests/backends/test_backend_fast_exp.py`` checks it against
``np.exp`` and an extended-precision reference): within 1 unit in the last
place wherever e**x is a normal float, and within 1 unit of the subnormal
spacing below that; 0, inf and NaN exactly where ``np.exp`` gives them.

Compile flags: ``fastmath={"contract"}`` lets LLVM fuse each ``a*b + c`` into
one FMA instruction (one rounding instead of two).  No other fast-math flag:
reassociation would simplify ``(x*log2e + shift) - shift`` to ``x*log2e`` and
undo the rounding trick, and "no NaNs" would break NaN propagation.

Seeing the SIMD code: compile a loop that calls ``fast_exp`` and print
``kernel.inspect_asm(kernel.signatures[0])``: the loop body uses ``zmm``
(512-bit) or ``ymm`` (256-bit) registers and calls no ``exp``.

Numba's on-disk cache is keyed to the file of the kernel being compiled, so a
kernel that calls ``fast_exp`` does not notice when this file changes: after
editing it, delete the ``*.nbi``/``*.nbc`` files in ``__pycache__`` (or the
folder ``NUMBA_CACHE_DIR`` names).
"""
import decimal
import math

import numpy as np
from numba import njit

from .per_float_type import per_float_type


def _make_exp(float_type, lowest, highest, degree, ln2_hi):
    """A compiled e**x for one float type: the three steps above with that type's constants.

    ``lowest``/``highest``: the clamp; ``degree``: of the Taylor polynomial;
    ``ln2_hi``: ln2 rounded to few enough bits that k * ln2_hi is exact.
    """
    info = np.finfo(float_type)
    int_type = np.dtype(f"i{info.dtype.itemsize}").type     # int32 or int64: same width
    mantissa_bits, bias = info.nmant, info.maxexp - 1         # 23, 127 or 52, 1023
    lowest, highest = float_type(lowest), float_type(highest)
    log2e = float_type(1 / math.log(2))
    # ln2 - ln2_hi from a 28-digit ln2: math.log(2) itself is off by 2e-17, which
    # k * ln2_lo would multiply by up to 1076
    ln2_lo = float_type(decimal.Decimal(2).ln() - decimal.Decimal(ln2_hi))
    ln2_hi = float_type(ln2_hi)
    shift = float_type(1.5 * 2**mantissa_bits)
    shift_bits = shift.view(int_type)
    taylor = tuple(float_type(1 / math.factorial(n)) for n in range(degree, -1, -1))

    @njit(cache=True, fastmath={"contract"})
    def exp(x):
        if x < lowest:          # NaN fails both tests and stays NaN
            x = lowest
        if x > highest:
            x = highest
        # 1. x = k*ln2 + r, with k = round(x / ln2)
        t = x * log2e + shift   # the addition rounds x/ln2 to an integer
        k = t - shift
        r = (x - k * ln2_hi) - k * ln2_lo
        # 2. e**r by Horner's rule: ((c_d*r + c_(d-1))*r + ...)*r + 1
        p = taylor[0]
        for c in taylor[1:]:
            p = p * r + c
        # 3. times 2**k, built from exponent bits, in two halves
        k_int = float_type(t).view(int_type) - shift_bits
        half = k_int >> 1
        scale1 = int_type((half + bias) << mantissa_bits).view(float_type)
        scale2 = int_type((k_int - half + bias) << mantissa_bits).view(float_type)
        return p * scale1 * scale2

    return exp


exp_float32 = _make_exp(np.float32, -104.0, 89.0, degree=7, ln2_hi=0.693359375)
exp_float64 = _make_exp(np.float64, -746.0, 710.0, degree=13, ln2_hi=6.93147180369123816490e-01)


fast_exp = per_float_type(
    "fast_exp", """e**x of one number: ``np.float32`` for a float32 ``x``, ``np.float64`` otherwise.

    Called from Python, it runs the compiled version for ``x``'s type; called inside a
    Numba function, Numba compiles in ``exp_float32`` or ``exp_float64`` according to the
    argument's type (per_float_type.py).
    """, exp_float32, exp_float64)
