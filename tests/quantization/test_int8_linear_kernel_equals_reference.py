"""The Numba backend's ``quantized_linear`` (``int8_linear.py``: the weight packed once into
register tiles, ``vpdpbusd``, quantize and dequantize fused) equals the reference's three
steps (``QuantizedFamily.quantized_linear``) bit for bit, on hypothesis shapes: K not a
multiple of 4, N not a multiple of 16, M not a multiple of 4 (batch 1 included), any zero
points, the extreme codes, NaN and huge inputs, with and without a bias, on one thread
and on the parallel kernel."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from learntorch.backends import NumbaBackend
from learntorch.backends.numba_cpu.loader import kernels
from learntorch.backends.numpy_families.quantized import QuantizedFamily

NUMBA = NumbaBackend(min_size=0)
NUMBA.layer_min_sizes = dict(NUMBA.layer_min_sizes, quantized_matmul=0, quantize_per_tensor=0,
                             dequantize_matmul=0)
NUMPY = QuantizedFamily()
linear = kernels("int8_linear")
needs_vnni = pytest.mark.skipif(not linear.vnni_available(),
                                reason="the register-tile kernel needs AVX-512 VNNI; other "
                                       "CPUs run the reference steps' kernels")


def _case(seed, m, k, n, extremes, specials, scale):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, k)) * 100 * scale).astype(np.float32)
    weight = rng.integers(-128, 128, (n, k), dtype=np.int8)
    if extremes:  # every code at an end of its range: the largest products
        weight[:] = np.where(rng.random((n, k)) < 0.5, -128, 127)
        x[:] = np.where(rng.random((m, k)) < 0.5, np.float32(1e30), np.float32(-1e30))
    if specials:
        x.flat[:: 7] = np.nan
    return x, weight


@needs_vnni
@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 13), k=st.integers(1, 70), n=st.integers(1, 40),
       seed=st.integers(0, 2**16), zero_point=st.integers(0, 255), reduce_range=st.booleans(),
       weight_zero_point=st.sampled_from([0, 0, 1, -128, 127]), extremes=st.booleans(),
       specials=st.booleans(), with_bias=st.booleans(), per_channel=st.booleans(),
       scale=st.floats(1e-3, 10.0))
def test_quantized_linear_equals_the_three_reference_steps(m, k, n, seed, zero_point,
                                                           reduce_range, weight_zero_point,
                                                           extremes, specials, with_bias,
                                                           per_channel, scale):
    x, weight = _case(seed, m, k, n, extremes, specials, scale)
    quant_max = 127 if reduce_range else 255
    zero_point = min(zero_point, quant_max)
    rng = np.random.default_rng(seed + 1)
    weight_scale = (rng.random(n).astype(np.float32) * 0.01 + 1e-4) if per_channel else 0.0123
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    packed = NUMBA.pack_quantized_weight(weight)
    assert type(packed).__name__ == "PackedInt8Weight"  # the tile kernel, not a fallback
    expected = NUMPY.quantized_linear(x, scale, zero_point, quant_max, weight, weight_scale,
                                      weight_zero_point, bias)
    got = NUMBA.quantized_linear(x, scale, zero_point, quant_max, packed, weight_scale,
                                 weight_zero_point, bias)
    np.testing.assert_array_equal(got, expected)
    # the parallel kernel, called as the backend calls it on a large batch
    out = np.empty((m, n), np.float32)
    linear.quantized_linear_rows_parallel(
        x, scale, zero_point, quant_max, packed.tiles, n, weight_zero_point,
        packed.column_sums, packed.weight_scales(weight_scale),
        packed.no_bias if bias is None else bias, out)
    np.testing.assert_array_equal(out, expected)


@needs_vnni
def test_packed_tiles_hold_the_codes_in_vpdpbusd_order():
    codes = np.arange(-60, 60, dtype=np.int8).reshape(20, 6)  # N=20, K=6: both padded
    tiles, column_sums = linear.pack_weight_tiles(codes)
    assert tiles.shape == (2, 2, 64) and tiles.dtype == np.int8
    for j in range(20):
        for p in range(6):
            assert tiles[j // 16, p // 4, 4 * (j % 16) + p % 4] == codes[j, p]
    assert not tiles[1, :, 4 * 4:].any() and not tiles[:, 1, 2::4].any()  # zero padding
    np.testing.assert_array_equal(column_sums, codes.astype(np.int64).sum(axis=1))


def test_weights_the_kernel_cannot_read_stay_codes_and_take_the_reference_steps():
    weight = np.arange(15, dtype=np.int8).reshape(3, 5)
    assert NUMPY.pack_quantized_weight(weight) is weight
    strided = np.arange(15, dtype=np.int8).reshape(5, 3).T  # not C-contiguous
    assert NUMBA.pack_quantized_weight(strided) is strided
    x = np.linspace(-2, 3, 20, dtype=np.float32).reshape(4, 5)
    np.testing.assert_array_equal(
        NUMBA.quantized_linear(x, 0.02, 100, 255, strided, 0.5, 0, None),
        NUMPY.quantized_linear(x, 0.02, 100, 255, strided, 0.5, 0, None))
