"""The two conversions between float32 and bfloat16 on one number's bits, as Numba
functions that a kernel's loop inlines (``bfloat16_casts.py`` explains the arithmetic):
the conversion kernels and the bfloat16 layer kernels (``bfloat16_layers.py``) share them.
"""
import numpy as np
from numba import njit

_ABS = np.uint32(0x7FFFFFFF)
_INF = np.uint32(0x7F800000)
_SIGN16 = np.uint32(0x8000)
_QUIET_NAN16 = np.uint32(0x7FC0)
_HALF_MINUS_ONE = np.uint32(0x7FFF)
_SIXTEEN = np.uint32(16)
_ONE = np.uint32(1)


@njit(cache=True, inline="always")
def round_to_bfloat16(b):
    """The bfloat16 bit pattern (in a uint32) of the float32 whose bits are ``b``: rounded to
    nearest, ties to even; NaN -> quiet NaN of the same sign.  (The conversion kernels
    and the bfloat16 matrix product, ``bfloat16_layers.py``, round with it.)"""
    if b & _ABS > _INF:  # NaN: exponent all ones and a nonzero mantissa
        return ((b >> _SIXTEEN) & _SIGN16) | _QUIET_NAN16
    return (b + _HALF_MINUS_ONE + ((b >> _SIXTEEN) & _ONE)) >> _SIXTEEN


@njit(cache=True, inline="always")
def widen_bits(half):
    """The float32 bit pattern (a uint32) of the bfloat16 whose bits are ``half``: exact."""
    return np.uint32(half) << _SIXTEEN
