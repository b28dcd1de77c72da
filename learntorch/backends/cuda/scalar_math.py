"""The math of one element: what each numpy ufunc computes, written for one thread.

``elementwise.py`` compiles each of these into a CUDA *device function* and
wraps it in a kernel that walks every element of (broadcast, strided) inputs.
So adding a ufunc to the CUDA backend is one small function here plus one
line in ``UFUNCS`` below.

NaN rules follow numpy and torch: ``maximum``/``minimum`` propagate NaN,
comparisons with NaN are False (``!=`` is True).

``math`` below is Python's ``math`` module on a GPU (numba-cuda compiles
``math.exp`` to CUDA's ``expf``/``exp``).  In the simulator the kernels run as
plain Python, where ``math.exp(1000)`` raises OverflowError and ``math.log(0)``
ValueError instead of giving inf, so there the same names are numpy's scalar
functions, which answer as a GPU does.
"""
import numpy as np

from .driver import simulated

if simulated():
    def _quiet(f):
        """numpy's scalar function without the RuntimeWarning a GPU would not print."""
        def quiet(x):
            with np.errstate(all="ignore"):
                return f(x)
        return quiet

    class math:  # noqa: N801  (stands in for the module)
        exp, expm1, log, log1p, log2, log10 = map(
            _quiet, (np.exp, np.expm1, np.log, np.log1p, np.log2, np.log10))
        sqrt, tanh, sinh, cosh, sin, cos, tan = map(
            _quiet, (np.sqrt, np.tanh, np.sinh, np.cosh, np.sin, np.cos, np.tan))
        floor, ceil, trunc, atan = map(_quiet, (np.floor, np.ceil, np.trunc, np.arctan))
        import math as _python_math
        erf = staticmethod(_python_math.erf)
else:
    import math


# ---- arithmetic ----
def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def multiply(a, b):
    return a * b


def divide(a, b):
    return a / b


def floor_divide(a, b):
    return a // b


def remainder(a, b):
    return a % b


def power(a, b):
    return a ** b


def maximum(a, b):
    if a != a:  # NaN wins, as in numpy and torch
        return a
    if b != b:
        return b
    return a if a >= b else b


def minimum(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a <= b else b


def negative(a):
    return -a


def positive(a):
    return a


def absolute(a):
    return -a if a < 0 else a


def sign(a):
    if a > 0:
        return 1
    if a < 0:
        return -1
    return a  # 0 stays 0 (and -0.0, NaN stay themselves)


def square(a):
    return a * a


def reciprocal(a):
    return 1 / a


# ---- transcendental ----
def exp(a):
    return math.exp(a)


def expm1(a):
    return math.expm1(a)


def log(a):
    return math.log(a)


def log1p(a):
    return math.log1p(a)


def log2(a):
    return math.log2(a)


def log10(a):
    return math.log10(a)


def sqrt(a):
    return math.sqrt(a)


def tanh(a):
    return math.tanh(a)


def sinh(a):
    return math.sinh(a)


def cosh(a):
    return math.cosh(a)


def sin(a):
    return math.sin(a)


def cos(a):
    return math.cos(a)


def tan(a):
    return math.tan(a)


def arctan(a):
    return math.atan(a)


def floor(a):
    return math.floor(a)


def ceil(a):
    return math.ceil(a)


def trunc(a):
    return math.trunc(a)


# ---- comparisons and logic (results are bool) ----
def greater(a, b):
    return a > b


def greater_equal(a, b):
    return a >= b


def less(a, b):
    return a < b


def less_equal(a, b):
    return a <= b


def equal(a, b):
    return a == b


def not_equal(a, b):
    return a != b


# truth is ``a != 0`` rather than ``bool(a)``: numba-cuda cannot convert a float16 to bool
def logical_and(a, b):
    return a != 0 and b != 0


def logical_or(a, b):
    return a != 0 or b != 0


def logical_xor(a, b):
    return (a != 0) != (b != 0)


def logical_not(a):
    return not a


def invert(a):
    return ~a


def bitwise_and(a, b):
    return a & b


def bitwise_or(a, b):
    return a | b


def bitwise_xor(a, b):
    return a ^ b


def isnan(a):
    return a != a


def isinf(a):
    return a == a and (a - a) != (a - a)  # inf - inf is NaN; NaN itself is not inf


def isfinite(a):
    return a - a == 0


# ---- used by the fused activation kernels (backend.py) ----
def sigmoid(x):
    # split by sign so that exp never overflows (as the CPU backends do)
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


# numpy ufunc name -> the function above
UFUNCS = {name: fn for name, fn in globals().items()
          if callable(fn) and not name.startswith("_") and name not in ("math", "simulated")
          and name != "sigmoid"}
