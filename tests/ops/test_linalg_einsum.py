"""einsum: the common two-operand (and one-operand) forms against torch, forward and gradients."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)

# equation, shapes of the operands by letter
FORMS = ["ij,jk->ik", "bij,bjk->bik", "i,i->", "i,j->ij", "bi,bi->b", "ij->ji", "ij->",
         "ij,j->i", "bhqd,bhkd->bhqk", "ij,jk", "ij,ij->ij", "ij->j", "i,i", "ij,kj->ik",
         "ijk->kji", "bn,nd->bd"]


def _shapes(equation, sizes):
    lhs = equation.split("->")[0]
    return [tuple(sizes[c] for c in term) for term in lhs.split(",")]


@pytest.mark.parametrize("equation", FORMS)
@given(data=st.data())
def test_einsum_matches_torch(equation, data):
    torch = require_torch()
    sizes = {c: data.draw(st.integers(1, 3)) for c in "bhijkdnq"}
    operands = [data.draw(arrays(shape=s)) for s in _shapes(equation, sizes)]
    check_against_torch(lambda *xs: learntorch.einsum(equation, *xs),
                        lambda *xs: torch.einsum(equation, *xs), *operands, rtol=1e-6, atol=1e-9)


def test_einsum_accepts_a_list_of_operands_and_spaces():
    torch = require_torch()
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    check_against_torch(lambda x, y: learntorch.einsum("ij, jk -> ik", [x, y]),
                        lambda x, y: torch.einsum("ij, jk -> ik", [x, y]), a, b)


def test_einsum_broadcasts_size_1_dims_like_torch():
    torch = require_torch()
    a, b = np.arange(2.0).reshape(2, 1), np.arange(12.0).reshape(3, 4)
    check_against_torch(lambda x, y: learntorch.einsum("ij,jk->ik", x, y),
                        lambda x, y: torch.einsum("ij,jk->ik", x, y), a, b)


def test_einsum_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 2, 3, 4)), rng.standard_normal((2, 2, 5, 4))
    check_against_finite_differences(lambda x, y: learntorch.einsum("bhqd,bhkd->bhqk", x, y),
                                     a, b)
    check_against_finite_differences(lambda x: learntorch.einsum("ij->", x), a[0, 0])


def test_einsum_second_derivative_matches_torch():
    torch = require_torch()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    la, lb, ta, tb = lt_tensor(a, True), lt_tensor(b, True), torch_tensor(a, True), \
        torch_tensor(b, True)
    lg = learntorch.autograd.grad((learntorch.einsum("ij,jk->ik", la, lb) ** 2).sum(), [la, lb],
                                  create_graph=True)
    tg = torch.autograd.grad((torch.einsum("ij,jk->ik", ta, tb) ** 2).sum(), [ta, tb],
                             create_graph=True)
    lgg = learntorch.autograd.grad((lg[0] ** 2).sum() + lg[1].sum(), [la, lb])
    tgg = torch.autograd.grad((tg[0] ** 2).sum() + tg[1].sum(), [ta, tb])
    for x, y in zip(lgg, tgg):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6)


def test_einsum_gradient_only_for_operands_that_require_it():
    a = learntorch.ones(2, 3, requires_grad=True)
    b = learntorch.ones(3, 4)
    learntorch.einsum("ij,jk->ik", a, b).sum().backward()
    assert a.grad.tolist() == [[4.0] * 3] * 2 and b.grad is None


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3)]),                     # fewer operands than the equation names
    ("ij->ij", [(2, 3), (3,)]),                  # more operands
    ("ijk,jk->ik", [(2, 3), (3, 4)]),            # subscripts do not match an operand's rank
    ("ij,jk->ik", [(2, 3), (4, 4)]),             # one letter, two sizes
    ("ij,jk->iz", [(2, 3), (3, 4)]),             # an output letter no input has
    ("ij,jk->ii", [(2, 3), (3, 4)]),             # an output letter twice
    ("i1,jk->ik", [(2, 3), (3, 4)]),             # not a letter
], ids=["fewer", "more", "rank", "size", "unknown_output", "repeated_output", "bad_char"])
def test_einsum_errors_match_torch(equation, shapes):
    torch = require_torch()
    with pytest.raises(RuntimeError) as expected:
        torch.einsum(equation, *[torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError) as got:
        learntorch.einsum(equation, *[learntorch.ones(s) for s in shapes])
    headline = str(expected.value).split("):", 1)[1][:25]  # torch's words after "einsum():"
    assert headline in str(got.value), (str(expected.value), str(got.value))


def test_einsum_refuses_mixed_dtypes_like_torch():
    torch = require_torch()
    with pytest.raises(RuntimeError):
        torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="float32 and .*float64"):
        learntorch.einsum("ij,jk->ik", learntorch.ones(2, 3),
                          learntorch.ones(3, 4, dtype=learntorch.float64))
