"""einsum beyond two plain operands: '...', repeated letters (trace, diagonal), one and
three operands, the implicit output, the sublist form -- forward and gradients vs torch.

(The common two-operand forms and the basic errors are in test_linalg_einsum.py.)
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, require_torch, torch, torch_tensor)

# equation, and the shapes of its operands with letters for sizes drawn per example
# (an ellipsis is written as "E..." and drawn as 0-2 extra dims, broadcastable)
FORMS = [
    ("ii->", ["ii"]), ("ii->i", ["ii"]), ("ii", ["ii"]), ("iij->ji", ["iij"]),
    ("iji->j", ["iji"]), ("iii->i", ["iii"]), ("ij->", ["ij"]), ("ba", ["ab"]),
    ("ij,jk,kl->il", ["ij", "jk", "kl"]), ("i,i,i->i", ["i", "i", "i"]),
    ("ij,jk,ki", ["ij", "jk", "ki"]), ("bi,bj,bk->bijk", ["bi", "bj", "bk"]),
    ("ii,ij->j", ["ii", "ij"]), ("ij,jk", ["ij", "jk"]), ("Ab,bA", ["Ab", "bA"]),
    ("...ij->...ji", ["E...ij"]), ("...ij,...jk->...ik", ["E...ij", "E...jk"]),
    ("...ij,...jk", ["E...ij", "E...jk"]), ("i...,i...->...", ["iE...", "iE..."]),
    ("ij...,jk...->ik...", ["ijE...", "jkE..."]), ("...ii->...i", ["E...ii"]),
    ("...", ["E..."]), ("...ij->ij", ["E...ij"]), ("b...,b->...", ["bE...", "b"]),
    ("a...b,...->...", ["aE...b", "E..."]),
]


@st.composite
def operands_for(draw, templates):
    sizes = {c: draw(st.integers(1, 3)) for c in "abijklAbE"}
    ellipsis = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    shapes = []
    for template in templates:
        if "E..." in template:
            before, after = template.split("E...")
            # each operand keeps some trailing ellipsis dims, some of them size 1 (broadcast)
            n = draw(st.integers(0, len(ellipsis)))
            mine = [s if draw(st.booleans()) else 1 for s in ellipsis[len(ellipsis) - n:]]
            shapes.append([sizes[c] for c in before] + mine + [sizes[c] for c in after])
        else:
            shapes.append([sizes[c] for c in template])
    return [draw(arrays(shape=tuple(s))) for s in shapes]


@pytest.mark.parametrize("equation,templates", FORMS, ids=[f[0] for f in FORMS])
@given(data=st.data())
def test_einsum_form_matches_torch(equation, templates, data):
    torch = require_torch()
    operands = data.draw(operands_for(templates), label="operands")
    check_against_torch(lambda *xs: learntorch.einsum(equation, *xs),
                        lambda *xs: torch.einsum(equation, *xs), *operands,
                        rtol=1e-6, atol=1e-9)


def test_trace_and_diagonal_have_the_identity_and_a_diagonal_as_gradient():
    a = learntorch.arange(9.0).reshape(3, 3).requires_grad_()
    trace = learntorch.einsum("ii->", a)
    trace.backward()
    assert trace.item() == 12.0 and a.grad.tolist() == learntorch.eye(3).tolist()
    b = learntorch.arange(9.0).reshape(3, 3).requires_grad_()
    diagonal = learntorch.einsum("ii->i", b)
    diagonal.backward(learntorch.tensor([1.0, 2.0, 3.0]))
    assert diagonal.tolist() == [0.0, 4.0, 8.0]
    assert b.grad.tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 3]]


def test_implicit_output_is_the_ellipsis_then_the_letters_used_once_in_torchs_order():
    torch = require_torch()
    # capitals sort before small letters, the ellipsis dims come first
    for equation, shapes in [("ba", [(2, 3)]), ("bA,Ac", [(2, 3), (3, 4)]),
                             ("i...j", [(2, 5, 3)]), ("zya", [(2, 3, 4)])]:
        mine = learntorch.einsum(equation, *[learntorch.ones(s) for s in shapes])
        theirs = torch.einsum(equation, *[torch.ones(s) for s in shapes])
        assert tuple(mine.shape) == tuple(theirs.shape), equation


@pytest.mark.parametrize("equation,shapes", [
    ("ii->", [(3, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("...ij->...ji", [(2, 3, 4)]),
    ("ii,ij->j", [(3, 3), (3, 2)]), ("b...i,b...i->b", [(2, 3, 4), (2, 1, 4)]),
])
def test_gradients_match_finite_differences(equation, shapes):
    rng = np.random.default_rng(0)
    check_against_finite_differences(lambda *xs: learntorch.einsum(equation, *xs),
                                     *[rng.standard_normal(s) for s in shapes])


@pytest.mark.parametrize("equation,shapes", [
    ("ii->i", [(3, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk", [(2, 2, 3), (3, 2)]),
])
def test_gradient_of_the_gradient_matches_torch(equation, shapes):
    require_torch()
    rng = np.random.default_rng(1)
    arrays_in = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        xs = [make(a, True) for a in arrays_in]
        grads = lib.autograd.grad((lib.einsum(equation, *xs) ** 2).sum(), xs, create_graph=True)
        results.append(lib.autograd.grad(sum((g ** 3).sum() for g in grads), xs))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs, what="gradient of the gradient")


def test_sublist_form_matches_torch():
    require_torch()
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    check_against_torch(lambda x, y: learntorch.einsum(x, [0, 1], y, [1, 2], [0, 2]),
                        lambda x, y: torch.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)
    check_against_torch(lambda x: learntorch.einsum(x, [Ellipsis, 27]),
                        lambda x: torch.einsum(x, [Ellipsis, 27]), a)
    check_against_torch(lambda x: learntorch.einsum(x, [1, 0]),
                        lambda x: torch.einsum(x, [1, 0]), a)


@pytest.mark.parametrize("equation,shapes", [
    ("ii->i", [(3, 2)]),                              # a diagonal needs a square
    ("ii->i", [(1, 3)]),                              # ... and does not broadcast
    ("ij..k", [(2, 3)]),                              # two dots
    ("i......j", [(2, 3)]),                           # two ellipses
    ("ab.c", [(2, 3)]),                               # one dot
    ("...i,...i", [(2, 3), (4, 3)]),                  # ellipsis dims that do not broadcast
    ("...ijk", [(2, 3)]),                             # more letters than dims
    ("ij->......", [(2, 3)]),                         # two ellipses in the output
    ("ij,jk->i,k", [(2, 3), (3, 4)]),                 # one output only
], ids=["not_square", "diagonal_of_1_by_3", "two_dots", "two_ellipses", "one_dot",
        "ellipsis_sizes", "too_many_letters", "output_two_ellipses", "comma_in_output"])
def test_errors_match_torch(equation, shapes):
    torch = require_torch()
    with pytest.raises(RuntimeError) as expected:
        torch.einsum(equation, *[torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError) as got:
        learntorch.einsum(equation, *[learntorch.ones(s) for s in shapes])
    headline = str(expected.value).split("):", 1)[1][:30]  # torch's words after "einsum():"
    assert headline in str(got.value), (str(expected.value), str(got.value))


@pytest.mark.parametrize("call,error", [
    (lambda m: m.einsum(), ValueError),
    (lambda m: m.einsum("ij", 3), TypeError),
    (lambda m: m.einsum(m.ones(2, 3), [0, 60]), ValueError),
])
def test_bad_arguments_raise_torchs_exception_type(call, error):
    torch = require_torch()
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(learntorch)
