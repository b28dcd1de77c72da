"""quantize_per_tensor / dequantize against torch 2.13: the same codes (round half to even,
clamping, NaN and infinities), the same float values back, the same errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import learntorch
from oracle import require_torch

DTYPES = ["qint8", "quint8", "qint32"]
RANGES = {"qint8": (-128, 127), "quint8": (0, 255), "qint32": (-2 ** 31, 2 ** 31 - 1)}


def both(x, scale, zero_point, dtype):
    torch = require_torch()
    ours = learntorch.quantize_per_tensor(learntorch.from_numpy(x), scale, zero_point,
                                          getattr(learntorch, dtype))
    theirs = torch.quantize_per_tensor(torch.from_numpy(np.ascontiguousarray(x)), scale,
                                       zero_point, getattr(torch, dtype))
    return ours, theirs


def assert_same(ours, theirs):
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    assert ours.int_repr().dtype.name == str(theirs.int_repr().dtype).removeprefix("torch.")


# (the backend fixture only chooses the backend: sharing it between examples is safe)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(DTYPES),
       scale=st.floats(1e-3, 10.0), spread=st.sampled_from([0.1, 1.0, 50.0, 1000.0]),
       shape=st.sampled_from([(7,), (3, 5), (2, 3, 4), (), (0, 3)]),
       transposed=st.booleans())
def test_codes_and_values_equal_torchs(quantized_backend, seed, dtype, scale, spread, shape,
                                       transposed):
    low, high = RANGES[dtype]
    rng = np.random.default_rng(seed)
    zero_point = int(rng.integers(max(low, -200), min(high, 200) + 1))
    x = np.asarray(rng.standard_normal(shape) * spread, dtype=np.float32)
    if transposed and x.ndim >= 2:
        x = np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)  # strided input
    assert_same(*both(x, scale, zero_point, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_exact_halves_round_to_even_after_the_zero_point_is_added_as_torch(
        quantized_backend, dtype):
    # x / 0.5 lands on k + 0.5 exactly; torch adds the (odd) zero point -3 first and rounds
    # the sum half to even: 0.5 - 3 = -2.5 -> -2, 1.5 - 3 = -1.5 -> -2, 2.5 - 3 -> 0, ...
    x = np.array([0.25, 0.75, 1.25, 1.75, -0.25, -0.75, -1.25], np.float32)
    zero_point = 3 if dtype == "quint8" else -3
    ours, theirs = both(x, 0.5, zero_point, dtype)
    assert_same(ours, theirs)
    expected = {-3: [-2, -2, 0, 0, -4, -4, -6], 3: [4, 4, 6, 6, 2, 2, 0]}[zero_point]
    assert ours.int_repr().tolist() == expected


@pytest.mark.parametrize("dtype", ["qint8", "quint8"])
def test_values_beyond_the_range_are_clamped_and_nan_becomes_the_top_code(
        quantized_backend, dtype):
    x = np.array([1e6, -1e6, np.inf, -np.inf, np.nan, 0.0], np.float32)
    ours, theirs = both(x, 0.1, 5, dtype)
    assert_same(ours, theirs)
    low, high = RANGES[dtype]
    assert ours.int_repr().tolist() == [high, low, high, low, high, 5]


def test_a_scale_given_as_a_float32_tensor_is_that_float32_number():
    torch = require_torch()
    x = np.linspace(-2, 2, 11, dtype=np.float32)
    ours = learntorch.quantize_per_tensor(learntorch.from_numpy(x), learntorch.tensor(0.1),
                                          learntorch.tensor(2), learntorch.qint8)
    theirs = torch.quantize_per_tensor(torch.from_numpy(x), torch.tensor(0.1),
                                       torch.tensor(2), torch.qint8)
    assert ours.q_scale() == theirs.q_scale() == float(np.float32(0.1))
    assert_same(ours, theirs)


def test_a_list_of_tensors_gives_a_tuple_as_torch():
    torch = require_torch()
    xs = [np.arange(4, dtype=np.float32), -np.arange(3, dtype=np.float32)]
    ours = learntorch.quantize_per_tensor([learntorch.from_numpy(x) for x in xs],
                                          learntorch.tensor([0.5, 0.25]),
                                          learntorch.tensor([0, 1]), learntorch.quint8)
    theirs = torch.quantize_per_tensor([torch.from_numpy(x) for x in xs],
                                       torch.tensor([0.5, 0.25]), torch.tensor([0, 1]),
                                       torch.quint8)
    assert isinstance(ours, tuple) and len(ours) == len(theirs) == 2
    for mine, other in zip(ours, theirs):
        assert_same(mine, other)
    assert all(isinstance(t, learntorch.Tensor) for t in learntorch.dequantize(list(ours)))


@pytest.mark.parametrize("call, error, message", [
    (lambda lt: lt.quantize_per_tensor(lt.ones(3, dtype=lt.float64), 0.1, 0, lt.qint8),
     RuntimeError, "Quantize only works on Float Tensor"),
    (lambda lt: lt.quantize_per_tensor(lt.arange(3), 0.1, 0, lt.qint8),
     RuntimeError, "Quantize only works on Float Tensor"),
    (lambda lt: lt.quantize_per_tensor(lt.ones(3), 0.1, 200, lt.qint8),
     RuntimeError, "zero_point 200 is above upper bound"),
    (lambda lt: lt.quantize_per_tensor(lt.ones(3), 0.1, -1, lt.quint8),
     RuntimeError, "zero_point -1 is below lower bound"),
    (lambda lt: lt.quantize_per_tensor(lt.ones(3), 0.1, 0, lt.float32),
     RuntimeError, "not supported in new_qtensor"),
])
def test_errors_are_torchs(call, error, message):
    torch = require_torch()
    with pytest.raises(error, match=message):
        call(learntorch)
    with pytest.raises(error, match=message):
        call(torch)
