"""Running totals along one dim, in numpy: cumsum, cumprod, and the running max / min with the
index where each was reached.  ``dim`` is a valid dim of a non-0-d array."""
import numpy as np


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


# float16 running totals are kept in float32 and each output rounded once, as torch's CPU
# kernel (its "opmath" type); numpy's own float16 cumsum rounds every partial sum, so a long
# one stalls (0.1 added 10000 times stops at 256).  bfloat16 gets the same through opmath.py.
_RUNNING_DTYPES = {np.dtype(np.float16): np.float32}


class Cumulative:
    def cumsum(self, x, dim):
        running = _RUNNING_DTYPES.get(x.dtype, x.dtype)
        return _arr(np.cumsum(x, axis=dim, dtype=running).astype(x.dtype, copy=False))

    def cumprod(self, x, dim):
        running = _RUNNING_DTYPES.get(x.dtype, x.dtype)
        return _arr(np.cumprod(x, axis=dim, dtype=running).astype(x.dtype, copy=False))

    def cummax(self, x, dim):
        """(values, int64 indices): the largest element so far and the last index where
        it occurred (ties move the index on); a NaN is larger than anything, as in
        torch's kernel, whose loop is replayed here one position at a time."""
        return self._running_extreme(x, dim, np.greater_equal)

    def cummin(self, x, dim):
        return self._running_extreme(x, dim, np.less_equal)

    @staticmethod
    def _running_extreme(x, dim, better_or_equal):
        if x.size == 0:
            return x.copy(), np.zeros(x.shape, np.int64)
        moved = np.moveaxis(x, dim, 0)
        values = np.empty(moved.shape, x.dtype)
        indices = np.empty(moved.shape, np.int64)
        floating = x.dtype.kind == "f"
        best, where = moved[0].copy(), np.zeros(moved.shape[1:], np.int64)
        for i in range(moved.shape[0]):
            v = moved[i]
            if floating:
                take = np.isnan(v) | (~np.isnan(best) & better_or_equal(v, best))
            else:
                take = better_or_equal(v, best)
            best = np.where(take, v, best)
            where = np.where(take, i, where)
            values[i], indices[i] = best, where
        return _arr(np.moveaxis(values, 0, dim)), _arr(np.moveaxis(indices, 0, dim))
