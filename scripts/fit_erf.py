"""Fit the two polynomials of ``learntorch/backends/numba_cpu/fast_erf.py`` and print them.

Run: ``python scripts/fit_erf.py`` (needs mpmath; about 20 s).  The engine does not
import this file: its output is pasted into fast_erf.py as literals.

Method: weighted least squares on Chebyshev nodes, in 50-digit arithmetic, followed by
Lawson's iterations (each round reweights the nodes by their error), which moves the
least-squares fit towards the minimax one -- the polynomial whose largest error is the
smallest.  The weight makes the fitted quantity's error an error in *erf* itself:

* ``P(t) = erf(x)/x - 1`` with ``t = x**2`` on ``0 <= x <= 1``, weighted by
  ``x / erf(x)``: the error relative to erf(x);
* ``g(a) = erfc(a) * e**(a**2)`` as a polynomial in ``s = 1/(2 + a) - S_MID`` on
  ``1 <= a <= 6``, weighted by ``e**(-a**2)``: the absolute error of
  ``erfc = e**(-a**2) * g``, which is the absolute error of ``erf = 1 - erfc``.

It prints each polynomial's largest weighted error after rounding the coefficients to
float64, measured on 2001 points.
"""
import mpmath as mp

mp.mp.dps = 50
DEGREE_P, DEGREE_G = 12, 12
SPLIT, TOP = 1, 6   # |x| < SPLIT: x * (1 + P); SPLIT <= |x| < TOP: 1 - erfc; beyond: 1


def fit(target, variable, low, high, degree, weight, rounds=40):
    """Coefficients (constant first, rounded to float64) of the polynomial in
    ``variable(a)`` closest to ``target(a)`` on [low, high], and its largest weighted error."""
    m = 4 * (degree + 1)
    nodes = [(low + high) / 2 + (high - low) / 2 * mp.cos(mp.pi * (k + mp.mpf(0.5)) / m)
             for k in range(m)]
    ys, vs, ws = ([f(a) for a in nodes] for f in (target, variable, weight))
    lawson = [mp.mpf(1)] * m
    for _ in range(rounds):
        rows = mp.matrix(m, degree + 1)
        rhs = mp.matrix(m, 1)
        for i in range(m):
            scale = mp.sqrt(lawson[i]) * ws[i]
            for j in range(degree + 1):
                rows[i, j] = scale * vs[i] ** j
            rhs[i] = scale * ys[i]
        c = mp.qr_solve(rows, rhs)[0]
        errors = [abs(ws[i] * (mp.polyval(c[::-1], vs[i]) - ys[i])) for i in range(m)]
        total = sum(w * e for w, e in zip(lawson, errors))
        lawson = [w * e / total for w, e in zip(lawson, errors)]
    coefficients = [float(c[j]) for j in range(degree + 1)]
    rounded = [mp.mpf(v) for v in coefficients[::-1]]
    worst = max(abs(weight(a) * (mp.polyval(rounded, variable(a)) - target(a)))
                for a in mp.linspace(low, high, 2001))
    return coefficients, worst


def p_target(x):
    """erf(x)/x - 1, and its limit 2/sqrt(pi) - 1 at 0."""
    return 2 / mp.sqrt(mp.pi) - 1 if x == 0 else mp.erf(x) / x - 1


def main():
    p, p_error = fit(p_target, lambda x: x * x, mp.mpf(0), mp.mpf(SPLIT), DEGREE_P,
                     lambda x: 1 / (1 + p_target(x)))
    s_mid = float((1 / (2 + mp.mpf(SPLIT)) + 1 / (2 + mp.mpf(TOP))) / 2)
    g, g_error = fit(lambda a: mp.erfc(a) * mp.exp(a * a), lambda a: 1 / (2 + a) - s_mid,
                     mp.mpf(SPLIT), mp.mpf(TOP), DEGREE_G, lambda a: mp.exp(-a * a))
    print(f"# P: largest error relative to erf: {mp.nstr(p_error, 3)}")
    print(f"P = {tuple(p)!r}")
    print(f"# g: largest absolute error in erf: {mp.nstr(g_error, 3)}")
    print(f"S_MID = {s_mid!r}")
    print(f"G = {tuple(g)!r}")


if __name__ == "__main__":
    main()
