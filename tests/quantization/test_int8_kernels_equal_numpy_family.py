"""The Numba int8 kernels equal the numpy family methods they override, bit for bit (the same
operations in the same order: exact integer sums, one float32 quantize step, one rounding of
the dequantized sum), on hypothesis inputs of any size, zero point and scale."""
import numpy as np
from hypothesis import given, settings, strategies as st

from learntorch.backends import NumbaBackend
from learntorch.backends.numpy_families.quantized import QuantizedFamily

# every kernel serves every size here (the tuning table keeps tiny calls on numpy)
NUMBA = NumbaBackend(min_size=0)
NUMBA.layer_min_sizes = dict(NUMBA.layer_min_sizes, quantized_matmul=0, quantize_per_tensor=0,
                             dequantize_matmul=0)
NUMPY = QuantizedFamily()
dims = st.integers(1, 40)


def _codes(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape, dtype=dtype)


@settings(max_examples=40, deadline=None)
@given(m=dims, n=dims, k=dims, seed=st.integers(0, 2**16), unsigned=st.booleans(),
       a_zero=st.integers(0, 255), b_zero=st.integers(-128, 127))
def test_quantized_matmul_sums_exactly_as_the_reference(m, n, k, seed, unsigned, a_zero, b_zero):
    rng = np.random.default_rng(seed)
    a = _codes(rng, (m, k), np.uint8 if unsigned else np.int8)
    a_zero = a_zero if unsigned else a_zero - 128
    b = _codes(rng, (n, k), np.int8)
    got = NUMBA.quantized_matmul(a, a_zero, b, b_zero)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, NUMPY.quantized_matmul(a, a_zero, b, b_zero))


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 3000), seed=st.integers(0, 2**16),
       scale=st.floats(1e-4, 10.0), zero=st.integers(0, 255), unsigned=st.booleans(),
       specials=st.booleans())
def test_quantize_per_tensor_rounds_and_clamps_as_the_reference(size, seed, scale, zero, unsigned,
                                                                  specials):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size) * 300 * scale).astype(np.float32)
    if specials:  # exact halves of the grid, and values far beyond its ends
        x[: size // 2] = (np.round(x[: size // 2] / scale) + 0.5) * np.float32(scale)
        x[-1:] = np.float32(1e30)
    dtype, (low, high) = (np.uint8, (0, 255)) if unsigned else (np.int8, (-128, 127))
    zero = zero if unsigned else zero - 128
    got = NUMBA.quantize_per_tensor(x, scale, zero, low, high, dtype)
    np.testing.assert_array_equal(got, NUMPY.quantize_per_tensor(x, scale, zero, low, high, dtype))


@settings(max_examples=40, deadline=None)
@given(m=dims, n=dims, seed=st.integers(0, 2**16), a_scale=st.floats(1e-4, 1.0),
       per_channel=st.booleans(), with_bias=st.booleans())
def test_dequantize_matmul_rounds_once_as_the_reference(m, n, seed, a_scale, per_channel,
                                                        with_bias):
    rng = np.random.default_rng(seed)
    acc = rng.integers(-2**24, 2**24, (m, n), dtype=np.int32)
    b_scale = (rng.random(n).astype(np.float32) * 0.01 + 1e-4) if per_channel else 0.0123
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    got = NUMBA.dequantize_matmul(acc, a_scale, b_scale, bias)
    np.testing.assert_array_equal(got, NUMPY.dequantize_matmul(acc, a_scale, b_scale, bias))


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 3000), seed=st.integers(0, 2**16), exponent=st.integers(-45, 38),
       sign=st.sampled_from([-1, 1, 0]), special=st.sampled_from([None, np.inf, -np.inf, np.nan]))
def test_min_max_finds_the_range_as_the_reference(size, seed, exponent, sign, special):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size) * 10.0 ** exponent).astype(np.float32)  # subnormals too
    if sign:  # all of one sign: the integer order of negative floats is the reversed one
        x = np.abs(x) * np.float32(sign)
    if special is not None:
        x[rng.integers(size)] = special
    got, expected = NUMBA.min_max(x), NUMPY.min_max(x)
    for g, e in zip(got, expected):
        assert g.shape == () and g.dtype == np.float32
        assert g == e or (np.isnan(g) and np.isnan(e)), (got, expected)
