"""How the compiler tests compare a compiled result with the engine's (eager) one.

``same_bits`` -- bit for bit: what a kernel must give when it runs the engine's
operations in the engine's order (NaN counts as equal to NaN whatever its payload:
numpy and Numba may set its sign differently, and nothing can read it).
``close_ulps`` -- within a few units in the last place: transcendental functions, which
the kernel computes in float64 and rounds once while numpy's float32 SIMD versions are
not correctly rounded (lowering.py).
"""
import numpy as np

import learntorch
from learntorch.backends.numba_cpu.backend import NumbaBackend


def as_array(x):
    if isinstance(x, learntorch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def is_float(dtype):
    """numpy's floats, and bfloat16 (an ml_dtypes type, whose numpy kind is "V")."""
    return dtype.kind == "f" or dtype == learntorch.bfloat16.np


def same_bits(got, expected, what="result"):
    a, b = as_array(got), as_array(expected)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
    if is_float(a.dtype):
        nan = np.isnan(a)
        assert (nan == np.isnan(b)).all(), f"{what}: NaN in different places"
        bits = a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")
        different = ~(bits | nan)
        assert not different.any(), (f"{what}: {int(different.sum())} elements differ, e.g. "
                                     f"{a[different][:3]} vs {b[different][:3]}")
    else:
        assert (a == b).all(), f"{what}: values differ"


def close_ulps(got, expected, ulps=2, what="result"):
    a, b = as_array(got), as_array(expected)
    assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
    nan = np.isnan(a)
    assert (nan == np.isnan(b)).all(), f"{what}: NaN in different places"
    finite = np.isfinite(a) & np.isfinite(b)
    assert (a[~finite & ~nan] == b[~finite & ~nan]).all(), f"{what}: infinities differ"
    spacing = np.spacing(np.maximum(np.abs(a[finite]), np.abs(b[finite])).astype(a.dtype))
    error = np.abs(a[finite].astype(np.float64) - b[finite].astype(np.float64))
    worst = (error / spacing).max(initial=0)
    assert worst <= ulps, f"{what}: {worst:.1f} units in the last place apart (allowed {ulps})"


def same_as_eager_with_gelu(got, expected, what="result"):
    """A program with exact gelu against eager: bit for bit when the engine runs on the
    Numba backend, whose gelu kernel is the compiled kernels' formula (``fast_gelu``); in
    the reference tier the engine computes gelu with numpy in float64, a few float32 units
    away, so there the results agree to float32's precision."""
    if isinstance(learntorch.backends.current, NumbaBackend):
        same_bits(got, expected, what)
    else:
        np.testing.assert_allclose(as_array(got), as_array(expected), rtol=4e-6, atol=1e-6,
                                   err_msg=what)
