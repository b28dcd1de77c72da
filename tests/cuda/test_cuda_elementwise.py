"""Elementwise ops on cuda match the cpu: forward and gradient, broadcast and strided inputs."""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from cuda_compare import check, rand

BINARY = {
    "add": lambda a, b: a + b,
    "sub_alpha": lambda a, b: learntorch.sub(a, b, alpha=2),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a.abs() ** b,
    "maximum": learntorch.maximum,
    "minimum": learntorch.minimum,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op_broadcasts_like_the_cpu(name):
    # (3, 1) against (4,): both operands are broadcast, so the gradients must be summed back
    check(BINARY[name], rand(3, 1), rand(4, seed=1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["add", "mul", "div"])
def test_binary_op_on_transposed_and_sliced_views(name):
    check(lambda a, b: BINARY[name](a.t(), b[::2]), rand(5, 4), rand(8, 5, seed=1), rtol=1e-5)


UNARY = {
    "neg": lambda x: -x, "exp": learntorch.exp, "log": lambda x: x.abs().log(),
    "sqrt": lambda x: x.abs().sqrt(), "tanh": learntorch.tanh, "sigmoid": learntorch.sigmoid,
    "relu": F.relu, "gelu": F.gelu, "silu": F.silu, "abs": learntorch.abs,
    "sin": learntorch.sin, "cos": learntorch.cos, "square": learntorch.square,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1), "clamp": lambda x: x.clamp(-0.5, 0.5),
    "reciprocal": lambda x: (x.abs() + 1).reciprocal(), "log1p": lambda x: x.abs().log1p(),
    "scalar_chain": lambda x: (2 - x) * 0.5 + x / 3,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_op_and_its_gradient(name):
    # 70 elements: more than one block of the simulator's 32 threads, on a strided view
    check(lambda x: UNARY[name](x[:, 1:]), rand(7, 11), rtol=1e-5, atol=1e-6)


def test_comparisons_give_bool_tensors_on_cuda():
    a, b = rand(4, 3), rand(3, seed=1)
    for op in (lambda x, y: x > y, lambda x, y: x <= y, lambda x, y: x == x, lambda x, y: x != y):
        out = check(op, a, b, grad=False)
        assert out.dtype is learntorch.bool


def test_where_selects_on_the_device_and_routes_gradients():
    check(lambda x, y: learntorch.where(x > 0, x, y * 2), rand(4, 5), rand(5, seed=1))


def test_integer_and_float64_dtypes_keep_their_type():
    ints = np.arange(12).reshape(3, 4)
    check(lambda x: x * 3 + 1, ints, grad=False)
    check(lambda x: x // 2, ints, grad=False)
    check(lambda x: x.exp() * x, rand(3, 4, dtype=np.float64), rtol=1e-12, atol=0)


def test_inplace_ops_write_into_device_memory_and_views():
    for device_result in [None]:
        x_cpu, x_cuda = (learntorch.tensor(rand(3, 4), device=d) for d in ("cpu", "cuda"))
        for x in (x_cpu, x_cuda):
            x[:, 1].mul_(10)
            x.add_(1).clamp_(max=5.0)
        np.testing.assert_allclose(x_cuda.cpu().numpy(), x_cpu.numpy(), rtol=1e-6)
        assert device_result is None


def test_float_nan_and_inf_are_results_not_errors():
    x = learntorch.tensor([0.0, -1.0, 1000.0], device="cuda")
    assert x.log().cpu().tolist()[0] == float("-inf")
    assert np.isnan(x.sqrt().cpu().tolist()[1])
    assert x.exp().cpu().tolist()[2] == float("inf")
