"""einsum on cuda (einsum.py: diagonal views, sums and the batched matmul) matches the cpu."""
import numpy as np
import pytest

import learntorch
from cuda_compare import check, rand

TWO_OPERANDS = [
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("ij,kj->ki", (3, 4), (5, 4)),        # the contraction on both last dims, output reordered
    ("i,j->ij", (3,), (4,)),             # outer product: nothing contracted
    ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),  # attention scores
    ("ij,ij->", (3, 4), (3, 4)),         # everything contracted
    ("ijk,jl->lk", (2, 3, 4), (3, 5)),   # i is summed before the contraction
    ("bij,jk->bik", (1, 3, 4), (4, 2)),
]


@pytest.mark.parametrize("spec, a_shape, b_shape", TWO_OPERANDS)
def test_two_operand_contractions_with_gradients(spec, a_shape, b_shape):
    check(lambda a, b: learntorch.einsum(spec, a, b), rand(*a_shape, seed=1),
          rand(*b_shape, seed=2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("spec, shape", [("ij->ji", (3, 4)), ("ii->", (4, 4)), ("ii->i", (4, 4)),
                                         ("ijk->j", (2, 3, 4)), ("...ij->...ji", (2, 3, 4))])
def test_one_operand_forms(spec, shape):
    check(lambda a: learntorch.einsum(spec, a), rand(*shape), rtol=1e-5, atol=1e-5)


def test_three_operands_and_a_size_1_letter_that_broadcasts():
    check(lambda a, b, c: learntorch.einsum("ij,jk,kl->il", a, b, c), rand(2, 3, seed=1),
          rand(3, 4, seed=2), rand(4, 2, seed=3), rtol=1e-5, atol=1e-5)
    check(lambda a, b: learntorch.einsum("bij,bjk->bik", a, b), rand(1, 2, 3, seed=1),
          rand(4, 3, 2, seed=2), rtol=1e-5, atol=1e-5)


def test_float64_and_integer_einsums():
    check(lambda a, b: learntorch.einsum("ij,jk->ik", a, b), rand(3, 4, dtype=np.float64),
          rand(4, 2, dtype=np.float64, seed=1), rtol=1e-12, atol=1e-12)
    ints = np.arange(12).reshape(3, 4)
    check(lambda a, b: learntorch.einsum("ij,kj->ik", a, b), ints, ints + 1, grad=False)
