"""Every Numba kernel computes what the numpy reference backend computes (elementwise ones here,
row kernels in test_backend_kernels_rows.py; the special-values test covers all of them).

The oracle is ``NumpyBackend`` (itself checked against torch by the op tests).
The Numba backend under test is built with ``min_size=0`` and every op allowed
to copy strided input, so that the kernels run even on the small arrays
hypothesis draws (cheap to run, and the kernels see odd shapes: 0-d, 1 element,
size-1 dims, transposed and strided views).  A spy on the kernel loader proves
the kernel really ran -- a silent fall back to numpy would make these tests
compare numpy with itself.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from learntorch.backends.numba_cpu import NumbaBackend
from learntorch.backends.numba_cpu import backend as backend_module, cast_backend
from learntorch.backends.reference import NumpyBackend

import kernel_spy as spy
from oracle import arrays

REFERENCE = NumpyBackend()
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}
FLOATS = st.sampled_from([np.float32, np.float64])


def forced_numba():
    """A Numba backend that uses its kernel for every float array, whatever its size or layout."""
    b = NumbaBackend(min_size=0)
    b.copy_pays_off = frozenset(b.min_sizes)
    return b


NUMBA = forced_numba()


def kernel_calls():
    """Record the name of every kernel the backend calls ('activations.relu', ...)."""
    return spy.kernel_calls(backend_module, cast_backend, qualified=True)


def values(magnitude):
    return st.floats(-magnitude, magnitude, allow_nan=False, width=32)


@st.composite
def float_arrays(draw, min_dims=0, max_dims=3, max_side=5):
    """(array, dtype) with logits around +-3 or +-1000, often non-contiguous."""
    dtype = draw(FLOATS)
    magnitude = draw(st.sampled_from([3.0, 1000.0]))
    a = draw(arrays(dtype=dtype, min_dims=min_dims, max_dims=max_dims, max_side=max_side,
                    elements=values(magnitude)))
    return a, np.dtype(dtype)


def assert_matches(actual, expected, tol, scale=1.0, what=""):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale, equal_nan=True,
                               err_msg=what)


def same_shape_like(draw, a, magnitude=3.0):
    """Another array of ``a``'s shape and dtype (possibly laid out differently)."""
    return draw(arrays(shape=a.shape, dtype=a.dtype, elements=values(magnitude)))


# ---------------------------------------------------------------- what is covered
UNARY = ("relu", "tanh", "sigmoid", "gelu", "silu")
# backward primitive -> the forward whose *output* it takes as its first argument
# (None: it takes the forward's input x)
BACKWARD = {"relu_backward": "relu", "tanh_backward": "tanh", "sigmoid_backward": "sigmoid",
            "gelu_backward": None, "silu_backward": None}
ARITHMETIC = ("add", "sub", "mul", "div")
ALONG_DIM = ("softmax", "log_softmax")
ALONG_DIM_BACKWARD = {"softmax_backward": "softmax", "log_softmax_backward": "log_softmax"}
REDUCTIONS = ("sum", "logsumexp")
# float32 <-> bfloat16 ``cast`` (a mixin's override: test_bfloat16_casts.py, bit for bit)
CASTS = ("to_bfloat16", "from_bfloat16")


def test_every_primitive_the_numba_backend_overrides_is_tested_here():
    overridden = {name for name in vars(NumbaBackend)
                  if not name.startswith("_") and callable(getattr(NumbaBackend, name))
                  and hasattr(NumpyBackend, name)}
    tested = (set(UNARY) | set(BACKWARD) | set(ARITHMETIC) | set(ALONG_DIM)
              | set(ALONG_DIM_BACKWARD) | set(REDUCTIONS))
    assert overridden == tested
    assert set(NumbaBackend.min_sizes) == tested | set(CASTS)


# ---------------------------------------------------------------- elementwise
@pytest.mark.parametrize("op", UNARY)
@given(data=float_arrays())
def test_activation_kernel_matches_reference(op, data):
    x, dtype = data
    with kernel_calls() as calls:
        out = getattr(NUMBA, op)(x)
    assert calls == [f"activations.{op}"]
    assert_matches(out, getattr(REFERENCE, op)(x), TOL[dtype], what=op)


