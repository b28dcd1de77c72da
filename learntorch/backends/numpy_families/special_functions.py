"""The special functions numpy lacks: erf, lgamma, digamma and polygamma.

Each computes in float64 and returns its input's dtype.  ``erf`` and ``lgamma`` call
the standard library's exact ``math.erf`` / ``math.lgamma`` element by element;
``digamma`` and ``polygamma`` (the derivatives of lgamma: digamma = psi, polygamma(n)
= the n-th derivative of psi) are computed here, the classic way:

* for large x, the asymptotic series (Bernoulli numbers B2k)::

      psi(x)     ~ ln x - 1/(2x) - sum B2k / (2k x^2k)
      psi^(n)(x) ~ (-1)^(n+1) [ (n-1)!/x^n + n!/(2 x^(n+1)) + sum B2k (2k+n-1)!/((2k)! x^(2k+n)) ]

* smaller x is first shifted up with the recurrence
  ``psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1)``;
* negative x is reflected: ``psi^(n)(x) = (-1)^n psi^(n)(1 - x) - d^n/dx^n pi cot(pi x)``.

At the poles (0, -1, -2, ...) they give torch's answers: lgamma = inf, digamma(0) =
-inf (and nan at the negative integers), polygamma(n >= 1) = +-inf -- except that torch's
own trigamma (n = 1) gives huge finite numbers at the negative integers, where the
true value (and ours) is inf.
"""
import math

import numpy as np

# B2, B4, ..., B16: the Bernoulli numbers of the asymptotic series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


def _lgamma_one(v):
    if math.isnan(v):
        return v
    if math.isinf(v) or (v <= 0 and v == math.floor(v)):
        return math.inf  # the poles, and both infinities
    return math.lgamma(v)


_lgamma_ufunc = np.frompyfunc(_lgamma_one, 1, 1)


def _asymptotic(n, x):
    """psi^(n)(x) by the asymptotic series (x large)."""
    if n == 0:
        out = np.log(x) - 0.5 / x
        x2k = np.ones_like(x)
        for k, b in enumerate(_BERNOULLI, 1):
            x2k = x2k * x * x
            out = out - b / (2 * k * x2k)
        return out
    out = math.factorial(n - 1) / x ** n + math.factorial(n) / (2 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, 1):
        out = out + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / x ** (2 * k + n)
    return out if n % 2 else -out


def _positive(n, x):
    """psi^(n)(x) for x > 0: shift up with the recurrence, then the series."""
    threshold = 15.0 + 2 * n  # where the series' truncation error is below float64's
    steps = np.ceil(np.maximum(threshold - x, 0))
    total = np.zeros_like(x)
    for j in range(int(steps.max()) if steps.size else 0):
        term = 1.0 / (x + j) ** (n + 1)
        total = total + np.where(j < steps, term, 0.0)
    sign = -1.0 if n % 2 == 0 else 1.0  # -(-1)^n
    return _asymptotic(n, x + steps) + sign * math.factorial(n) * total


def _cot_derivative(n, c):
    """d^n/dx^n cot(pi x) / pi^n as a polynomial in c = cot(pi x): Q_0 = c,
    Q_(k+1) = -(1 + c^2) Q_k'(c)."""
    q = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        q = -np.polynomial.Polynomial([1.0, 0.0, 1.0]) * q.deriv()
    return q(c)


def _polygamma(n, x):
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.nan)
    pole = (x <= 0) & (x == np.floor(x))
    positive = x > 0
    negative = (x < 0) & ~pole & np.isfinite(x)
    if positive.any():
        out[positive] = _positive(n, x[positive])
    if negative.any():
        xn = x[negative]
        reflected = _positive(n, 1 - xn) * (1.0 if n % 2 == 0 else -1.0)
        out[negative] = reflected - np.pi ** (n + 1) * _cot_derivative(n, 1 / np.tan(np.pi * xn))
    if n == 0:
        out[x == 0] = np.copysign(np.inf, -x[x == 0])  # psi(+0) = -inf, psi(-0) = +inf
        out[x == np.inf] = np.inf
    else:
        out[pole] = np.inf if n % 2 else -np.inf
        out[x == np.inf] = 0.0 if n == 1 else np.nan  # (torch's answers at +inf)
    return out


class SpecialFunctions:
    def erf(self, x):
        from ..reference import _erf
        return _arr(_erf(x), dtype=x.dtype)  # _erf computes in float64

    def lgamma(self, x):
        """log |Gamma(x)|: inf at the poles 0, -1, -2, ... and at both infinities."""
        return _arr(_lgamma_ufunc(np.asarray(x, dtype=np.float64)), dtype=x.dtype)

    def digamma(self, x):
        """psi(x) = d lgamma(x) / dx."""
        return _arr(_polygamma(0, x), dtype=x.dtype)

    def polygamma(self, n, x):
        """The n-th derivative of digamma (n = 0 is digamma itself)."""
        return _arr(_polygamma(n, x), dtype=x.dtype)
