"""Fit the polynomial of ``learntorch/backends/numba_cpu/fast_gelu.py`` and print it.

Run: ``python scripts/fit_gelu.py`` (needs mpmath; a few seconds).  The engine does not
import this file: its output is pasted into fast_gelu.py as literals.

What is fitted: the normal distribution's lower tail without its Gaussian factor,
``h(u) = Phi(-u) * e**(u**2 / 2)`` for ``0 <= u <= TOP`` -- a smooth function falling from
1/2 at 0 like ``1 / (u sqrt(2 pi))`` -- as a polynomial in ``s = 1/(C + u) - S_MID``
(``C`` stretches the short end, where h bends most; ``S_MID`` centres s on 0).  The weight
``1 / h(u)`` makes the error the relative error of ``Phi(-u)``, which is what gelu's
negative half needs (gelu(x) = x * Phi(x) is tiny there, so an absolute error would not do).

Method: ``fit`` of scripts/fit_erf.py (least squares on Chebyshev nodes, then Lawson's
iterations towards the minimax polynomial).  It prints the largest relative error after
rounding the coefficients to float64; fast_gelu rounds them to float32 and evaluates in
float32, which adds about as much as a float32 rounding (tests/backends/test_backend_fast_gelu.py
measures the result).
"""
import mpmath as mp

from fit_erf import fit   # this folder is on sys.path when the script runs

mp.mp.dps = 30
DEGREE = 10     # 1e-8 relative error at 10 (below float32's 6e-8 half unit); 2e-8 at 9
C = 4           # of the variable s = 1/(C + u) - S_MID: 4 fitted best among 2, 3, 4, 6
TOP = 14.5      # Phi(-14.5) * 14.5 = 1e-46 is below float32's smallest subnormal


def tail_without_gaussian(u):
    """h(u) = Phi(-u) * e**(u**2 / 2)."""
    return mp.ncdf(-u) * mp.exp(u * u / 2)


def main():
    top = mp.mpf(TOP)
    s_mid = float((mp.mpf(1) / C + 1 / (C + top)) / 2)
    h, error = fit(tail_without_gaussian, lambda u: 1 / (C + u) - s_mid, mp.mpf(0), top,
                   DEGREE, lambda u: 1 / tail_without_gaussian(u))
    print(f"# h: largest error relative to Phi(-u): {mp.nstr(error, 3)}")
    print(f"S_MID = {s_mid!r}")
    print(f"H = {tuple(h)!r}")


if __name__ == "__main__":
    main()
