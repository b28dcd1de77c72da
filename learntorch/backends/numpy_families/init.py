"""What ``nn.init`` computes beyond drawing random numbers: the truncated normal's transform.

``trunc_normal_from_uniform(u, mean, std, a, b)`` turns numbers u drawn uniformly from
[0, 1) into draws of N(mean, std^2) truncated to [a, b], by the inverse CDF: with Phi
the standard normal CDF and alpha, beta the bounds in standard deviations from the
mean, p = Phi(alpha) + u * (Phi(beta) - Phi(alpha)) and x = mean + std * Phi^-1(p).
One pass however far [a, b] lies from the mean (rejection sampling, redrawing until a
number lands inside, can take practically forever there), and exact up to float64
rounding.  A tail is mirrored to the lower side, where Phi keeps its digits
(Phi(-10) = 7.6e-24, where 1 - Phi(10) rounds to 0), and worked with in log
probabilities, which go on where Phi itself underflows (beyond 38 standard deviations).
"""
import math

import numpy as np

from .. import reference as _reference


class InitFamily:
    def trunc_normal_from_uniform(self, u, mean, std, a, b):
        alpha, beta = (a - mean) / std, (b - mean) / std
        with np.errstate(all="ignore"):  # (nn.init runs outside Function.apply's quiet mode)
            if alpha <= 0 <= beta:  # [a, b] holds the mean: Phi keeps its digits
                p_low, p_high = _phi(alpha), _phi(beta)
                z = ndtri(p_low + u * (p_high - p_low))
            else:  # in a tail: work in the lower one (mirrored), with log probabilities
                side = -1.0 if alpha > 0 else 1.0
                low, high = sorted((side * alpha, side * beta))
                log_high = _log_phi(high)
                ratio = math.exp(_log_phi(low) - log_high)  # Phi(low) / Phi(high)
                z = side * ndtri_of_log(log_high + np.log(ratio + u * (1.0 - ratio)))
            return _reference.as_array(np.clip(mean + std * z, a, b))


def _phi(x):
    """The standard normal CDF, through erfc so that the lower tail keeps its digits."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


_FAR_OUT = -30.0  # below this, log Phi by its asymptotic series (Phi itself underflows at -38)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_phi(x):
    """log Phi(x) for a number x, also where Phi(x) underflows."""
    if x > _FAR_OUT:
        return math.log(_phi(x))
    return float(_log_phi_far(np.float64(x)))


def _log_phi_far(x):
    """log Phi(x) for x < -30: log(phi(x) / -x) + log1p(-1/x^2 + 3/x^4 - 15/x^6 + 105/x^8)."""
    w = 1.0 / (x * x)
    return (-0.5 * x * x - np.log(-x) - _HALF_LOG_2PI
            + np.log1p(w * (-1.0 + w * (3.0 + w * (-15.0 + w * 105.0)))))


def ndtri_of_log(log_p):
    """Phi^-1(exp(log_p)), also for probabilities below float64's smallest number."""
    z = ndtri(np.exp(log_p))
    tiny = log_p < -700.0  # exp underflows: Newton on log Phi(z) = log_p, from -sqrt(-2 log_p)
    if np.any(tiny):
        x = -np.sqrt(-2.0 * log_p)
        for _ in range(6):
            x = x - (_log_phi_far(x) - log_p) / (-x - 1.0 / x)
        z = np.where(tiny, x, z)
    return z


# Wichura's rational approximations of the normal quantile (Algorithm AS 241, Applied
# Statistics 37(3), 1988), accurate to about 1 part in 1e16: numerator and denominator
# coefficients, highest power first, for the centre and the two parts of the tails
_CENTRE = ((2.5090809287301226727e+3, 3.3430575583588128105e+4, 6.7265770927008700853e+4,
            4.5921953931549871457e+4, 1.3731693765509461125e+4, 1.9715909503065514427e+3,
            1.3314166789178437745e+2, 3.3871328727963666080e0),
           (5.2264952788528545610e+3, 2.8729085735721942674e+4, 3.9307895800092710610e+4,
            2.1213794301586595867e+4, 5.3941960214247511077e+3, 6.8718700749205790830e+2,
            4.2313330701600911252e+1, 1.0))
_NEAR = ((7.74545014278341407640e-4, 2.27238449892691845833e-2, 2.41780725177450611770e-1,
          1.27045825245236838258e0, 3.64784832476320460504e0, 5.76949722146069140550e0,
          4.63033784615654529590e0, 1.42343711074968357734e0),
         (1.05075007164441684324e-9, 5.47593808499534494600e-4, 1.51986665636164571966e-2,
          1.48103976427480074590e-1, 6.89767334985100004550e-1, 1.67638483018380384940e0,
          2.05319162663775882187e0, 1.0))
_FAR = ((2.01033439929228813265e-7, 2.71155556874348757815e-5, 1.24266094738807843860e-3,
         2.65321895265761230930e-2, 2.96560571828504891230e-1, 1.78482653991729133580e0,
         5.46378491116411436990e0, 6.65790464350110377720e0),
        (2.04426310338993978564e-15, 1.42151175831644588870e-7, 1.84631831751005468180e-5,
         7.86869131145613259100e-4, 1.48753612908506148525e-2, 1.36929880922735805310e-1,
         5.99832206555887937690e-1, 1.0))


def _ratio(coefficients, r):
    numerator, denominator = (np.polyval(c, r) for c in coefficients)
    return numerator / denominator


def ndtri(p):
    """The standard normal quantile Phi^-1(p), float64 (AS 241): -inf at 0, inf at 1, nan
    outside [0, 1]."""
    q = p - 0.5
    centre = q * _ratio(_CENTRE, 0.180625 - q * q)
    r = np.sqrt(-np.log(np.minimum(p, 1.0 - p)))
    tail = np.where(r <= 5.0, _ratio(_NEAR, r - 1.6), _ratio(_FAR, r - 5.0))
    z = np.where(np.abs(q) <= 0.425, centre, np.copysign(tail, q))
    return np.where((p == 0) | (p == 1), np.copysign(np.inf, q), z)  # (inf / inf there)
