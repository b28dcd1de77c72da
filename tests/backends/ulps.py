"""Distance from an exact value in units in the last place: how the fast math helpers
(``fast_erf``, ``fast_gelu``) state their accuracy."""
import mpmath
import numpy as np


def ulps_from_exact(got, exact, dtype=np.float64):
    """|got - exact| for each element, in units in the last place of ``exact`` (mpmath
    numbers) correctly rounded to ``dtype`` (the smallest subnormal's spacing at 0)."""
    rounded = np.array([float(e) for e in exact], dtype=dtype)
    spacing = np.spacing(np.abs(rounded)).astype(np.float64)
    return np.array([float(abs(mpmath.mpf(float(g)) - e)) for g, e in zip(got, exact)]) / spacing
