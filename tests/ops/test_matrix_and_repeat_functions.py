"""Triangles and diagonals (tril, triu, diagonal, diag, diag_embed, trace), rolls and repeats
(roll, tile, repeat_interleave), flattening and flipping helpers, cross and cdist: values,
layout (views are views) and gradients against torch, second derivatives included."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, as_numpy, both, both_raise, check_against_torch, require_torch,
                    torch)

MATRIX_OPS = {
    "tril": lambda m, x: m.tril(x),
    "tril 1": lambda m, x: x.tril(1),
    "triu -1": lambda m, x: m.triu(x, -1),
    "diagonal": lambda m, x: x.diagonal(),
    "diagonal 1": lambda m, x: m.diagonal(x, 1),
    "diagonal -2 dims": lambda m, x: m.diagonal(x, -1, -1, 0),
    "diag": lambda m, x: m.diag(x[0] if x.ndim == 3 else x),
    "diag 2": lambda m, x: m.diag(x[0] if x.ndim == 3 else x, -1),
    "diag of vector": lambda m, x: m.diag(x.reshape(-1)[:3], 1),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "diag_embed dims": lambda m, x: m.diag_embed(x, 1, 0, -1),
    "trace": lambda m, x: m.trace(x[0] if x.ndim == 3 else x),
}


@pytest.mark.parametrize("name", sorted(MATRIX_OPS))
@given(data=st.data())
def test_matrix_ops_and_gradients_match_torch(name, data):
    a = data.draw(arrays(min_dims=2, max_dims=3), label="x")
    fn = MATRIX_OPS[name]
    check_against_torch(lambda x: fn(learntorch, x), lambda x: fn(torch, x), a)


@pytest.mark.parametrize("name", ["diagonal", "diagonal 1", "diagonal -2 dims"])
def test_diagonal_is_a_view_with_torchs_strides(name):
    got, want = both(lambda m: (lambda x: (lambda d: (d.stride(), d.storage_offset(),
                                                      d.shape))(MATRIX_OPS[name](m, x)))(
        m.arange(24.0).reshape(2, 3, 4)))
    assert got == (want[0], want[1], tuple(want[2]))
    x = learntorch.zeros(3, 3)
    x.diagonal().fill_(1.0)  # a write through the view lands in x
    assert x.tolist() == np.eye(3).tolist()


def test_diagonal_in_place_on_a_graph_tensor_and_double_backward():
    require_torch()
    out = []
    for lib in (learntorch, torch):
        w = lib.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        y = w * 2
        y.diagonal().mul_(10)
        g, = lib.autograd.grad((y.tril() ** 2).sum() + lib.trace(y) ** 2, w, create_graph=True)
        g2, = lib.autograd.grad(g.diag_embed().sum() + g.diagonal(1).sum(), w)
        out.append((as_numpy(y), as_numpy(g), as_numpy(g2)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.tril(m.ones(3)),
    lambda m: m.diagonal(m.ones(3)),
    lambda m: m.diagonal(m.ones(2, 2), 0, 1, 1),
    lambda m: m.diag(m.ones(2, 2, 2)),
    lambda m: m.trace(m.ones(2, 2, 2)),
])
def test_matrix_op_errors_are_torchs(call):
    both_raise(call)


ROLL_REPEAT = {
    "roll": lambda m, x: m.roll(x, 1, 0),
    "roll flat": lambda m, x: m.roll(x, -3),
    "roll dims": lambda m, x: x.roll((1, -2), (0, -1)),
    "tile": lambda m, x: m.tile(x, (2,)),
    "tile more": lambda m, x: x.tile((2, 1, 1, 2)),
    "repeat_interleave": lambda m, x: m.repeat_interleave(x, 2, dim=0),
    "repeat_interleave flat": lambda m, x: x.repeat_interleave(3),
    "repeat_interleave counts": lambda m, x: x.repeat_interleave(
        m.tensor([1, 0, 2, 3][:x.shape[-1]] + [1] * max(0, x.shape[-1] - 4)), dim=-1),
    "ravel": lambda m, x: x.transpose(0, -1).ravel(),
    "flipud": lambda m, x: m.flipud(x),
    "fliplr": lambda m, x: m.fliplr(x),
    "atleast_3d": lambda m, x: m.atleast_3d(x),
    "moveaxis": lambda m, x: m.moveaxis(x, 0, -1),
}


@pytest.mark.parametrize("name", sorted(ROLL_REPEAT))
@given(data=st.data())
def test_rolls_repeats_and_flattening_match_torch(name, data):
    a = data.draw(arrays(min_dims=2, max_dims=3), label="x")
    fn = ROLL_REPEAT[name]
    check_against_torch(lambda x: fn(learntorch, x), lambda x: fn(torch, x), a)


def test_repeat_interleave_of_counts_alone_and_atleast_of_numbers():
    got, want = both(lambda m: m.repeat_interleave(m.tensor([2, 0, 3])).tolist())
    assert got == want == [0, 0, 2, 2, 2]
    got, want = both(lambda m: [(tuple(t.shape), t.tolist()) for t in
                                m.atleast_2d(m.tensor(1.0), m.tensor([1.0, 2.0]))])
    assert got == want
    got, want = both(lambda m: (tuple(m.atleast_1d(m.tensor(5)).shape),
                                tuple(m.atleast_3d(m.ones(2, 3)).shape),
                                tuple(m.atleast_3d(m.ones(4)).shape)))
    assert got == want


@given(data=st.data())
def test_cross_product_and_gradients_match_torch(data):
    shape = data.draw(st.sampled_from([(3,), (2, 3), (3, 4), (2, 3, 2)]), label="shape")
    a = data.draw(arrays(shape=shape), label="a")
    b = data.draw(arrays(shape=shape), label="b")
    dim = [d for d, n in enumerate(shape) if n == 3][-1]
    check_against_torch(lambda x, y: learntorch.cross(x, y, dim=dim),
                        lambda x, y: torch.cross(x, y, dim=dim), a, b)
    check_against_torch(lambda x, y: x.cross(y, dim), lambda x, y: x.cross(y, dim), a, b)


@given(data=st.data())
def test_cdist_and_its_gradient_match_torch(data):
    p = data.draw(st.sampled_from([1.0, 2.0, 3.0]), label="p")
    a = data.draw(arrays(shape=(3, 2)), label="x1")
    b = data.draw(arrays(shape=(4, 2)), label="x2")
    check_against_torch(lambda x, y: learntorch.cdist(x, y, p=p),
                        lambda x, y: torch.cdist(x, y, p=p), a, b, rtol=1e-6, atol=1e-7)


def test_cdist_is_differentiable_once_like_torch():
    for lib in (learntorch, require_torch()):
        x1 = lib.randn(3, 2, dtype=lib.float64, requires_grad=True)
        x2 = lib.randn(4, 2, dtype=lib.float64)
        g, = lib.autograd.grad(lib.cdist(x1, x2).sum(), x1, create_graph=True)
        with pytest.raises(NotImplementedError, match="_cdist_backward"):
            g.sum().backward()
    both_raise(lambda m: m.cdist(m.ones(2, 2), m.ones(2, 2, dtype=m.float64)))


def test_outer_product_records_torchs_node():
    got, want = both(lambda m: m.outer(m.ones(2, requires_grad=True), m.ones(3)).grad_fn.name())
    assert got == want == "MulBackward0"
