"""The softmax-family kernels (fast_exp, integer row max, block sums) are as accurate as numpy's.

test_backend_kernels_rows.py checks every kernel on small hypothesis arrays
with the loose tolerances shared by all kernels.  Here the bounds are the
ones ``softmax.py`` promises, on the row lengths where its loops change
shape: SIMD remainders (15, 16, 17, 63, 64, 65), the summation block
(``_BLOCK`` +- 1), and long rows.  Measured worst cases against the numpy
reference: 5 ulp (float32) and 8 ulp (float64) for softmax; the bounds below
leave room for another machine's rounding, not for a wrong formula.
"""
import numpy as np
import pytest

import learntorch
from learntorch import backends
from learntorch.backends.numba_cpu import NumbaBackend, softmax

from oracle import check_against_torch, require_torch
from test_backend_kernels import NUMBA, REFERENCE, kernel_calls

BLOCK = softmax._BLOCK
ROW_LENGTHS = [1, 2, 15, 16, 17, 63, 64, 65, 100, BLOCK - 1, BLOCK, BLOCK + 1, 1024, 3 * BLOCK + 5]
RTOL = {np.float32: 2e-6, np.float64: 1e-14}   # ~16 and ~45 units in the last place
TINY = {np.float32: 1e-37, np.float64: 1e-306}  # below this, values are compared absolutely


def logits(rows, n, dtype, scale, seed=0):
    return (np.random.default_rng(seed).standard_normal((rows, n)) * scale).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", ROW_LENGTHS)
