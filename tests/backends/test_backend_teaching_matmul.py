"""The tiled teaching matmul (not on the hot path) multiplies like np.matmul."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from learntorch.backends.numba_cpu import teaching_matmul
from learntorch.backends.numba_cpu.backend import NumbaBackend

from oracle import arrays

TILE = teaching_matmul.TILE


@st.composite
def matrix_pairs(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    # sides around the tile size, so ragged last tiles and several tiles both occur
    side = st.sampled_from([1, 2, 7, TILE - 1, TILE, TILE + 3, 2 * TILE + 5])
    n, k, m = draw(side), draw(side), draw(side)
    a = draw(arrays(shape=(n, k), dtype=dtype, elements=st.floats(-2, 2, width=32)))
    b = draw(arrays(shape=(k, m), dtype=dtype, elements=st.floats(-2, 2, width=32)))
    return a, b


@given(matrix_pairs())
def test_tiled_matmul_matches_numpy_over_ragged_tiles_and_strided_views(pair):
    a, b = pair
    out = teaching_matmul.matmul(a, b)
    expected = np.matmul(a, b)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    assert out.flags.c_contiguous
    tol = 1e-5 if a.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol * a.shape[1] * 4)


def test_wrong_inner_sizes_are_a_runtime_error_naming_both_shapes():
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(2x3 and 4x5\)"):
        teaching_matmul.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(RuntimeError, match=r"\(6 and 6x1\)"):
        teaching_matmul.matmul(np.ones(6), np.ones((6, 1)))


def test_mixed_or_unsupported_dtypes_are_a_runtime_error_with_the_fix():
    with pytest.raises(RuntimeError, match=r"float32 and float64.*astype"):
        teaching_matmul.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float64))
    with pytest.raises(RuntimeError, match=r"int64 and int64"):
        teaching_matmul.matmul(np.ones((2, 2), np.int64), np.ones((2, 2), np.int64))


def test_the_backend_keeps_blas_for_matmul():
    assert "matmul" not in vars(NumbaBackend)  # inherited np.matmul from the reference
