"""``fast_erf``: the error function from plain arithmetic, so a Numba loop can run it on SIMD lanes.

Why not ``math.erf``?
    For the same reason as ``fast_exp`` (read its docstring first): inside a
    Numba loop ``math.erf(v)`` is a call to the C library's scalar ``erf`` for
    every element, and a call stops the compiler from vectorizing the loop.
    The exact GELU, ``x * (1 + erf(x / sqrt 2)) / 2``, spent almost all its time
    there (580 us for 32768 float32 elements on one thread, against 4 us for
    ReLU).  Written with only ``+ - * /``, comparisons, bit operations and
    ``fast_exp``, the loop compiles to SIMD instructions.

What erf is: erf(x) = 2/sqrt(pi) * integral from 0 to x of e**(-t**2) dt, the
area under a bell curve.  It is odd (erf(-x) = -erf(x)), about 2x/sqrt(pi) near
0, and it rises to 1 so quickly that from |x| = 5.93 on the float64 nearest to
erf(x) is exactly 1.  So we compute erf(a) for a = |x| and give it x's sign, in
three ranges:

1. **|x| < 1: a polynomial.**  erf(x) = x * (1 + P(x**2)), P a degree-12
   polynomial in t = x**2 (erf is odd, so only even powers appear besides the
   factor x).  Written ``x + x * P``: the large part, x, is exact, and the
   product's rounding error is small next to the result.  ``x`` keeps its sign,
   so erf(-0.0) = -0.0 and erf of a tiny or subnormal x is about 1.128x, as it
   should be.

2. **1 <= |x| < 6: through the complement.**  erf(a) = 1 - erfc(a), where
   erfc(a) = e**(-a**2) * g(a) and g(a) = erfc(a) * e**(a**2) is a smooth,
   slowly falling function (about 1 / (a sqrt(pi))), easy to fit: a degree-12
   polynomial in s = 1/(2 + a) - S_MID (the division stretches the short end of
   the range, where g bends most, and compresses the long flat tail; S_MID
   centres s on 0).  Since erfc(a) < 0.16 here, its relative error counts for
   at most a sixth of a unit in erf's last place.

   *e**(-a**2) without losing a**2's rounding error*: a**2 rounded to float64
   is off by up to half a unit in its last place, which e**(...) turns into a
   relative error of the same absolute size (0.1 ulp of erf at a = 1).  So a
   is split as ``a = hi + lo``, hi being a with the 27 low bits of its
   fraction cleared: hi has 26 significant bits, so ``hi * hi`` is exact, and
   a**2 = hi**2 + d with d = lo * (a + hi), a few 1e-8 at most.  Then
   e**(-a**2) = e**(-hi**2) * e**(-d), and e**(-d) = 1 - d + d**2/2 to far
   below float64's precision.

3. **|x| >= 6**: erf = +-1 (erfc(6) = 2e-17 is below half a unit of 1);
   +-inf lands here.  NaN fails every comparison and is returned as it came.

The coefficients were fitted by ``scripts/fit_erf.py`` (weighted least squares
plus Lawson's iterations towards the minimax polynomial, in 50-digit mpmath
arithmetic, weighted so that the error measured is erf's own).  Fit errors
after rounding the coefficients to float64: 1.3e-17 relative (P) and 1.7e-18
absolute (g), i.e. at most a tenth of a unit in the last place; the rest is
float64 rounding.

Accuracy (``tests/backends/test_backend_fast_erf.py`` checks it against mpmath):
within 1.2 units in the last place over the whole line (measured worst 1.19
ulp, near |x| = 1.01, on 10**5 samples; glibc's ``math.erf``: 0.92).  It
differs from ``math.erf`` by one unit in about 13% of the arguments below
|x| = 1.5, 2% between 1.5 and 2, and under 0.3% beyond.
Exactly +-0, +-1 and NaN where ``math.erf`` gives them.

Cost: both ranges are computed for every element and a comparison picks one
(that is how a vectorized loop does an ``if``): about 60 vector operations for
8 float64 elements.  In the gelu kernel (32768 elements, one thread) that was 5
times faster than the loop calling the C library's ``erf`` (115 us against 580 us);
gelu on float32 now skips erf altogether (fast_gelu.py: 31 us).

Compiling it into a loop: ``erf_float64`` is ``inline="always"``, so Numba
pastes its code into the caller before LLVM sees it.  Left as a function call,
it is too long for LLVM to inline, and the call would stop the loop's
vectorization just as ``math.erf`` did.  Pasted code takes the caller's
compile flags, so this file sets none that matter to the arithmetic: no
``fastmath`` (unlike ``fast_exp``), hence no fused multiply-adds, and the same
bits in the gelu kernels, the compiler's kernels, a plain call from Python and
on every machine (a caller compiled with ``fastmath`` would get slightly
different ones).  ``error_model="numpy"`` is needed, or the division
``1 / (2 + a)`` would carry a ZeroDivisionError check, which also stops
vectorization.  Float64 only: a float32 caller converts first (gelu_backward
computes in float64 and rounds once).

After editing this file, delete the ``*.nbi``/``*.nbc`` files of the kernels
that call it (Numba's cache does not follow the dependency).
"""
import numpy as np
from numba import njit, types
from numba.extending import overload