@pytest.mark.parametrize("scale", [1.0, 30.0, 1000.0])
def test_forward_kernels_match_the_reference_to_a_few_ulp(dtype, n, scale):
    x = logits(max(1, 4096 // n), n, dtype, scale)
    tol = RTOL[dtype]
    with kernel_calls() as calls:
        p, logp, lse = NUMBA.softmax(x, 1), NUMBA.log_softmax(x, 1), NUMBA.logsumexp(x, (1,), False)
    assert calls == ["softmax.softmax_rows", "softmax.log_softmax_rows", "softmax.logsumexp_rows"]
    np.testing.assert_allclose(p, REFERENCE.softmax(x, 1), rtol=tol, atol=TINY[dtype])
    # log-probabilities and logsumexp: relative to max(1, |value|)
    np.testing.assert_allclose(logp, REFERENCE.log_softmax(x, 1), rtol=tol, atol=tol)
    np.testing.assert_allclose(lse, REFERENCE.logsumexp(x, (1,), False), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_backward_kernels_match_the_reference_to_a_few_ulp_of_the_gradient_scale(dtype, n):
    x = logits(max(1, 4096 // n), n, dtype, 5.0)
    g = logits(*x.shape, dtype, 1.0, seed=1)
    y, logy = REFERENCE.softmax(x, 1), REFERENCE.log_softmax(x, 1)
    tol = RTOL[dtype]
    # every term of a row is at most |g| * (1 + sum(y)) = 2|g| in size
    scale = 2 * float(np.abs(g).max())
    np.testing.assert_allclose(NUMBA.softmax_backward(y, g, 1), REFERENCE.softmax_backward(y, g, 1),
                               rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(NUMBA.log_softmax_backward(logy, g, 1),
                               REFERENCE.log_softmax_backward(logy, g, 1),
                               rtol=tol, atol=tol * scale * n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_rows_are_summed_in_blocks_and_stay_accurate(dtype):
    """A 300 000-element row: float32 lanes inside blocks, float64 across them."""
    x = logits(2, 300_000, dtype, 3.0)
    exact = np.array([np.log(np.exp(row.astype(np.float64) - row.max()).sum()) + row.max()
                      for row in x])
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(NUMBA.logsumexp(x, (1,), False), exact, rtol=4 * eps)
    # each probability is rounded once or twice, so their exact sum is 1 to a few eps
    np.testing.assert_allclose(NUMBA.softmax(x, 1).astype(np.float64).sum(axis=1), 1.0,
                               rtol=8 * eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_max_compares_floats_as_integers_correctly(dtype):
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal, info.tiny,
                        -info.tiny, info.max, -info.max, 1.0, -1.0, np.inf, -np.inf], dtype)
    rng = np.random.default_rng(0)
    for _ in range(200):
        row = rng.choice(special, size=rng.integers(1, 20))
        if rng.random() < 0.5:
            row = np.concatenate([row, rng.standard_normal(rng.integers(0, 40)).astype(dtype)])
        assert softmax._row_max(row) == row.max(), row
    assert softmax._row_max(np.full(7, -np.inf, dtype)) == -np.inf
    assert np.isnan(softmax._row_max(np.array([1.0, np.nan, 2.0], dtype)))  # NaN wins, as in numpy


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_inf_and_extreme_logits_give_what_torch_gives(dtype):
    torch = require_torch()
    n = 70  # a full SIMD block and a remainder
    x = np.zeros((8, n), dtype) + np.linspace(-3, 3, n, dtype=dtype)
    x[0, 40] = np.nan                        # NaN: the whole row is NaN
    x[1, 50] = -np.nan                       # NaN with the sign bit set: also the whole row
    assert np.signbit(x[1, 50])
    x[2, 10] = np.inf                        # +inf: NaN row (inf - inf)
    x[3, ::3] = -np.inf                      # -inf logits: probability exactly 0
    x[4] = -np.inf                           # all -inf: NaN, logsumexp -inf
    x[5] = np.where(np.arange(n) % 2, 1000.0, -1000.0)
    x[6, 0], x[6, 1] = 1000.0, -1000.0       # one logit far above the others
    x[7] = 1e30                              # all equal and huge
    t = torch.from_numpy(x)
    with np.errstate(all="ignore"):
        got = {"softmax": NUMBA.softmax(x, 1), "log_softmax": NUMBA.log_softmax(x, 1),
               "logsumexp": NUMBA.logsumexp(x, (1,), False)}
    want = {"softmax": torch.softmax(t, -1), "log_softmax": torch.log_softmax(t, -1),
            "logsumexp": torch.logsumexp(t, -1)}
    for name in got:
        np.testing.assert_allclose(got[name], want[name].numpy(), rtol=RTOL[dtype], atol=0,
                                   equal_nan=True, err_msg=name)
    assert np.all(got["softmax"][3, ::3] == 0)


def test_the_issue_case_runs_the_kernels_by_default_and_matches_torch_forward_and_backward():
    """1024 x 1024 float32, softmax over the last dim: the size the thresholds were chosen for."""
    torch = require_torch()
    x = logits(1024, 1024, np.float32, 3.0)
    # a gradient g - sum(g * y) cancels: its error is a few eps of |g| (~4 here), not of itself
    grad_atol = 8 * np.finfo(np.float32).eps * 4
    with backends.use(NumbaBackend()):
        with kernel_calls() as calls:
            for lt_fn, th_fn in [(lambda a: learntorch.softmax(a, -1), lambda a: torch.softmax(a, -1)),
                                 (lambda a: learntorch.log_softmax(a, -1),
                                  lambda a: torch.log_softmax(a, -1)),
                                 (lambda a: learntorch.logsumexp(a, -1),
                                  lambda a: torch.logsumexp(a, -1))]:
                check_against_torch(lt_fn, th_fn, x, grad=False, rtol=1e-5, atol=1e-7)
                check_against_torch(lt_fn, th_fn, x, rtol=1e-5, atol=grad_atol)
    assert set(calls) == {f"softmax.{op}_rows" for op in
                          ("softmax", "softmax_backward", "log_softmax", "log_softmax_backward",
                           "logsumexp")}


def test_small_inputs_stay_with_numpy_by_default():
    """Below the thresholds, waking the threads costs more than numpy's whole computation."""
    x = logits(16, 16, np.float32, 1.0)
    default = NumbaBackend()  # the default thresholds
    with kernel_calls() as calls:
        default.softmax(x, 1), default.log_softmax(x, 1), default.logsumexp(x, (1,), False)
        default.softmax_backward(x, x, 1), default.log_softmax_backward(x, x, 1)
    assert calls == []
