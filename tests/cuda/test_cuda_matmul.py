"""The tiled matmul kernel: any shape (ragged tile edges), batched, broadcast, with gradients."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
from cuda_compare import check, rand, same


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (5, 7, 3), (9, 4, 10), (8, 8, 8)])
def test_matrix_product_with_ragged_tile_edges(m, k, n):
    # tiles are 4 x 4 in the simulator: none of these sizes is a multiple of it but 8
    check(lambda a, b: a @ b, rand(m, k), rand(k, n, seed=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3, 5), (2, 5, 4)), ((2, 3, 5), (5, 4)),
                                             ((3, 1, 2, 5), (4, 5, 3)), ((5,), (5, 3)),
                                             ((3, 5), (5,)), ((5,), (5,))])
def test_batched_broadcast_and_vector_products(a_shape, b_shape):
    check(lambda a, b: learntorch.matmul(a, b), rand(*a_shape), rand(*b_shape, seed=1),
          rtol=1e-5, atol=1e-5)


def test_transposed_operands_and_float64():
    check(lambda a, b: a.t() @ b.t(), rand(6, 5), rand(3, 6, seed=1), rtol=1e-5, atol=1e-5)
    check(lambda a, b: a @ b, rand(4, 6, dtype=np.float64), rand(6, 2, dtype=np.float64, seed=1),
          rtol=1e-12, atol=1e-12)


def test_linear_layer_forward_and_backward_on_cuda():
    learntorch.manual_seed(0)
    cpu_layer = nn.Linear(6, 3)
    cuda_layer = nn.Linear(6, 3)
    cuda_layer.load_state_dict(cpu_layer.state_dict())
    cuda_layer.to("cuda")
    assert cuda_layer.weight.device.type == "cuda" and cuda_layer.weight.is_leaf
    x = rand(4, 6)
    outs = []
    for layer, device in ((cpu_layer, "cpu"), (cuda_layer, "cuda")):
        y = layer(learntorch.tensor(x, device=device))
        (y * y).sum().backward()
        outs.append((y, layer.weight.grad, layer.bias.grad))
    for got, want in zip(outs[1], outs[0]):
        same(got, want, rtol=1e-5, atol=1e-5)


def test_mismatched_inner_dims_raise_like_the_cpu():
    a, b = learntorch.ones(2, 3, device="cuda"), learntorch.ones(4, 2, device="cuda")
    with pytest.raises(RuntimeError) as cuda_error:
        a @ b
    with pytest.raises(RuntimeError) as cpu_error:
        a.cpu() @ b.cpu()
    assert str(cuda_error.value) == str(cpu_error.value)
