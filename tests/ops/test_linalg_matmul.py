"""matmul / @ in every case torch defines, and mm, bmm, dot, outer: forward and gradients.

Operands come from the ``arrays`` strategy, so they are often transposed or
strided views; broadcast batch dimensions check that the engine sums the
gradients back over them.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)


@st.composite
def matmul_operands(draw):
    """Two arrays whose shapes torch.matmul accepts: any ranks 1..4, batch dims broadcasting."""
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    rank_a, rank_b = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    batch_a, batch_b = batch.input_shapes
    shape_a = (k,) if rank_a == 1 else tuple(batch_a[len(batch_a) - (rank_a - 2):]) + (n, k) \
        if rank_a > 2 else (n, k)
    shape_b = (k,) if rank_b == 1 else tuple(batch_b[len(batch_b) - (rank_b - 2):]) + (k, m) \
        if rank_b > 2 else (k, m)
    return draw(arrays(shape=shape_a)), draw(arrays(shape=shape_b))


@given(matmul_operands())
def test_matmul_matches_torch_for_every_rank_combination(ab):
    torch = require_torch()
    a, b = ab
    check_against_torch(lambda x, y: x @ y, lambda x, y: x @ y, a, b, rtol=1e-6, atol=1e-9)
    check_against_torch(learntorch.matmul, torch.matmul, a, b, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("shape_a,shape_b", [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 1, 3, 4), (5, 4, 2)),
    ((3,), (2, 3, 4)), ((2, 5, 3), (3,)), ((2, 5, 3), (3, 4)), ((3, 4), (2, 4, 5)),
    ((1, 2, 3), (4, 3, 2)), ((4, 2, 3), (4, 3, 2)),
], ids=str)
def test_matmul_named_cases_match_torch(shape_a, shape_b):
    require_torch()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    check_against_torch(lambda x, y: x @ y, lambda x, y: x @ y, a, b, rtol=1e-6, atol=1e-9)


def test_matmul_of_transposed_operands_matches_torch():
    torch = require_torch()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    check_against_torch(lambda x, y: x.t() @ y.t(), lambda x, y: x.t() @ y.t(), a, b)
    check_against_torch(lambda x, y: x.mT @ y.mT, lambda x, y: x.mT @ y.mT, a, b)
    c = rng.standard_normal((2, 4, 3))
    check_against_torch(lambda x, y: x.transpose(1, 2) @ y.t(),
                        lambda x, y: x.transpose(1, 2) @ y.t(), c, b)
    d = rng.standard_normal((4, 4))  # strided slices of one tensor, used on both sides
    check_against_torch(lambda x: x[::2] @ x[:, ::2], lambda x: x[::2] @ x[:, ::2], d)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_matmul_keeps_the_operands_dtype(dtype):
    require_torch()
    a = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    b = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    check_against_torch(lambda x, y: x @ y, lambda x, y: x @ y, a, b, rtol=1e-6)
    check_against_torch(lambda x, y: x @ y, lambda x, y: x @ y, a[0], b, rtol=1e-6)


def test_matmul_with_a_numpy_array_on_the_left_uses_rmatmul():
    x = learntorch.ones(3, 2)
    out = np.ones((2, 3), dtype=np.float32) @ x
    assert isinstance(out, learntorch.Tensor) and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("shape_a,shape_b,name", [
    ((3,), (3,), "DotBackward0"), ((2, 3), (3,), "MvBackward0"), ((2, 3), (3, 4), "MmBackward0"),
])
def test_matmul_grad_fn_names_match_torch(shape_a, shape_b, name):
    torch = require_torch()
    lt = lt_tensor(np.ones(shape_a), True) @ lt_tensor(np.ones(shape_b), True)
    th = torch_tensor(np.ones(shape_a), True) @ torch_tensor(np.ones(shape_b), True)
    assert lt.grad_fn.name() == th.grad_fn.name() == name


# ---------------------------------------------------------------- mm, bmm, dot, outer
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_mm_matches_torch(n, k, m, data):
    torch = require_torch()
    a, b = data.draw(arrays(shape=(n, k))), data.draw(arrays(shape=(k, m)))
    out = check_against_torch(learntorch.mm, torch.mm, a, b, rtol=1e-6, atol=1e-9)
    assert out.grad_fn.name() == "MmBackward0"


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_bmm_matches_torch(batch, n, k, m, data):
    torch = require_torch()
    a, b = data.draw(arrays(shape=(batch, n, k))), data.draw(arrays(shape=(batch, k, m)))
    out = check_against_torch(learntorch.bmm, torch.bmm, a, b, rtol=1e-6, atol=1e-9)
    assert out.grad_fn.name() == "BmmBackward0"


@given(st.integers(0, 5), st.data())
def test_dot_matches_torch(n, data):
    torch = require_torch()
    a, b = data.draw(arrays(shape=(n,))), data.draw(arrays(shape=(n,)))
    check_against_torch(learntorch.dot, torch.dot, a, b, rtol=1e-6, atol=1e-9)
    check_against_torch(lambda x, y: x.dot(y), lambda x, y: x.dot(y), a, b, rtol=1e-6, atol=1e-9)


@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_outer_matches_torch(n, m, data):
    torch = require_torch()
    a, b = data.draw(arrays(shape=(n,))), data.draw(arrays(shape=(m,)))
    check_against_torch(learntorch.outer, torch.outer, a, b)
    check_against_torch(learntorch.ger, torch.outer, a, b)
    check_against_torch(lambda x, y: x.outer(y), lambda x, y: x.outer(y), a, b)


def test_outer_promotes_types_like_torch():
    torch = require_torch()
    a, b = np.arange(3), np.array([0.5, 2.0], dtype=np.float32)
    check_against_torch(learntorch.outer, torch.outer, a, b)


def test_empty_products_are_zeros_like_torch():
    torch = require_torch()
    for shape_a, shape_b in [((2, 0), (0, 3)), ((0,), (0,)), ((0, 3), (3, 2)), ((2, 0, 3), (3,))]:
        a, b = np.ones(shape_a), np.ones(shape_b)
        check_against_torch(lambda x, y: x @ y, lambda x, y: x @ y, a, b)


# ---------------------------------------------------------------- higher order
def test_matmul_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    cases = [((2, 1, 3, 4), (5, 4, 2)), ((3,), (2, 3, 4)), ((2, 3), (3,)), ((4,), (4,))]
    for shape_a, shape_b in cases:
        check_against_finite_differences(lambda x, y: x @ y, rng.standard_normal(shape_a),
                                         rng.standard_normal(shape_b))


def test_matmul_second_derivative_matches_torch():
    torch = require_torch()
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2))
    la, lb, ta, tb = lt_tensor(a, True), lt_tensor(b, True), torch_tensor(a, True), \
        torch_tensor(b, True)
    lg = learntorch.autograd.grad(((la @ lb) ** 2).sum(), [la, lb], create_graph=True)
    tg = torch.autograd.grad(((ta @ tb) ** 2).sum(), [ta, tb], create_graph=True)
    lgg = learntorch.autograd.grad((lg[0] ** 2).sum() + (lg[1] ** 2).sum(), [la, lb])
    tgg = torch.autograd.grad((tg[0] ** 2).sum() + (tg[1] ** 2).sum(), [ta, tb])
    for x, y in zip(lgg, tgg):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6)
