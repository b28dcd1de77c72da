"""sort / argsort / topk on cuda (sort.py's bitonic sort per row) match the cpu.

The gpu's sort is stable.  The cpu's default (``stable=False``) replays torch's cpu sort,
whose order among ties beyond 16 elements is std::sort's (torch's cuda and cpu kernels
differ there too): rows with ties that long are compared with ``stable=True``."""
import numpy as np
import pytest

import learntorch
from cuda_compare import check, rand, same


def check_values_and_indices(fn, x):
    """``fn`` returns (values, indices): both, and the gradient through the values, as the cpu's."""
    results = {}
    for device in ("cpu", "cuda"):
        t = learntorch.tensor(x, device=device)
        if t.is_floating_point():
            t.requires_grad_()
        values, indices = fn(t)
        grad = None
        if t.requires_grad:
            upstream = np.random.default_rng(1).standard_normal(tuple(values.shape))
            values.backward(learntorch.tensor(upstream, dtype=values.dtype, device=device))
            grad = t.grad
        results[device] = (values, indices, grad)
    (v, i, g), (v_cpu, i_cpu, g_cpu) = results["cuda"], results["cpu"]
    same(v, v_cpu)
    same(i, i_cpu)
    assert i.dtype is learntorch.int64
    if g_cpu is not None:
        same(g, g_cpu)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
def test_sort_values_indices_and_gradient_along_a_dim(dim, descending):
    x = rand(3, 2, 6)  # 3 and 6 are padded to 4 and 8: the padding must sort last
    check_values_and_indices(lambda t: learntorch.sort(t, dim, descending), x)


def test_ties_keep_input_order_and_nan_sorts_as_the_largest():
    x = np.array([[1.0, np.nan, -0.0, 3.0, 0.0, 1.0, np.nan, -2.0, 1.0],
                  [2.0, 2.0, 2.0, np.inf, -np.inf, 2.0, 0.0, 0.0, 2.0]], np.float32)
    for descending in (False, True):
        check(lambda t: learntorch.argsort(t, 1, descending), x, grad=False)


def test_integer_bool_and_float64_rows_and_a_row_of_1024():
    rng = np.random.default_rng(5)
    check(lambda t: learntorch.argsort(t, stable=True), rng.integers(-5, 5, (2, 33)),
          grad=False)
    check_values_and_indices(lambda t: learntorch.sort(t), rng.random((2, 9)) > 0.5)
    check(lambda t: learntorch.sort(t, descending=True).values, rand(2, 20, dtype=np.float64))
    # the longest row one block sorts (1024 = P, no padding); few ties among 1024 floats
    check(lambda t: learntorch.argsort(t), rand(1, 1024), grad=False)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_values_indices_and_gradient(largest):
    check_values_and_indices(lambda t: learntorch.topk(t, 3, dim=0, largest=largest),
                             rand(5, 4))


def _ties_and_nans(shape, dtype=np.float32, seed=7):
    """Small integers (many ties) with a NaN every 7th element: the order rules all matter."""
    x = np.random.default_rng(seed).integers(-20, 20, shape).astype(dtype)
    x.reshape(-1)[::7] = np.nan
    return x


# rows longer than MAX_ROW (1024) are sorted in global memory, one launch per network step;
# the simulator is slow, so the rows stay just past the limit (1025 pads to 2048) or a few
# thousand (3000 pads to 4096)
@pytest.mark.parametrize("descending", [False, True])
def test_rows_longer_than_one_block_sort_in_global_memory_as_the_cpu(descending):
    x = _ties_and_nans((2, 1025))
    check_values_and_indices(lambda t: learntorch.sort(t, -1, descending, stable=True), x)


def test_topk_of_a_row_of_3000_matches_the_cpu():
    # largest=True sorts descending (the flipped row).  The values are the cpu's; among
    # equal values each device picks its own indices (the cpu replays torch's cpu kernel,
    # the gpu takes its sort's order -- torch's cuda and cpu kernels differ there too), so
    # each index must hold its value and the gradient must land on the indices picked
    x = _ties_and_nans((3000,), np.float64)
    t = learntorch.tensor(x, device="cuda", requires_grad=True)
    values, indices = learntorch.topk(t, 5)
    same(values, learntorch.topk(learntorch.tensor(x), 5).values)
    picked = x[indices.cpu().numpy()]
    np.testing.assert_array_equal(picked, values.detach().cpu().numpy())
    upstream = np.arange(1.0, 6.0)
    values.backward(learntorch.tensor(upstream, device="cuda"))
    expected = np.zeros_like(x)
    np.add.at(expected, indices.cpu().numpy(), upstream)
    np.testing.assert_array_equal(t.grad.cpu().numpy(), expected)


def test_long_integer_rows_along_a_leading_dim():
    # dim 0 of (1025, 2): the sorted axis is moved last (two rows of 1025) and back
    x = np.random.default_rng(3).integers(-3, 3, (1025, 2))
    check(lambda t: learntorch.argsort(t, 0, stable=True), x, grad=False)
