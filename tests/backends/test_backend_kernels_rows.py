"""The row kernels (softmax family, logsumexp, sum) compute what the numpy reference computes.

Same set-up as test_backend_kernels.py: every kernel forced on, a spy proving
it ran, hypothesis arrays that are often transposed or strided views.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from test_backend_kernels import (ALONG_DIM, ALONG_DIM_BACKWARD, NUMBA, REFERENCE, TOL,
                                  assert_matches, float_arrays, kernel_calls)
from learntorch.backends.numba_cpu import backend as backend_module


# ---------------------------------------------------------------- along one dim
@st.composite
def arrays_with_dim(draw):
    (x, dtype) = draw(float_arrays(min_dims=1))
    return x, dtype, draw(st.integers(0, x.ndim - 1))


@pytest.mark.parametrize("op", ALONG_DIM)
@given(data=arrays_with_dim())
def test_softmax_family_kernel_matches_reference_along_every_dim(op, data):
    x, dtype, dim = data
    with kernel_calls() as calls:
        out = getattr(NUMBA, op)(x, dim)
    assert calls == [f"softmax.{op}_rows"]
    assert_matches(out, getattr(REFERENCE, op)(x, dim), TOL[dtype], what=f"{op} dim={dim}")
    if x.flags.c_contiguous:  # contiguous in, contiguous out, like the reference
        assert out.flags.c_contiguous


@pytest.mark.parametrize("op", sorted(ALONG_DIM_BACKWARD))
@given(data=arrays_with_dim(), magnitude=st.sampled_from([3.0, 1000.0]), seed=st.integers(0, 9))
def test_softmax_family_backward_kernel_matches_reference(op, data, magnitude, seed):
    x, dtype, dim = data
    y = getattr(REFERENCE, ALONG_DIM_BACKWARD[op])(x, dim)
    grad = (np.random.default_rng(seed).uniform(-magnitude, magnitude, x.shape)).astype(dtype)
    with kernel_calls() as calls:
        out = getattr(NUMBA, op)(y, grad, dim)
    assert calls == [f"softmax.{op}_rows"]
    scale = float(np.abs(grad).max()) * x.shape[dim]
    assert_matches(out, getattr(REFERENCE, op)(y, grad, dim), TOL[dtype], scale=max(1.0, scale),
                   what=f"{op} dim={dim}")


# ---------------------------------------------------------------- over several dims
@st.composite
def arrays_with_dims(draw, trailing=False):
    (x, dtype) = draw(float_arrays(min_dims=1))
    if trailing:
        k = draw(st.integers(1, x.ndim))
        dims = tuple(range(x.ndim - k, x.ndim))
    else:
        dims = tuple(sorted(draw(st.sets(st.integers(0, x.ndim - 1), min_size=1))))
    return x, dtype, dims, draw(st.booleans())


@given(data=arrays_with_dims())
def test_logsumexp_kernel_matches_reference_over_any_dims(data):
    x, dtype, dims, keepdim = data
    with kernel_calls() as calls:
        out = NUMBA.logsumexp(x, dims, keepdim)
    assert calls == ["softmax.logsumexp_rows"]
    assert_matches(out, REFERENCE.logsumexp(x, dims, keepdim), TOL[dtype],
                   scale=max(1.0, float(np.abs(x).max())), what=f"logsumexp dims={dims}")


@given(data=arrays_with_dims(trailing=True))
def test_sum_kernel_matches_reference_over_trailing_dims(data):
    x, dtype, dims, keepdim = data
    x = np.ascontiguousarray(x)  # the kernel's layout; others are left to numpy (see dispatch)
    with kernel_calls() as calls:
        out = NUMBA.sum(x, dims, keepdim)
    assert calls == ["reduction.sum_rows"]
    assert_matches(out, REFERENCE.sum(x, dims, keepdim), TOL[dtype],
                   scale=max(1.0, float(np.abs(x).sum())), what=f"sum dims={dims}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_of_one_long_row_is_split_into_chunks_and_stays_accurate(dtype):
    n = 2 * backend_module._SUM_CHUNK + 12345  # two whole chunks and a ragged tail
    x = np.random.default_rng(0).uniform(0, 1, n).astype(dtype)
    exact = x.astype(np.float64).sum()
    with kernel_calls() as calls:
        out = NUMBA.sum(x, (0,), False)
    assert calls == ["reduction.sum_rows"]
    assert out.shape == () and out.dtype == dtype
    # as accurate as numpy's pairwise float32 sum, or better (float64 running sums)
    assert abs(float(out) - exact) <= max(abs(float(REFERENCE.sum(x, (0,), False)) - exact),
                                          4 * np.finfo(dtype).eps * exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_kernels_are_finite_for_logits_of_plus_minus_1000(dtype):
    x = np.array([[1000.0, -1000.0, 0.0, 999.0], [-1000.0, -1000.0, -999.0, -1000.0]], dtype)
    for out in (NUMBA.softmax(x, 1), NUMBA.log_softmax(x, 1), NUMBA.logsumexp(x, (1,), False),
                NUMBA.sigmoid(x), NUMBA.silu(x)):
        assert np.isfinite(out).all()
    np.testing.assert_allclose(NUMBA.softmax(x, 1).sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(NUMBA.logsumexp(x, (1,), False),
                               [1000 + np.log1p(np.exp(-1.0)), -999 + np.log1p(3 * np.exp(-1.0))],
                               rtol=1e-6)
