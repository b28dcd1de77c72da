"""quantize_per_channel against torch 2.13: a scale and zero point per index of one dim
give the same codes, values, stored parameters (float64 scales, int64 zero points) and
errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import learntorch
from oracle import require_torch


def both(x, scales, zero_points, axis, dtype):
    torch = require_torch()
    ours = learntorch.quantize_per_channel(
        learntorch.from_numpy(x), learntorch.from_numpy(scales.copy()),
        learntorch.from_numpy(zero_points.copy()), axis, getattr(learntorch, dtype))
    theirs = torch.quantize_per_channel(
        torch.from_numpy(x.copy()), torch.from_numpy(scales.copy()),
        torch.from_numpy(zero_points.copy()), axis, getattr(torch, dtype))
    return ours, theirs


# (the backend fixture only chooses the backend: sharing it between examples is safe)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(["qint8", "quint8"]),
       shape=st.sampled_from([(4, 6), (3, 2, 5), (5,)]), data=st.data(),
       scale_dtype=st.sampled_from([np.float32, np.float64]))
def test_codes_values_and_parameters_equal_torchs(quantized_backend, seed, dtype, shape, data,
                                                  scale_dtype):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(0, len(shape) - 1))
    channels = shape[axis]
    x = (rng.standard_normal(shape) * rng.uniform(0.1, 20)).astype(np.float32)
    scales = rng.uniform(0.01, 0.5, channels).astype(scale_dtype)
    low = 0 if dtype == "quint8" else -20
    zero_points = rng.integers(low, low + 40, channels).astype(np.int64)
    ours, theirs = both(x, scales, zero_points, axis, dtype)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    for mine, other in ((ours.q_per_channel_scales(), theirs.q_per_channel_scales()),
                        (ours.q_per_channel_zero_points(), theirs.q_per_channel_zero_points())):
        np.testing.assert_array_equal(mine.numpy(), other.numpy())
        assert mine.dtype.name == str(other.dtype).removeprefix("torch.")
    assert ours.q_per_channel_axis() == theirs.q_per_channel_axis() == axis
    assert ours.qscheme() is learntorch.per_channel_affine


def test_each_channel_gets_its_own_grid():
    # row 0 is tiny, row 1 large: one scale each keeps row 0's detail
    x = learntorch.tensor([[0.01, -0.02, 0.03], [10.0, -20.0, 30.0]])
    q = learntorch.quantize_per_channel(x, learntorch.tensor([0.03 / 127, 30.0 / 127]),
                                        learntorch.tensor([0, 0]), 0, learntorch.qint8)
    assert q.int_repr().tolist() == [[42, -85, 127], [42, -85, 127]]
    np.testing.assert_allclose(q.dequantize().numpy(), x.numpy(), rtol=0.02)


@pytest.mark.parametrize("axis, scales, zero_points, message", [
    (0, [0.1, 0.2, 0.3], [0, 1, 2], "length of scales must equal to channel, expected 4 got, 3"),
    (1, [0.1, 0.2, 0.3], [0, 1], "number of elements in scales and zero_points must match"),
    (2, [0.1, 0.2, 0.3], [0, 1, 2], r"Channel axis out of range .* Got: 2Expected: \[0, 2\)"),
    (-1, [0.1, 0.2, 0.3], [0, 1, 2], r"Channel axis out of range .* Got: -1Expected"),
    (1, [0.1, 0.2, 0.3], [0, 1, 300], "zero_point 300 is above upper bound"),
])
def test_errors_are_torchs(axis, scales, zero_points, message):
    torch = require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(RuntimeError, match=message):
            lib.quantize_per_channel(lib.zeros(4, 3), lib.tensor(scales), lib.tensor(zero_points),
                                     axis, lib.qint8)


def test_scales_given_as_a_list_is_a_type_error_as_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(TypeError, match="argument 'scales' .* must be Tensor, not list"):
            lib.quantize_per_channel(lib.zeros(4, 3), [0.1, 0.2, 0.3], lib.tensor([0, 1, 2]), 1,
                                     lib.qint8)
