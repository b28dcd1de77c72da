"""fast_gelu on float32 (computed in float32) is within 8 float32 ulp of x * Phi(x) for
x >= -9, keeps a small relative error in the left tail, where the textbook float32 formula
loses every digit, and gives the same bits in the gelu kernel, in a plain call and in the
compiler's generated kernels.

The exact value comes from mpmath at 30 digits (``x * ncdf(x)``); a unit in the last place
is that of the exact value rounded to float32.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from learntorch.backends.numba_cpu import activations
from learntorch.backends.numba_cpu.fast_gelu import TOP, fast_gelu

mpmath = pytest.importorskip("mpmath")
from ulps import ulps_from_exact  # noqa: E402  (it needs mpmath)


def gelu_kernel(x):
    out = np.empty_like(x)
    activations.gelu(x, out)
    return out


def exact_gelu(x):
    """x * Phi(x) of each number, to 30 digits (mpmath numbers)."""
    with mpmath.workdps(30):
        return [mpmath.mpf(float(v)) * mpmath.ncdf(mpmath.mpf(float(v))) for v in x]


def float32_ulps_from_exact(x, got):
    return ulps_from_exact(got, exact_gelu(x), np.float32)


def test_float32_gelu_is_within_8_units_of_the_exact_value():
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-9, 9, 1801), rng.standard_normal(1500) * 3,
                        rng.uniform(-1e-3, 1e-3, 200)]).astype(np.float32)
    x = x[x >= -9]
    ulps = float32_ulps_from_exact(x, gelu_kernel(x))
    assert ulps.max() <= 8, (ulps.max(), x[ulps.argmax()])
    assert np.median(ulps) <= 1.0   # most results are one of the two nearest floats


@settings(max_examples=200, deadline=None)
@given(st.floats(-9, 12, width=32))
def test_float32_gelu_is_within_8_units_for_any_float32(v):
    x = np.array([v], dtype=np.float32)
    assert float32_ulps_from_exact(x, gelu_kernel(x))[0] <= 8


def test_the_left_tail_keeps_five_digits_where_the_textbook_formula_keeps_none():
    x = np.linspace(-13, -5, 401).astype(np.float32)
    exact = np.array([float(e) for e in exact_gelu(x)])
    ours = gelu_kernel(x).astype(np.float64)
    assert np.all(np.abs(ours - exact) <= 1e-5 * np.abs(exact))
    # 0.5 * x * (1 + erf(x / sqrt 2)) in float32 (what a float32 erf gives): 1 + erf
    # cancels, and from x = -5.6 on it is exactly 0
    with mpmath.workdps(30):
        erf32 = np.array([float(mpmath.erf(float(v) / mpmath.sqrt(2))) for v in x], np.float32)
    textbook = (np.float32(0.5) * x * (np.float32(1) + erf32)).astype(np.float64)
    assert np.max(np.abs(textbook - exact) / np.abs(exact)) > 0.1


def test_special_values():
    tiny = np.float32(1e-40)  # a subnormal: gelu(x) = x / 2 to float32's precision
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, TOP, -TOP, 3e38, -3e38, tiny, -tiny],
                 dtype=np.float32)
    with np.errstate(invalid="ignore"):
        got = gelu_kernel(x)
    assert got[0] == 0 and not np.signbit(got[0])
    assert got[1] == 0 and np.signbit(got[1])
    assert got[2] == np.inf
    assert np.isnan(got[3]) and np.isnan(got[4])    # -inf * 0, as torch's formula; NaN
    assert got[5] == TOP and got[7] == np.float32(3e38)
    assert got[6] == 0 and np.signbit(got[6]) and got[8] == 0 and np.signbit(got[8])
    assert got[9] == tiny / 2 and got[10] == -tiny / 2


def test_kernel_plain_call_and_compiled_kernel_give_the_same_bits():
    x = np.random.default_rng(2).standard_normal(4096).astype(np.float32) * 4
    kernel = gelu_kernel(x)
    plain = np.array([fast_gelu(v) for v in x], dtype=np.float32)
    np.testing.assert_array_equal(kernel.view(np.int32), plain.view(np.int32))
    # a compiled bias add + gelu against eager (the engine's own gelu kernel)
    t, b = learntorch.from_numpy(x.reshape(64, 64)), learntorch.from_numpy(x[:64].copy())
    compiled = learntorch.compile(lambda t, b: learntorch.nn.functional.gelu(t + b))
    with learntorch.no_grad():
        got, eager = compiled(t, b).numpy(), learntorch.nn.functional.gelu(t + b).numpy()
    assert compiled.programs[-1].kernels, "the bias add and gelu were fused into a kernel"
    np.testing.assert_array_equal(got.view(np.int32), eager.view(np.int32))


def test_float64_keeps_the_float64_formula():
    assert isinstance(fast_gelu(np.float64(0.5)), np.float64)
    assert isinstance(fast_gelu(np.float32(0.5)), np.float32)
    x = np.linspace(-6, 6, 301)
    got = gelu_kernel(x)
    assert np.array_equal(got, [fast_gelu(v) for v in x])
    exact = np.array([float(e) for e in exact_gelu(x)])
    # float64's textbook formula: 1 + erf cancels in the left tail (|x| * 3e-16 there)
    assert np.all(np.abs(got - exact) <= 4 * np.spacing(np.abs(exact)) + np.abs(x) * 3e-16)
