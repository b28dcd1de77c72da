"""The float32 <-> bfloat16 conversion kernels are ``ml_dtypes``' conversion, bit for bit.

``NumpyBackend.cast`` (``ndarray.astype`` through ``ml_dtypes``) is the oracle; the Numba
backend's ``cast`` (``backends/numba_cpu/cast_backend.py``) must give the same bits for
every float32 -- round to nearest with ties to even, the carry into the exponent (the
largest finite floats round to inf), subnormals, signed zeros, inf, and NaN of either
sign with any payload (a quiet NaN of the same sign) -- and the same bfloat16 -> float32
widening for all 65536 bfloat16 patterns.  A spy on the kernel loader proves the kernel
ran: a silent fall back to ``astype`` would compare ml_dtypes with itself.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from learntorch.backends.numba_cpu import NumbaBackend
from learntorch.backends.numba_cpu import cast_backend
from learntorch.backends.reference import NumpyBackend

import kernel_spy as spy

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT32 = np.dtype(np.float32)
REFERENCE = NumpyBackend()
NUMBA = NumbaBackend(min_size=0)


def kernel_calls():
    """Record every kernel ``cast_backend`` calls."""
    return spy.kernel_calls(cast_backend)


def bits(a):
    """The array's bit patterns (NaN compared by its bits, so payload and sign count)."""
    return np.ascontiguousarray(a).view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def assert_same_cast(a, dtype):
    with kernel_calls() as calls:
        got = NUMBA.cast(a, dtype)
    with np.errstate(invalid="ignore"):  # (astype warns of NaN; the kernel does not)
        expected = REFERENCE.cast(a, dtype)
    assert calls, "the Numba backend fell back to astype: nothing was compared"
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.flags.c_contiguous == expected.flags.c_contiguous  # astype keeps the layout
    np.testing.assert_array_equal(bits(got), bits(expected))


def float32_of_bits(patterns):
    return np.asarray(patterns, dtype=np.uint32).view(np.float32)


# the edges of rounding: ties (low half exactly 0x8000) with an even and an odd kept bit,
# one below and above a tie, the largest finite float (rounds to inf), subnormals, zeros,
# infinities, quiet and signalling NaN of both signs with payloads only in the low bits
EDGES = [0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000,
         0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x80000001, 0x807FFFFF, 0x00000000,
         0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,
         0x7F80FFFF, 0x7FBFFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 0x3F800000, 0xBF7FFFFF]


def test_float32_to_bfloat16_edges_bit_for_bit():
    assert_same_cast(float32_of_bits(EDGES), BFLOAT16)


def test_every_bfloat16_widens_bit_for_bit():
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BFLOAT16)
    assert_same_cast(every, FLOAT32)


@given(st.lists(st.integers(0, (1 << 32) - 1), min_size=1, max_size=64))
def test_float32_to_bfloat16_any_bits(patterns):
    assert_same_cast(float32_of_bits(patterns), BFLOAT16)


@given(hnp.array_shapes(min_dims=0, max_dims=4, max_side=5), st.booleans(), st.data())
def test_layouts_kept(shape, transposed, data):
    """n-d arrays, 0-d ones and transposed (F-contiguous) ones, in both directions."""
    x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(width=32)))
    if transposed:
        x = x.T
    assert_same_cast(x, BFLOAT16)
    assert_same_cast(REFERENCE.cast(x, BFLOAT16), FLOAT32)


def test_strided_and_small_arrays_go_to_the_reference():
    """Neither C- nor F-contiguous, or below the size threshold: ``astype``'s answer."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    with kernel_calls() as calls:
        got = NUMBA.cast(x, BFLOAT16)
        small = NumbaBackend(min_sizes={"to_bfloat16": 10}).cast(np.ones(9, np.float32),
                                                                  BFLOAT16)
    assert calls == []
    np.testing.assert_array_equal(bits(got), bits(x.astype(BFLOAT16)))
    assert small.dtype == BFLOAT16


@pytest.mark.parametrize("source, target", [(np.float32, np.float16), (BFLOAT16, np.int32),
                                            (np.float64, BFLOAT16)])
def test_other_casts_are_the_reference(source, target):
    x = np.array([-7.5, 2.5, 300.0], dtype=source)
    with kernel_calls() as calls:
        got = NUMBA.cast(x, np.dtype(target))
    assert calls == []
    np.testing.assert_array_equal(got, REFERENCE.cast(x, np.dtype(target)))