from .fast_exp import exp_float64

SPLIT = 1.0   # |x| below: the polynomial of range 1
TOP = 6.0     # |x| from here: erf = +-1

# ``python scripts/fit_erf.py`` prints these (constant term first)
P = (0.1283791670955126, -0.3761263890318375, 0.1128379167095486, -0.026866170645073115,
     0.0052239776247824145, -0.0008548326978816337, 0.00012055331039473839,
     -1.492559357135311e-05, 1.6460973945371981e-06, -1.6350038494823276e-07,
     1.4657979027412347e-08, -1.1366089633121238e-09, 5.946047525433018e-11)
S_MID = 0.22916666666666666
G = (0.22142954022993167, 1.554178253193854, 3.553742170386791, 4.944626961712309,
     1.674394827209809, -6.587575437346103, -5.745860381896436, 14.87546339722421,
     11.798852407145498, -48.630807962916265, -2.7378895566877466, 164.85394344989803,
     -212.49927880188105)

# Horner's rule starts from the highest coefficient
_P_HIGH_FIRST = tuple(reversed(P))
_G_HIGH_FIRST = tuple(reversed(G))
_KEEP_26_BITS = np.int64(-(1 << 27))   # clears the 27 low bits of a float64's fraction


@njit(cache=True, error_model="numpy", inline="always")
def erf_float64(x):
    """erf of one float64 (the three ranges of the module docstring)."""
    a = abs(x)
    if a < SPLIT:
        # 1. x * (1 + P(x**2)), written x + x*P
        t = x * x
        p = _P_HIGH_FIRST[0]
        for c in _P_HIGH_FIRST[1:]:
            p = p * t + c
        return x + x * p
    if a < TOP:
        # 2. erf = 1 - e**(-a**2) * g(a); a**2 = hi**2 (exact) + d
        hi = np.int64(np.float64(a).view(np.int64) & _KEEP_26_BITS).view(np.float64)
        d = (a - hi) * (a + hi)
        s = 1.0 / (2.0 + a) - S_MID
        g = _G_HIGH_FIRST[0]
        for c in _G_HIGH_FIRST[1:]:
            g = g * s + c
        y = exp_float64(-(hi * hi)) * g            # e**(-hi**2) * g
        erfc = y - y * (d - 0.5 * d * d)           # times e**(-d) = 1 - d + d**2/2
        r = 1.0 - erfc
    elif a >= TOP:
        r = 1.0                                    # 3. the float64 nearest erf is 1
    else:
        return x                                   # NaN
    return r if x > 0 else -r


def fast_erf(x):
    """erf of one number, as an ``np.float64``.

    Called from Python, it runs the compiled ``erf_float64``; called inside a
    Numba function on a float64, Numba compiles ``erf_float64`` in (the
    overload below).
    """
    return np.float64(erf_float64(float(x)))


@overload(fast_erf, inline="always")
def _fast_erf_for(x):
    """Which compiled function ``fast_erf(x)`` means inside Numba code: float64 only."""
    if x == types.float64:
        return lambda x: erf_float64(x)
    return None
