"""The Numba overrides of the loss family agree with the numpy reference methods.

``cross_entropy_rows`` and ``cross_entropy_rows_backward`` (``numba_cpu/losses_backend.py``)
against ``NumpyBackend``'s, called directly on arrays: the same log-probabilities, losses,
denominator and gradients -- within a few ulps, since the kernel's ``exp``/``log`` are
libm's and numpy's are its own SIMD ones -- over hypothesis inputs with ignored rows,
inf/nan and logits of +-1000; and what the kernels do not take (weights, label smoothing,
uint8 targets, strided or small arrays) reaches the reference unchanged.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from learntorch.backends import NumbaBackend, NumpyBackend
from learntorch.backends.numba_cpu import losses_backend

REFERENCE = NumpyBackend()
TOL = {np.float32: dict(rtol=2e-6, atol=1e-6), np.float64: dict(rtol=1e-13, atol=1e-14)}


def kernels_from(size):
    backend = NumbaBackend()
    backend.layer_min_sizes = dict(backend.layer_min_sizes, cross_entropy=size)
    return backend


@st.composite
def rows_problem(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    n_rows, n_classes = draw(st.integers(1, 12)), draw(st.integers(1, 7))
    x = draw(hnp.arrays(dtype, (n_rows, n_classes), elements=st.one_of(
        st.floats(-30, 30, width=32), st.sampled_from([1000.0, -1000.0, np.inf, -np.inf,
                                                       np.nan]))))
    ignore_index = draw(st.sampled_from([-100, 1]))
    t = np.array(draw(st.lists(st.sampled_from(list(range(n_classes)) + [ignore_index]),
                               min_size=n_rows, max_size=n_rows)), dtype=np.int64)
    g = draw(hnp.arrays(dtype, (n_rows,), elements=st.floats(-3, 3, width=32)))
    return x, t, ignore_index, g


def assert_close_with_nans(a, b, dtype):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a, b, **TOL[dtype])


@given(rows_problem())
def test_cross_entropy_rows_kernel_matches_the_reference(problem):
    x, t, ignore_index, g = problem
    kernel = kernels_from(0)
    assert kernel._cross_entropy_kernel_serves(x, t, None, 0.0)
    with np.errstate(all="ignore"):
        mine = kernel.cross_entropy_rows(x, t, None, ignore_index, 0.0)
        theirs = REFERENCE.cross_entropy_rows(x, t, None, ignore_index, 0.0)
        assert_close_with_nans(mine[0], theirs[0], x.dtype.type)   # log_softmax
        assert_close_with_nans(mine[1], theirs[1], x.dtype.type)   # losses
        assert mine[2] == theirs[2]                                # rows counted
        logp = theirs[0]
        grads = [b.cross_entropy_rows_backward(logp, t, None, ignore_index, 0.0, g)
                 for b in (kernel, REFERENCE)]
    assert_close_with_nans(*grads, x.dtype.type)
    assert (grads[0][t == ignore_index] == 0).all()  # ignored rows: exactly 0


def test_a_broadcast_row_gradient_is_accepted():
    x = np.random.default_rng(0).standard_normal((5, 3))
    t = np.array([0, 2, 1, 1, 0])
    g = np.broadcast_to(np.array([0.25]), (5,))  # one gradient for every row ('mean', 'sum')
    logp = REFERENCE.log_softmax(x, 1)
    np.testing.assert_allclose(kernels_from(0).cross_entropy_rows_backward(logp, t, None, -100,
                                                                           0.0, g),
                               REFERENCE.cross_entropy_rows_backward(logp, t, None, -100, 0.0, g),
                               rtol=1e-14)


@pytest.mark.parametrize("case", ["weight", "smoothing", "uint8", "strided", "small", "float16"])
def test_what_the_kernels_do_not_take_goes_to_the_reference(case, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 30)).astype(np.float16 if case == "float16" else np.float32)
    t = rng.integers(0, 30, 40).astype(np.uint8 if case == "uint8" else np.int64)
    weight = np.linspace(0.5, 1, 30, dtype=np.float32) if case == "weight" else None
    smoothing = 0.1 if case == "smoothing" else 0.0
    if case == "strided":
        x = np.ascontiguousarray(x.T).T
    backend = kernels_from(10**9 if case == "small" else 0)
    called = []
    monkeypatch.setattr(losses_backend, "kernels", lambda family: called.append(family))
    mine = backend.cross_entropy_rows(x, t, weight, -100, smoothing)
    theirs = REFERENCE.cross_entropy_rows(x, t, weight, -100, smoothing)
    assert called == []
    for a, b in zip(mine[:2], theirs[:2]):
        np.testing.assert_array_equal(a, b)
    assert mine[2] == theirs[2]
