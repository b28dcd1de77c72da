"""cumsum on cuda (scan.py's per-row Hillis-Steele scan) matches the cpu, forward and backward."""
import numpy as np
import pytest

import learntorch
from cuda_compare import check, rand, same


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cumsum_along_each_dim_with_its_gradient(dim):
    # the backward is a reversed cumsum (flip, cumsum, flip): the scan runs on a
    # negative-stride view there.  (Small: the simulator runs each block's threads in turn.)
    check(lambda t: t.cumsum(dim), rand(3, 5, 2), rtol=1e-5, atol=1e-5)


def test_rows_longer_than_a_block_carry_each_tile_sum_into_the_next():
    # 70 elements: more than two tiles of a simulator block (32 threads), the last partial
    check(lambda t: t.cumsum(1), rand(2, 70), rtol=1e-5, atol=1e-5)


def test_cumsum_of_a_transposed_view_and_float64():
    x = rand(5, 3, dtype=np.float64)
    check(lambda t: learntorch.cumsum(t.t(), dim=1) * 2.0, x, rtol=1e-12, atol=1e-12)


def test_integer_and_bool_cumsums_are_exact_int64_like_the_cpu():
    ints = np.random.default_rng(2).integers(-1000, 1000, (4, 37))
    out = check(lambda t: t.cumsum(1), ints, grad=False)
    assert out.dtype is learntorch.int64
    mask = np.random.default_rng(3).random((2, 45)) > 0.5
    out = check(lambda t: t.cumsum(-1), mask, grad=False)
    assert out.dtype is learntorch.int64


def test_cumsum_with_dtype_and_of_a_number_and_of_an_empty_dim():
    ints = np.arange(6).reshape(2, 3)
    out = check(lambda t: t.cumsum(0, dtype=learntorch.float32), ints, grad=False)
    assert out.dtype is learntorch.float32
    check(lambda t: t.cumsum(0), np.array(2.5, np.float32))
    empty = learntorch.zeros(3, 0, device="cuda").cumsum(1)
    same(empty, learntorch.zeros(3, 0).cumsum(1))


def test_a_long_row_is_the_prefix_sum_numpy_computes():
    # integers: the scan's answer is exact, so any lost carry shows
    x = np.arange(300, dtype=np.int64) % 7
    got = learntorch.tensor(x, device="cuda").cumsum(0).cpu().numpy()
    np.testing.assert_array_equal(got, np.cumsum(x))
