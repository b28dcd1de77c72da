"""Reductions beyond ``sum`` (which is a core method): mean, prod, extremes and where they are,
variance, vector norms, truth tests and counts, in numpy.

``dims`` is a tuple of non-negative dims (empty for a 0-d array: reducing one number
leaves it as it is); ``keepdim`` keeps each reduced dim with size 1.  Results are
arrays in the input's dtype unless said otherwise.
"""
import math

import numpy as np


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


def _count(x, dims):
    return math.prod([x.shape[d] for d in dims]) if dims else 1


def _running_mean_with_infinities(x, dims, mean):
    """``mean`` (keepdims) as a running mean over ``dims`` in index order ends where the
    rows hold an infinity: nan, or the infinity itself when it is alone and last."""
    infinite = np.isinf(x)
    if not infinite.any():
        return mean
    count = infinite.sum(axis=dims, keepdims=True)
    kept = [d for d in range(x.ndim) if d not in dims]
    rows = np.transpose(x, kept + list(dims)).reshape([x.shape[d] for d in kept] + [-1])
    last = rows[..., -1].reshape(mean.shape)
    # (a nan anywhere in the row makes the running mean nan before the infinity comes)
    alone_and_last = (count == 1) & np.isinf(last) & ~np.isnan(mean)
    return np.where(count == 0, mean, np.where(alone_and_last, last, np.nan)).astype(x.dtype)


class Reductions:
    def mean(self, x, dims, keepdim):
        """sum / count; the mean of nothing is nan, as in torch."""
        out = np.sum(x, axis=dims, keepdims=keepdim) / x.dtype.type(_count(x, dims))
        return _arr(out, dtype=x.dtype)

    def prod(self, x, dims, keepdim):
        return _arr(np.prod(x, axis=dims, keepdims=keepdim, dtype=x.dtype))

    def amax(self, x, dims, keepdim):
        """The largest element (nan if any is nan)."""
        return _arr(np.max(x, axis=dims, keepdims=keepdim))

    def amin(self, x, dims, keepdim):
        return _arr(np.min(x, axis=dims, keepdims=keepdim))

    def argmax(self, x, dim, keepdim):
        """int64 index of the first largest along ``dim`` (the first nan, if any: nan is
        largest), or into the flattened array when ``dim`` is None."""
        return _arr(np.argmax(x, axis=dim, keepdims=keepdim), dtype=np.int64)

    def argmin(self, x, dim, keepdim):
        return _arr(np.argmin(x, axis=dim, keepdims=keepdim), dtype=np.int64)

    def max_along(self, x, dim, keepdim):
        """(values, int64 indices) of the largest along one ``dim``: the first one on ties
        (as torch on the CPU), the first nan where there is one."""
        return self._extreme_along(x, dim, keepdim, np.argmax)

    def min_along(self, x, dim, keepdim):
        return self._extreme_along(x, dim, keepdim, np.argmin)

    @staticmethod
    def _extreme_along(x, dim, keepdim, arg):
        if x.ndim == 0:  # one number: it is its own extreme, at index 0
            return x.copy(), _arr(np.zeros((), np.int64))
        idx = arg(x, axis=dim, keepdims=True)
        values = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            idx, values = np.squeeze(idx, dim), np.squeeze(values, dim)
        return _arr(values), _arr(idx, dtype=np.int64)

    def var_mean(self, x, dims, correction, keepdim, sqrt=False):
        """(variance, mean): the mean squared distance from the mean, divided by
        n - correction (inf or nan when that is <= 0), and the mean itself; with ``sqrt``,
        the standard deviation in place of the variance (its root taken before rounding).

        torch computes both in one pass (Welford's running mean, element by element:
        mean += (x - mean) / k), so an infinite element makes its mean nan -- unless
        it is the only one and comes last, where the running mean ends at +-inf."""
        out_dtype = x.dtype
        if x.__class__ is np.ndarray and x.dtype.kind == "f" and x.dtype.itemsize < 8:
            x = x.astype(np.float64)  # torch accumulates float32/float16 in double: so, one
            # rounding at the end (in float32 the last bit would differ, and a later sort,
            # max or quantile could then order equal variances differently)
        divisor = max(_count(x, dims) - correction, 0)
        mean = x.mean(axis=dims, keepdims=True)
        var = ((x - mean) ** 2).sum(axis=dims, keepdims=keepdim) / x.dtype.type(divisor)
        if x.dtype.kind == "f" and x.size and x.__class__ is np.ndarray:
            mean = _running_mean_with_infinities(x, dims, mean)
        if not keepdim:
            mean = np.squeeze(mean, axis=dims)
        if sqrt:
            var = np.sqrt(var)
        return _arr(var, dtype=out_dtype), _arr(mean, dtype=out_dtype)

    def vector_norm(self, x, p, dims, keepdim):
        """(sum |x|^p)^(1/p) over ``dims``; p = inf / -inf are max / min |x|, p = 0 counts
        the non-zeros."""
        a = np.abs(x)
        if p == math.inf:
            out = a.max(axis=dims, keepdims=keepdim)
        elif p == -math.inf:
            out = a.min(axis=dims, keepdims=keepdim)
        elif p == 0:
            out = (a != 0).sum(axis=dims, keepdims=keepdim)
        elif p == 1:
            out = a.sum(axis=dims, keepdims=keepdim)
        elif p == 2:
            out = np.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        else:
            out = (a ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)
        return _arr(out, dtype=x.dtype)

    def all(self, x, dims, keepdim):
        return _arr(np.all(x, axis=dims, keepdims=keepdim))

    def any(self, x, dims, keepdim):
        return _arr(np.any(x, axis=dims, keepdims=keepdim))

    def count_nonzero(self, x, dims):
        return _arr(np.count_nonzero(x, axis=dims), dtype=np.int64)

    def bincount(self, x, weights, minlength):
        """How often each value 0, 1, ... occurs in the 1-D int array ``x`` (summing
        ``weights`` instead of counting ones when given)."""
        return _arr(np.bincount(x, weights=weights, minlength=minlength))

    def histc(self, x, bins, lo, hi):
        """Counts of ``x`` in ``bins`` equal-width bins over [lo, hi] (lo < hi; values
        outside and nan are ignored; the last bin includes hi), in x's dtype.  The bin of
        a value is torch's: int((v - lo) * bins / (hi - lo)), in x's dtype."""
        inside = x[(x >= lo) & (x <= hi)].reshape(-1)
        pos = ((inside - x.dtype.type(lo)) * bins / (x.dtype.type(hi) - x.dtype.type(lo)))
        pos = np.minimum(pos.astype(np.int64), bins - 1)
        return _arr(np.bincount(pos, minlength=bins).astype(x.dtype))
