"""The fuzz runner's comparison: a float64 result is held to float64 precision unless a
float32 (or float16) tensor fed it, whose last-bit differences it then carries."""
import numpy as np
import pytest

import learntorch

torch = pytest.importorskip("torch", reason="the fuzz runner compares with PyTorch")

from fuzz_runner import Failed, _least_precise, _same_value, run  # noqa: E402


def pair(values, other):
    return learntorch.tensor(values, dtype=learntorch.float64), torch.tensor(other,
                                                                              dtype=torch.float64)


def test_a_float64_difference_in_the_eighth_digit_is_a_wrong_value():
    lt, th = pair([0.15742066502571106], [0.15742067992687225])
    with pytest.raises(Failed, match="value"):
        _same_value(lt, th, "step")
    with pytest.raises(Failed, match="value"):
        _same_value(lt, th, "step", operands="float64")


def test_it_is_float32_rounding_when_a_float32_tensor_fed_the_step():
    lt, th = pair([0.15742066502571106], [0.15742067992687225])
    _same_value(lt, th, "step", operands="float32")
    far_lt, far_th = pair([0.1574], [0.1575])
    with pytest.raises(Failed, match="value"):  # float32 precision still catches real errors
        _same_value(far_lt, far_th, "step", operands="float32")


def test_least_precise_reads_tensors_and_names():
    assert _least_precise([learntorch.ones(1, dtype=learntorch.float64),
                           torch.ones(1, dtype=torch.float32)]) == "float32"
    assert _least_precise(["float64", None, "float16"]) == "float16"
    assert _least_precise([learntorch.ones(1, dtype=learntorch.int64)]) is None


def test_the_program_the_long_run_found_agrees():
    """Seed 23: x64 * softmax(x32, 0): torch's float32 softmax differs in the last bit."""
    program = {"area": "autograd", "inputs": [
        {"dtype": "float64", "shape": (2, 3), "values": np.array([[-0.0, 0.5, 2.0],
                                                                    [-2.0, 1.1, 0.0]]),
         "layout": "contiguous", "requires_grad": True},
        {"dtype": "float32", "shape": (2, 3),
         "values": np.array([[0.0, -0.0, 0.44], [2.0, 0.0, 2.9]], dtype=np.float32),
         "layout": "strided", "requires_grad": True}],
        "steps": [{"op": "softmax", "operands": [3], "param": 0},
                  {"op": "mul", "operands": [3, 5], "param": None},
                  {"op": "quantile", "operands": [0], "param": None}]}
    assert run(program) is None
