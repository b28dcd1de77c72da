"""Elementwise math beyond + - * /: functions of one element (log, sin, floor, ...) and of two
(pow, floor division, maximum, atan2, ...), in numpy.

Floating functions receive floating arrays (the op has already chosen the result
dtype: an integer tensor's ``log`` computes in the default float), and every method
returns an array of its input's dtype.  numpy's float16 functions compute in float32
and round once, as torch's do.  The special functions numpy lacks (``erf``,
``lgamma``, ``digamma``, ``polygamma``) are a family of their own
(``special_functions.py``).
"""
import numpy as np


def _arr(out, dtype=None):
    """``np.asarray``, keeping device arrays (see ``reference.as_array``)."""
    from ..reference import as_array
    return as_array(out, dtype)


def _on_host(*operands):
    """No operand is a device array (those take the ufunc their device implements)."""
    return not any(hasattr(x, "tensor_device") for x in operands)


class ElementwiseMath:
    # ---- one operand: the arithmetic of signs and magnitudes ----
    def neg(self, x):
        return _arr(np.negative(x))

    def abs(self, x):
        return _arr(np.abs(x))

    def sign(self, x):
        """-1, 0 or 1; 0 for nan, as torch (numpy gives nan)."""
        s = _arr(np.sign(x))
        if x.dtype.kind == "f":
            return _arr(np.where(np.isnan(x), 0, s), dtype=x.dtype)
        return s

    def floor(self, x):
        return _arr(np.floor(x))

    def ceil(self, x):
        return _arr(np.ceil(x))

    def trunc(self, x):
        return _arr(np.trunc(x))

    def round(self, x, decimals=0):
        """Half to even, as torch (numpy's rule too).  With decimals, ``rint(x * 10**d) /
        10**d``: half precision computes that in float32 and rounds once, as torch's kernel
        (in float16, 2.35 * 10 would round up to 23.5 and end at 2.4; torch gives 2.3)."""
        if decimals and x.dtype.itemsize == 2 and x.dtype.kind != "i" and _on_host(x):
            return _arr(np.round(x.astype(np.float32), decimals), dtype=x.dtype)
        return _arr(np.round(x, decimals), dtype=x.dtype)

    def nan_to_num(self, x, nan, posinf, neginf):
        """nan, +inf and -inf replaced by the given numbers (already in x's range)."""
        return _arr(np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf), dtype=x.dtype)

    # ---- one floating operand: exponentials and logarithms ----
    def log(self, x):
        return _arr(np.log(x))

    def log2(self, x):
        return _arr(np.log2(x))

    def log10(self, x):
        return _arr(np.log10(x))

    def log1p(self, x):
        return _arr(np.log1p(x))

    def expm1(self, x):
        return _arr(np.expm1(x))

    def sqrt(self, x):
        return _arr(np.sqrt(x))

    def rsqrt(self, x):
        return _arr(1 / np.sqrt(x), dtype=x.dtype)

    def reciprocal(self, x):
        return _arr(np.reciprocal(x))

    def logit(self, x, eps=None):
        """log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps is given."""
        if eps is not None:
            x = np.clip(x, eps, 1 - eps)
        return _arr(np.log(x / (1 - x)), dtype=x.dtype)

    # ---- one floating operand: trigonometric and hyperbolic ----
    def sin(self, x):
        return _arr(np.sin(x))

    def cos(self, x):
        return _arr(np.cos(x))

    def tan(self, x):
        return _arr(np.tan(x))

    def asin(self, x):
        return _arr(np.arcsin(x))

    def acos(self, x):
        return _arr(np.arccos(x))

    def atan(self, x):
        return _arr(np.arctan(x))

    def sinh(self, x):
        return _arr(np.sinh(x))

    def cosh(self, x):
        return _arr(np.cosh(x))

    def asinh(self, x):
        return _arr(np.arcsinh(x))

    def acosh(self, x):
        return _arr(np.arccosh(x))

    def atanh(self, x):
        return _arr(np.arctanh(x))

    # ---- two operands (already in the result dtype; a number stays a number) ----
    def pow(self, a, b):
        """a ** b; for integers torch's answer to a negative exponent: the integer part of
        1 / a**|b| (1 for a == 1, +-1 for a == -1 by the parity of b, else 0)."""
        if np.result_type(a, b).kind == "f":
            return _arr(np.power(a, b))
        negative = _arr(b) < 0
        if not negative.any():
            return _arr(np.power(a, b))
        out = np.power(a, np.where(negative, 0, b))
        sign = np.where(_arr(b) % 2 == 0, 1, -1)
        reciprocal = np.where(a == 1, 1, np.where(a == -1, sign, 0))
        return _arr(np.where(negative, reciprocal, out), dtype=out.dtype)

    def floor_divide(self, a, b):
        """The quotient rounded towards -inf, as Python's ``//`` (and torch's)."""
        return _arr(np.floor_divide(a, b))

    def trunc_divide(self, a, b):
        """The quotient rounded towards zero (C's integer division)."""
        if np.result_type(a, b).kind == "f":
            return _arr(np.trunc(np.true_divide(a, b)))
        q = np.floor_divide(a, b)
        # floor went one below the truncated quotient where the signs differ and it was inexact
        return _arr(q + ((np.remainder(a, b) != 0) & ((_arr(a) < 0) != (_arr(b) < 0))),
                    dtype=q.dtype)

    def remainder(self, a, b):
        """a - floor(a / b) * b: the sign of b, as Python's ``%``.

        Floats as torch's loop computes them: ``fmod`` (exact), then ``+ b`` where the two
        signs differ.  A zero result keeps fmod's sign, that of ``a`` (numpy and Python give
        it b's sign: ``0.0 % -inf`` is -0.0 there, 0.0 in torch, and a later ``x // 0``
        tells the two apart)."""
        if np.result_type(a, b).kind in "biu" or not _on_host(a, b):
            return _arr(np.remainder(a, b))
        mod = np.fmod(a, b)
        wrong_sign = (mod != 0) & ((_arr(b) < 0) != (mod < 0))
        return _arr(np.where(wrong_sign, mod + b, mod), dtype=_arr(mod).dtype)

    def fmod(self, a, b):
        """a - trunc(a / b) * b: the sign of a, as C's ``fmod``."""
        return _arr(np.fmod(a, b))

    def maximum(self, a, b):
        """The larger of a and b (nan if either is nan)."""
        return _arr(np.maximum(a, b))

    def minimum(self, a, b):
        return _arr(np.minimum(a, b))

    def clamp(self, x, lo, hi):
        """min(max(x, lo), hi), each bound an array, a number or None; nan stays nan."""
        out = x
        if lo is not None:
            out = np.maximum(out, lo)
        if hi is not None:
            out = np.minimum(out, hi)
        return _arr(out, dtype=x.dtype) if out is not x else x.copy()

    def atan2(self, a, b):
        """The angle of the point (b, a): atan(a / b) in the right quadrant."""
        return _arr(np.arctan2(a, b))

    def hypot(self, a, b):
        return _arr(np.hypot(a, b))

    def xlogy(self, a, b):
        """a * log(b), and 0 where a == 0 (unless b is nan): 0 * log(0) counts as 0."""
        out = np.where(_arr(a) == 0, 0, a * np.log(b))
        return _arr(np.where(np.isnan(b), np.nan, out), dtype=np.result_type(a, b))

    def lerp(self, start, end, weight):
        """start + weight * (end - start), torch's way: step from the nearer end, so that
        weight = 1 gives exactly ``end`` (start + 1 * (end - start) can be off by a
        rounding error).

        torch rounds ``w * diff + start`` once (a fused multiply-add); for float32 and
        float16 the same single rounding comes from computing in float64 and rounding
        back (float64 holds the product of two float32 numbers exactly), so results
        agree bit for bit.  float64 rounds twice here: within an ulp of torch's."""
        dtype = start.dtype
        diff = end - start
        one_minus = dtype.type(1) - weight
        if dtype.itemsize < 8:
            start, end, diff, weight, one_minus = (np.asarray(v).astype(np.float64) for v in
                                                   (start, end, diff, weight, one_minus))
        out = np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * one_minus)
        return _arr(out, dtype=dtype)

    # ---- smooth activations with parameters ----
    def softplus(self, x, beta, threshold):
        """log(1 + e^(beta x)) / beta, computed as logaddexp so that large beta x cannot
        overflow; above the threshold torch returns x itself."""
        bx = x * beta
        return _arr(np.where(bx > threshold, x, np.logaddexp(0, bx) / beta), dtype=x.dtype)

    def gelu_tanh(self, x):
        """gelu's tanh approximation 0.5 x (1 + tanh(u)), u = k (x + c x^3), written as
        x * sigmoid(2u): equal, but 1 + tanh(u) loses most digits for very negative x in
        float32, where sigmoid(2u) computes the same small number directly."""
        k, c = 0.7978845608028654, 0.044715  # sqrt(2 / pi), and the cubic's coefficient
        u2 = (2 * k) * (x + c * x ** 3)
        return _arr(x * self.sigmoid(_arr(u2, dtype=x.dtype)), dtype=x.dtype)
