"""Comparisons, truth values and bit operations, in numpy: bool arrays out (bitwise ops keep
their integer dtype), and ``where``, which picks between two arrays by a bool array.

Operands arrive in one dtype (the op promotes them first); a Python number stays a
number (numpy compares it exactly, without converting it to the array's dtype).
"""
import numpy as np


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


class Comparison:
    # ---- elementwise comparisons ----
    def eq(self, a, b):
        return _arr(np.equal(a, b))

    def ne(self, a, b):
        return _arr(np.not_equal(a, b))

    def lt(self, a, b):
        return _arr(np.less(a, b))

    def le(self, a, b):
        return _arr(np.less_equal(a, b))

    def gt(self, a, b):
        return _arr(np.greater(a, b))

    def ge(self, a, b):
        return _arr(np.greater_equal(a, b))

    def isclose(self, a, b, rtol, atol, equal_nan):
        """|a - b| <= atol + rtol * |b|; infinities are close only to themselves."""
        return _arr(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def array_equal(self, a, b):
        """One Python bool: same shape and the same values."""
        return bool(np.array_equal(a, b))

    # ---- classification ----
    def isnan(self, x):
        return _arr(np.isnan(x))

    def isinf(self, x):
        return _arr(np.isinf(x))

    def isfinite(self, x):
        return _arr(np.isfinite(x))

    def signbit(self, x):
        return _arr(np.signbit(x))

    # ---- truth values (nonzero is True) ----
    def logical_and(self, a, b):
        return _arr(np.logical_and(a, b))

    def logical_or(self, a, b):
        return _arr(np.logical_or(a, b))

    def logical_xor(self, a, b):
        return _arr(np.logical_xor(a, b))

    def logical_not(self, x):
        return _arr(np.logical_not(x))

    # ---- bits of integers and bools ----
    def bitwise_and(self, a, b):
        return _arr(np.bitwise_and(a, b))

    def bitwise_or(self, a, b):
        return _arr(np.bitwise_or(a, b))

    def bitwise_xor(self, a, b):
        return _arr(np.bitwise_xor(a, b))

    def bitwise_not(self, x):
        return _arr(np.invert(x))

    # ---- choosing ----
    def where(self, condition, a, b):
        """``a`` where ``condition`` is True, else ``b`` (all three broadcast together)."""
        return _arr(np.where(condition, a, b))