@pytest.mark.parametrize("op", sorted(BACKWARD))
@given(data=st.data())
def test_activation_backward_kernel_matches_reference(op, data):
    x, dtype = data.draw(float_arrays())
    magnitude = data.draw(st.sampled_from([3.0, 1000.0]))
    grad = same_shape_like(data.draw, x, magnitude)
    forward = BACKWARD[op]
    first = getattr(REFERENCE, forward)(x) if forward else x
    with kernel_calls() as calls:
        out = getattr(NUMBA, op)(first, grad)
    assert calls == [f"activations.{op}"]
    assert_matches(out, getattr(REFERENCE, op)(first, grad), TOL[dtype],
                   scale=max(1.0, float(np.abs(grad).max(initial=0))), what=op)


@pytest.mark.parametrize("op", ARITHMETIC)
@given(data=st.data())
def test_arithmetic_kernel_is_bit_for_bit_numpy_including_division_by_zero(op, data):
    a, dtype = data.draw(float_arrays())
    b = data.draw(arrays(shape=a.shape, dtype=dtype,
                         elements=st.one_of(st.just(0.0), st.just(-0.0), values(1000.0))))
    with kernel_calls() as calls:
        with np.errstate(all="ignore"):  # x / 0 and overflow are part of the contract
            out = getattr(NUMBA, op)(a, b)
            expected = getattr(REFERENCE, op)(a, b)
    assert calls == [f"arithmetic.{op}"]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


# ---------------------------------------------------------------- special values
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1000.0, -1000.0, 1e-30, -2.5, 88.7, -88.7,
           89.0, -104.0, 710.0, -746.0, 0.5]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_kernel_matches_reference_on_nan_inf_and_extreme_values(dtype):
    with np.errstate(all="ignore"):
        x = np.array(SPECIAL, dtype=dtype)
        g = np.linspace(-2, 2, x.size).astype(dtype)
        rows = np.stack([x, x[::-1], np.full_like(x, -np.inf), np.full_like(x, 1000.0),
                         np.linspace(-1000, 1000, x.size).astype(dtype)])
        grows = np.stack([g] * rows.shape[0])
        tol = TOL[np.dtype(dtype)]
        for op in UNARY:
            assert_matches(getattr(NUMBA, op)(x), getattr(REFERENCE, op)(x), tol, what=op)
        for op, forward in BACKWARD.items():
            first = getattr(REFERENCE, forward)(x) if forward else x
            assert_matches(getattr(NUMBA, op)(first, g), getattr(REFERENCE, op)(first, g), tol,
                           scale=2.0, what=op)
        for op in ARITHMETIC:
            np.testing.assert_array_equal(getattr(NUMBA, op)(x, x[::-1].copy()),
                                          getattr(REFERENCE, op)(x, x[::-1].copy()), err_msg=op)
        for op in ALONG_DIM:
            for dim in (0, 1):
                out, expected = getattr(NUMBA, op)(rows, dim), getattr(REFERENCE, op)(rows, dim)
                assert_matches(out, expected, tol, what=f"{op} dim={dim}")
        finite = rows[[3, 4]]  # the rows a real softmax output comes from
        for op, forward in ALONG_DIM_BACKWARD.items():
            y = getattr(REFERENCE, forward)(finite, 1)
            assert_matches(getattr(NUMBA, op)(y, grows[:2], 1),
                           getattr(REFERENCE, op)(y, grows[:2], 1), tol, scale=2.0 * x.size,
                           what=op)
        for dims in [(0,), (1,), (0, 1)]:
            assert_matches(NUMBA.logsumexp(rows, dims, False), REFERENCE.logsumexp(rows, dims, False),
                           tol, what=f"logsumexp {dims}")
        assert_matches(NUMBA.sum(rows, (1,), False), REFERENCE.sum(rows, (1,), False), tol,
                       scale=1e4, what="sum")
