"""``fast_gelu``: the exact GELU, x * Phi(x), of one number, in the number's own precision.

Phi is the normal distribution's cumulative distribution function.  The float64 form is
``0.5 * x * (1 + erf(x / sqrt 2))`` with ``fast_erf`` (read fast_erf.py first).  This file
adds a **float32 form computed in float32**, which is what the gelu kernels run on float32
tensors, and the one name, ``fast_gelu``, that picks the form by the argument's type.

Why a float32 form: float64 arithmetic works on 8 numbers per AVX-512 instruction and
float32 on 16, and a float32 result needs far fewer polynomial terms than a float64 one.
On 32768 float32 elements on one thread the gelu kernel took 111 us in float64 and 31 us
this way (ReLU: 4 us).  GELU sits after every hidden layer of a transformer's MLP, and
in a small network it cost as much as a matmul.  torch computes float32 GELU in float32
too.

The formula (all in float32).  With u = |x|, the lower tail is
``Phi(-u) = e**(-u**2/2) * h(u)``, where h is smooth and slowly falling (from 1/2 at 0,
about 1 / (u sqrt(2 pi)) for large u), so a polynomial fits it well: h is a degree-10
polynomial in ``s = 1/(4 + u) - S_MID`` on 0 <= u <= 14.5 (``scripts/fit_gelu.py``;
relative error 5e-9).  Then

    Phi(x) = Phi(-u)        for x < 0   (a product: no cancellation, however small it is)
    Phi(x) = 1 - Phi(-u)    for x >= 0  (Phi(-u) <= 1/2: no cancellation either)

and gelu(x) = x * Phi(x).  Computing the negative half as a product matters: the textbook
``0.5 * x * (1 + erf(x / sqrt 2))`` in float32 subtracts two numbers close to 1 and keeps
few correct digits once x < -3 (gelu(-5) = -1.4e-6 comes out with about one digit).

*e**(-u**2/2) without u**2's rounding error*: u**2 rounded to float32 is off by up to half
a unit in its last place, and e**(...) turns that into a relative error of u**2/2 units
(40 units of float32 at u = 9).  So u is split as ``u = hi + lo``, hi being u with the 12
low bits of its fraction cleared: hi has 12 significant bits, so ``hi * hi`` is exact, and
``u**2 = hi**2 + d`` with ``d = (u - hi) * (u + hi)``, at most u**2 / 1024.  Then
``e**(-u**2/2) = e**(-hi**2/2) * e**(-d/2)``; the second factor is the Taylor polynomial
of degree 4 in d/2 (at most 0.05 for the u that matter: error below 3e-9).

Accuracy (``tests/backends/test_backend_fast_gelu.py`` checks it against mpmath): within
8 float32 units in the last place of x * Phi(x) for x >= -9 (measured worst about 7, median
under 1); below -9 the result is tiny (|gelu| < 1e-17) and still has about five correct
digits until it reaches float32's subnormals.  +-0 keeps its sign; +inf gives +inf, -inf
gives NaN (-inf * 0, as torch's formula); NaN gives NaN; |x| >= 15 gives x or -0.0.
The float64 form keeps its own accuracy (fast_erf: about one float64 unit).

Compiling it into a loop: both forms are ``inline="always"`` (as fast_erf), so the loop
vectorizes, and neither uses ``fastmath``, so a kernel, the compiler's generated kernels
and a plain call from Python give the same bits.  After editing this file, delete the
``*.nbi``/``*.nbc`` files of the kernels that call it (Numba's cache does not follow the
dependency).
"""
import math

import numpy as np
from numba import njit

from .fast_erf import fast_erf
from .fast_exp import exp_float32
from .per_float_type import per_float_type

# ``python scripts/fit_gelu.py`` prints these (constant term first)
S_MID = 0.15202702702702703
H = (0.13786437625742137, 1.8846548980987554, 11.546744462838737, 52.43940031269737,
     164.4516189449435, 276.2786929265699, -170.54676292829086, -1778.5887844419499,
     -941.0389364666346, 9777.693404751612, 12399.38635215443)
TOP = 15.0   # |x| from here: Phi(-|x|) is 0 in float32, gelu(x) is x or -0.0

# float32 constants, so that every operation below stays in float32 (a float64 constant
# would make Numba compute the expression in float64)
_H_HIGH_FIRST = tuple(np.float32(c) for c in reversed(H))   # Horner's rule
_S_MID, _TOP = np.float32(S_MID), np.float32(TOP)
_ONE, _HALF, _FOUR = np.float32(1.0), np.float32(0.5), np.float32(4.0)
_SIXTH, _TWENTY_FOURTH = np.float32(1 / 6), np.float32(1 / 24)
_KEEP_12_BITS = np.int32(-(1 << 12))   # clears the 12 low bits of a float32's fraction
_INV_SQRT2 = 1.0 / math.sqrt(2.0)


@njit(cache=True, error_model="numpy", inline="always")
def gelu_float32(x):
    """x * Phi(x) of one float32, in float32 (the module docstring's formula)."""
    u = min(abs(x), _TOP)
    # e**(-u**2/2) = e**(-hi**2/2) * e**(-d/2), u**2 = hi**2 (exact) + d
    hi = np.int32(np.float32(u).view(np.int32) & _KEEP_12_BITS).view(np.float32)
    d = (u - hi) * (u + hi)
    y = _HALF * d
    e_minus_y = _ONE - y * (_ONE - y * (_HALF - y * (_SIXTH - y * _TWENTY_FOURTH)))
    # h(u) by Horner's rule
    s = _ONE / (_FOUR + u) - _S_MID
    h = _H_HIGH_FIRST[0]
    for c in _H_HIGH_FIRST[1:]:
        h = h * s + c
    lower_tail = exp_float32(-_HALF * hi * hi) * e_minus_y * h     # Phi(-u)
    return x * (lower_tail if x < 0 else _ONE - lower_tail)


@njit(cache=True, error_model="numpy", inline="always")
def gelu_float64(x):
    """x * Phi(x) of one float64, with fast_erf: 0.5 * x * (1 + erf(x / sqrt 2))."""
    return 0.5 * x * (1.0 + fast_erf(x * _INV_SQRT2))


fast_gelu = per_float_type(
    "fast_gelu", """gelu of one number: ``np.float32`` for a float32 ``x``, ``np.float64`` otherwise.

    Called from Python, it runs the compiled form for ``x``'s type; called inside a Numba
    function, Numba compiles in ``gelu_float32`` or ``gelu_float64`` by the argument's type
    (per_float_type.py), pasted into the loop (``inline="always"``, as fast_erf).
    """, gelu_float32, gelu_float64, inline="always")
