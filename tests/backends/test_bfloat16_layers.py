"""The Numba backend's bfloat16 ``matmul``, ``linear``, ``relu`` and ``relu_backward``
(``backends/numba_cpu/bfloat16_backend.py``, one kernel call each) against the numpy
reference (``backends/opmath.py``: widen to float32, compute, round once).

relu and relu_backward are integer tests on the bits: equal to the reference for all
65,536 bfloat16 patterns.  The product sums in another order than BLAS: where every
float32 sum is exact (small integers) it is the reference bit for bit; on random numbers
each element is the reference's or one bfloat16 unit from it.  A spy on the kernel loader
proves the kernels ran: a silent fall back would compare the reference with itself.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from learntorch.backends.numba_cpu import NumbaBackend, bfloat16_backend
from learntorch.backends.reference import NumpyBackend

import kernel_spy as spy
from oracle import noncontiguous

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
REFERENCE = NumpyBackend()
NUMBA = NumbaBackend()
ALL_PATTERNS = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(BFLOAT16)


def kernel_calls():
    """Record every kernel ``bfloat16_backend`` calls."""
    return spy.kernel_calls(bfloat16_backend)


def bits(a):
    return np.ascontiguousarray(a).view(np.uint16)


def units_apart(a, b):
    """How many bfloat16 steps separate a and b, elementwise (on the ordered bit line)."""
    def ordered(x):
        x = bits(x).astype(np.int32)
        return np.where(x & 0x8000, -(x & 0x7FFF), x)
    return np.abs(ordered(a) - ordered(b))


def test_relu_is_the_reference_on_every_bfloat16():
    with kernel_calls() as calls:
        got = NUMBA.relu(ALL_PATTERNS)
    assert calls == ["relu"]
    assert np.array_equal(bits(got), bits(REFERENCE.relu(ALL_PATTERNS)))


def test_relu_backward_is_the_reference_on_every_bfloat16_output():
    grad = np.random.default_rng(0).standard_normal(65536).astype(BFLOAT16)
    with kernel_calls() as calls:
        got = NUMBA.relu_backward(ALL_PATTERNS, grad)
    assert calls == ["relu_backward"]
    assert np.array_equal(bits(got), bits(REFERENCE.relu_backward(ALL_PATTERNS, grad)))


def _operands(draw, m, k, n, integers):
    rng = np.random.default_rng(m * 10_000 + k * 100 + n)
    if integers:  # every product and partial sum is an exact float32: order cannot matter
        make = lambda shape: rng.integers(-8, 9, shape).astype(BFLOAT16)
    else:
        make = lambda shape: rng.standard_normal(shape).astype(BFLOAT16)
    a = noncontiguous(draw, make((m, k)))
    # b as the backward reads it (a row-major matrix) or as linear does (a weight's transpose)
    b = make((k, n)) if draw(st.booleans()) else make((n, k)).T
    return a, noncontiguous(draw, b), make((n,))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), m=st.integers(0, 40), k=st.integers(0, 70), n=st.integers(0, 40))
def test_matmul_of_small_integers_is_the_reference_bit_for_bit(data, m, k, n):
    a, b, _ = _operands(data.draw, m, k, n, integers=True)
    with kernel_calls() as calls:
        got = NUMBA.matmul(a, b)
    assert calls == ["matmul"]
    expected = REFERENCE.matmul(a, b)
    assert got.dtype == expected.dtype == BFLOAT16 and got.shape == expected.shape
    assert np.array_equal(bits(got), bits(expected))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), m=st.integers(1, 40), k=st.integers(1, 70), n=st.integers(1, 40))
def test_matmul_is_within_one_bfloat16_unit_of_the_reference(data, m, k, n):
    a, b, _ = _operands(data.draw, m, k, n, integers=False)
    got = NUMBA.matmul(a, b)
    expected = REFERENCE.matmul(a, b)
    assert units_apart(got, expected).max() <= 1
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).astype(BFLOAT16)
    assert units_apart(got, exact).max() <= 1  # (both round a float32 sum once)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), rows=st.sampled_from([(), (1,), (5,), (2, 3)]), k=st.integers(1, 50),
       n=st.integers(1, 30), with_bias=st.booleans())
def test_linear_is_the_reference_bit_for_bit_on_small_integers(data, rows, k, n, with_bias):
    rng = np.random.default_rng(k * 100 + n)
    x = rng.integers(-8, 9, rows + (k,)).astype(BFLOAT16)
    weight = noncontiguous(data.draw, rng.integers(-8, 9, (n, k)).astype(BFLOAT16))
    bias = rng.integers(-8, 9, (n,)).astype(BFLOAT16) if with_bias else None
    with kernel_calls() as calls:
        got = NUMBA.linear(x, weight, bias)
    assert calls == ["matmul"]
    expected = REFERENCE.linear(x, weight, bias)
    assert got.shape == expected.shape == rows + (n,)
    assert np.array_equal(bits(got), bits(expected))


def test_special_values_follow_float32_arithmetic():
    """inf * 0 is NaN, inf + -inf is NaN, a sum past bfloat16's range is inf: what the
    reference's float32 product and rounding give."""
    big = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    a = np.array([[np.inf, 0.0], [big, big], [np.nan, 1.0], [-np.inf, np.inf]], BFLOAT16)
    b = np.array([[0.0, 1.0], [1.0, 1.0]], BFLOAT16)
    got = NUMBA.matmul(a, b)
    with np.errstate(over="ignore", invalid="ignore"):  # (numpy says what it computed)
        expected = REFERENCE.matmul(a, b)
    assert np.array_equal(bits(got), bits(expected))


def test_products_past_the_blas_size_and_other_operands_go_to_the_reference(monkeypatch):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s).astype(BFLOAT16) for s in ((8, 16), (16, 4)))
    monkeypatch.setattr(NumbaBackend, "_blas_from", 8 * 16 * 4)  # this size is BLAS's
    with kernel_calls() as calls:
        assert np.array_equal(bits(NUMBA.matmul(a, b)), bits(REFERENCE.matmul(a, b)))
        batched = np.stack([a, a])
        assert np.array_equal(bits(NUMBA.matmul(batched, b)), bits(REFERENCE.matmul(batched, b)))
        wide = a.astype(np.float32)  # float32: not the kernel's
        assert np.array_equal(NUMBA.relu(wide), REFERENCE.relu(wide))
    assert calls == []
    with pytest.raises(ValueError):  # shapes that do not multiply: the reference's error
        NUMBA.matmul(a, a)
