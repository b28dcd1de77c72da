"""float32 <-> bfloat16 conversion kernels: what autocast does to every weight, every step.

A bfloat16 is the top half of a float32: the same sign bit, the same 8 exponent bits and
the first 7 of the 23 mantissa bits.  So both conversions are integer arithmetic on the
bit patterns, and these kernels work on the arrays' bits (``uint32`` for float32,
``uint16`` for bfloat16 -- ``ndarray.view`` reinterprets without copying):

* widening, bfloat16 -> float32, is exact: the 16 bits move to the top, zeros below;
* narrowing, float32 -> bfloat16, rounds to nearest, ties to even: add ``0x7fff`` plus
  the lowest bit that is kept, then drop the low 16 bits.  A carry out of the mantissa
  moves into the exponent, which is right (the largest finite floats round up to inf);
  NaN is the one value where it is not (a NaN whose payload lives in the low bits would
  become inf or another bit pattern), so NaN becomes the quiet NaN ``0x7fc0`` with its
  sign, as ``ml_dtypes`` (Eigen's ``float_to_bfloat16_rtne``) does.

These replace ``ndarray.astype`` between float32 and ``ml_dtypes.bfloat16``
(``NumpyBackend.cast``), which converts through a per-element C++ function call:
measured ~3 ns per element for float32 -> bfloat16, against well under 1 ns here, on
the arrays of a small MLP (64 x 64 weights).  ``tests/backends/test_bfloat16_casts.py``
proves them bit for bit equal to ``ml_dtypes`` (NaN, inf, subnormals, rounding ties).

Contract: C-contiguous arrays of one shape (numba cannot type ``ml_dtypes.bfloat16``, so
the bfloat16 side is passed as its ``uint16`` bits); the last argument is the output,
which the kernel fills; element ``i`` of the input decides element ``i`` of ``out`` alone.

One thread, no ``prange``: a conversion moves 6 bytes per element and does two integer
operations, so it runs at memory speed on one core, and a parallel kernel costs ~3 us
per call even when it runs on one thread (measured on 64..4096 elements: 3.5 us against
0.6-1.6 us for this loop) -- more than the whole conversion of a small layer's weight.
"""
import numpy as np
from numba import njit

from . import bfloat16_bits as convert  # (a module: its functions are not kernels of this file)

_KERNEL = dict(cache=True)


@njit(**_KERNEL)
def float32_to_bfloat16(x, out):
    """``x``: float32; ``out``: bfloat16 bit patterns (uint16) of ``x`` rounded to nearest,
    ties to even; NaN -> quiet NaN of the same sign."""
    bits, rounded = x.reshape(x.size).view(np.uint32), out.reshape(out.size)
    for i in range(bits.size):
        rounded[i] = convert.round_to_bfloat16(bits[i])


@njit(**_KERNEL)
def bfloat16_to_float32(bits, out):
    """``bits``: bfloat16 bit patterns (uint16); ``out``: float32, the same numbers --
    exact, NaN payloads included."""
    halves, wide = bits.reshape(bits.size), out.reshape(out.size).view(np.uint32)
    for i in range(halves.size):
        wide[i] = convert.widen_bits(halves[i])
