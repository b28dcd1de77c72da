"""Reductions and the softmax family on cuda match the cpu, along any dim of any size."""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from cuda_compare import check, rand

# 3 x 70 x 2: dim 1 is longer than a simulator block (32 threads), so each thread
# folds several elements before the shared-memory tree
SHAPE = (3, 70, 2)


@pytest.mark.parametrize("dim", [None, 0, 1, 2, (0, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_mean_along_any_dims(dim, keepdim):
    x = rand(*SHAPE)
    if dim is None:
        check(lambda t: t.sum() * 1.5 + t.mean(), x, rtol=1e-5, atol=1e-5)
    else:
        check(lambda t: t.sum(dim, keepdim=keepdim) + t.mean(dim, keepdim=keepdim), x,
              rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_max_and_min_with_indices_and_gradients(dim):
    x = rand(*SHAPE)
    check(lambda t: t.max(dim).values - t.min(dim, keepdim=False).values, x)
    for fn in (lambda t: t.argmax(dim), lambda t: t.max(dim).indices, lambda t: t.argmin(dim)):
        out = check(fn, x, grad=False)
        assert out.dtype is learntorch.int64


def test_ties_pick_the_first_index_and_nan_wins_like_the_cpu():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan]], np.float32)
    check(lambda t: t.argmax(1), x, grad=False)
    check(lambda t: t.max(1).values, x, grad=False)


def test_full_reductions_of_strided_views_and_integers():
    check(lambda t: t.t()[::2].sum(), rand(5, 8))
    check(lambda t: t.prod(1), rand(4, 5) * 0.5 + 1)
    check(lambda t: t.sum(0), np.arange(12).reshape(3, 4), grad=False)
    check(lambda t: (t > 0).sum(), rand(6, 7), grad=False)
    check(lambda t: t.max(), rand(6, 7))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_log_softmax_and_logsumexp_rows(dim):
    x = rand(4, 37) * 10  # large values: the max-shift must keep exp from overflowing
    check(lambda t: F.softmax(t, dim), x, rtol=1e-5, atol=1e-6)
    check(lambda t: F.log_softmax(t, dim), x, rtol=1e-5, atol=1e-5)
    check(lambda t: learntorch.logsumexp(t, dim), x, rtol=1e-5, atol=1e-5)


def test_var_and_std_use_the_unbiased_estimate():
    check(lambda t: t.var(1) + t.std(0).sum(), rand(5, 6), rtol=1e-5, atol=1e-5)
