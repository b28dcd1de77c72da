"""Boolean masks on cuda: x[mask], masked_select, nonzero, where(cond) and x[mask] = v."""
import numpy as np
import pytest

import learntorch
from cuda_compare import check, rand, same


def test_mask_indexing_reads_the_true_elements_in_row_major_order_with_gradients():
    x = rand(4, 9)
    check(lambda t: t[t > 0.2] * 3.0, x)
    check(lambda t: learntorch.masked_select(t, t < 0), x)


def test_a_mask_over_some_dims_keeps_the_others():
    x = rand(2, 5, 2)
    keep = np.array([True, False, True, True, False])

    def rows(t):
        mask = learntorch.tensor(keep, device=t.device)
        return t[:, mask] + t[1:2, mask]

    check(rows, x)


def test_a_2d_mask_over_the_first_two_dims():
    check(lambda t: t[t.sum(2) > 0], rand(3, 4, 2))


def test_a_cpu_mask_can_index_a_cuda_tensor():
    x = rand(6, 3)
    keep = np.array([True, False, False, True, True, False])
    check(lambda t: t[learntorch.tensor(keep)], x)


def test_masked_select_broadcasts_the_mask():
    x = rand(3, 4)
    keep = np.array([True, False, True, True])
    check(lambda t: learntorch.masked_select(t, learntorch.tensor(keep, device=t.device)), x)


def test_writing_through_a_mask_and_its_gradient():
    x = rand(5, 6)

    def zero_negatives(t):
        y = t * 1.0
        y[y < 0] = 0.5
        y[y > 1.0] += 2.0  # np.add.at through a mask
        return y * t

    check(zero_negatives, x)


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5)])
def test_nonzero_and_its_tuple_form(shape):
    x = np.random.default_rng(4).integers(-1, 2, shape)  # about a third are zero
    out = check(lambda t: learntorch.nonzero(t), x, grad=False)
    assert out.dtype is learntorch.int64
    cpu = learntorch.nonzero(learntorch.tensor(x), as_tuple=True)
    cuda = learntorch.nonzero(learntorch.tensor(x, device="cuda"), as_tuple=True)
    cond = learntorch.where(learntorch.tensor(x, device="cuda") != 0)
    for a, b, c in zip(cuda, cpu, cond):
        same(a, b)
        same(c, b)


def test_nonzero_of_no_true_element_and_of_a_number():
    same(learntorch.nonzero(learntorch.zeros(2, 3, device="cuda")),
         learntorch.nonzero(learntorch.zeros(2, 3)))
    for v in (0.0, 2.0):
        same(learntorch.nonzero(learntorch.tensor(v, device="cuda")),
             learntorch.nonzero(learntorch.tensor(v)))


def test_a_mask_of_the_wrong_shape_is_an_index_error_naming_both_shapes():
    x = learntorch.zeros(3, 4, device="cuda")
    with pytest.raises(IndexError, match=r"\[4\].*\[3, 4\]"):
        x[learntorch.ones(4, dtype=learntorch.bool, device="cuda")]
