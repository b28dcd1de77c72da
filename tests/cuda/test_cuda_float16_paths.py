"""float16 cuda arrays take paths written so that they compile for a GPU, and get numpy's answers.

numba-cuda compiles float16 arithmetic, but not a float16 constant captured
by a kernel, a float16 -> bool conversion, nor a float16 atomic add
(``test_cuda_kernels_compile_to_ptx.py`` finds such kernels).  So casts to
bool are ``x != 0``, logical ops test ``!= 0``, constants are converted
inside the kernels, and ``np.add.at`` on float16 adds up in float32.  These
specs check that those spellings still compute what numpy computes.
"""
import numpy as np

from learntorch.backends.cuda.array import CudaArray

HALF = np.float16


def _device(host):
    return CudaArray.from_host(np.asarray(host))


def test_float16_to_bool_cast_is_nonzero_with_nan_true():
    host = np.array([[0.0, -0.0, 1.5], [np.nan, -np.inf, 6e-8]], HALF)  # 6e-8: a subnormal
    got = _device(host).astype(np.bool_).copy_to_host()
    np.testing.assert_array_equal(got, host.astype(np.bool_))
    # through copyto into a strided bool view too
    out = CudaArray.from_host(np.zeros((3, 2), np.bool_))
    np.copyto(out.T, _device(host))
    np.testing.assert_array_equal(out.copy_to_host(), host.astype(np.bool_).T)


def test_logical_ops_on_float16_treat_nonzero_and_nan_as_true():
    a = np.array([0.0, 2.0, np.nan, 0.0, -1.0], HALF)
    b = np.array([0.0, 0.0, 1.0, np.nan, -3.0], HALF)
    for op in (np.logical_and, np.logical_or, np.logical_xor):
        np.testing.assert_array_equal(op(_device(a), _device(b)).copy_to_host(), op(a, b),
                                      err_msg=op.__name__)


def test_float16_sum_prod_and_matmul_match_numpy():
    rng = np.random.default_rng(0)
    rows = rng.uniform(-1, 1, (3, 40)).astype(HALF)  # 40 > SERIAL_UP_TO: the shared-memory tree
    for op in (np.sum, np.prod):
        got = op(_device(rows), axis=1).copy_to_host()
        assert got.dtype == HALF
        np.testing.assert_allclose(got, op(rows.astype(np.float32), axis=1), rtol=2e-2,
                                   atol=2e-2, err_msg=op.__name__)
    a, b = rng.uniform(-1, 1, (5, 7)).astype(HALF), rng.uniform(-1, 1, (7, 3)).astype(HALF)
    got = np.matmul(_device(a), _device(b)).copy_to_host()
    assert got.dtype == HALF
    np.testing.assert_allclose(got, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-2,
                               atol=1e-2)


def test_float16_add_at_accumulates_repeated_indices_in_place():
    base = np.arange(6, dtype=HALF).reshape(2, 3)
    index = np.array([2, 0, 2, 2])
    values = np.array([0.5, 1.0, 0.25, 0.125], HALF)
    a = _device(base)
    view = a[1]  # a view: the sums must land in a's memory
    np.add.at(view, index, _device(values))
    expected = base.copy()
    np.add.at(expected[1], index, values)  # exact in float16 here, so any order agrees
    got = a.copy_to_host()
    assert got.dtype == HALF
    np.testing.assert_array_equal(got, expected)
