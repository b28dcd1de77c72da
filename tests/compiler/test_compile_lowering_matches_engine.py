"""Every scalar formula of the compiler (lowering.py) computes what the engine's op computes.

Each op of the lowering table runs inside a small program, once eagerly and once
compiled (the op then is one line of a generated kernel), on values that include the
awkward ones (0, -0, infinities, NaN, subnormals, large).  Arithmetic, comparisons and
selections must agree bit for bit; transcendental functions within two units in the
last place (the kernel rounds a float64 value once; numpy's float32 SIMD functions are
not correctly rounded).  The same programs run under backend="reference" (the kernel's
source as plain Python), which must agree with the Numba kernel bit for bit where the
operation is plain arithmetic.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from learntorch.backends.numba_cpu.backend import NumbaBackend
from learntorch.compiler import lowering

from compile_compare import close_ulps, same_as_eager_with_gelu, same_bits

EXACT, ULPS, GELU = "exact", "ulps", "gelu"
# how many units in the last place a transcendental may be off: the kernel rounds a float64
# value once, the engine's numpy float32 functions are not correctly rounded; silu adds a
# rounded product; and gelu's tanh form multiplies its input's error by |2u| inside
# sigmoid(2u) (u = 0.8 (x + 0.045 x^3), up to about 40 on these inputs)
ALLOWED_ULPS = {"Silu": 3, "Gelu/tanh": 64}
T = learntorch

# lowering-table name -> (program of x, y; how it must agree)
PROGRAMS = {
    "Add": (lambda x, y: (x + y) * 1.0 + learntorch.add(x, y, alpha=2), EXACT),
    "Sub": (lambda x, y: (x - y) - 0.5 - learntorch.sub(x, y, alpha=0.25), EXACT),
    "Rsub": (lambda x, y: (2.0 - x) * 1.0, EXACT),
    "Mul": (lambda x, y: x * y * 0.1, EXACT),
    "Div": (lambda x, y: x / y / 3.0, EXACT),
    # the exponents numpy does exactly (x*x, sqrt, 1/x, x, 1), and any other one (pow)
    "Pow": (lambda x, y: x ** 2 + x.abs() ** 0.5 + x ** -1 + x ** 1 + x ** 0, EXACT),
    "Pow/general": (lambda x, y: x.abs() ** 3.0 * 1.0, ULPS),
    "PowTensors": (lambda x, y: x.abs() ** y * 1.0, ULPS),
    "PowNumberBase": (lambda x, y: 2.0 ** x * 1.0, ULPS),
    "Neg": (lambda x, y: -x * 1.0, EXACT),
    "Abs": (lambda x, y: x.abs() * 1.0, EXACT),
    "Sqrt": (lambda x, y: x.sqrt() * 1.0, EXACT),
    "Rsqrt": (lambda x, y: x.rsqrt() * 1.0, EXACT),
    "Reciprocal": (lambda x, y: x.reciprocal() * 1.0, EXACT),
    "Exp": (lambda x, y: x.exp() * 1.0, ULPS),
    "Log": (lambda x, y: x.log() * 1.0, ULPS),
    "Log2": (lambda x, y: x.log2() * 1.0, ULPS),
    "Log10": (lambda x, y: x.log10() * 1.0, ULPS),
    "Log1p": (lambda x, y: x.log1p() * 1.0, ULPS),
    "Expm1": (lambda x, y: x.expm1() * 1.0, ULPS),
    "Sin": (lambda x, y: x.sin() * 1.0, ULPS),
    "Cos": (lambda x, y: x.cos() * 1.0, ULPS),
    "Tanh": (lambda x, y: x.tanh() * 1.0, ULPS),
    "Erf": (lambda x, y: learntorch.erf(x) * 1.0, EXACT),
    "Relu": (lambda x, y: x.relu() * 1.0, EXACT),
    "LeakyRelu": (lambda x, y: F.leaky_relu(x, 0.2) * 1.0, EXACT),
    "Sigmoid": (lambda x, y: x.sigmoid() * 1.0, ULPS),
    "Silu": (lambda x, y: F.silu(x) * 1.0, ULPS),
    # bit for bit on the Numba backend, to float32's precision in the reference tier
    "Gelu": (lambda x, y: F.gelu(x) * 1.0, GELU),
    "Gelu/tanh": (lambda x, y: F.gelu(y, approximate="tanh") * 1.0, ULPS),
    "Softplus": (lambda x, y: F.softplus(x, beta=2.0, threshold=5.0) * 1.0, ULPS),
    "Clamp": (lambda x, y: x.clamp(-1.0, 2.0) * 1.0 + x.clamp(min=0.5) + x.clamp(max=-0.5)
              + x.clamp(3.0, 1.0), EXACT),
    "Maximum": (lambda x, y: learntorch.maximum(x, y) * 1.0, EXACT),
    "Minimum": (lambda x, y: learntorch.minimum(x, y) * 1.0, EXACT),
    "Where": (lambda x, y: learntorch.where(x > y, x, y * 2) * 1.0
              + learntorch.where(x > 0, x, 0.1), EXACT),
    "MaskedFill": (lambda x, y: x.masked_fill(x > y, 0.25) * 1.0, EXACT),
    # float32 -> float64 -> float32, and float64 -> float32 (a float64 tensor's .double() is itself)
    "ToDtype": (lambda x, y: (x * 3).double().float() * 1.0, EXACT),
    "eq": (lambda x, y: learntorch.where(x == y, x, y) * 1.0, EXACT),
    "ne": (lambda x, y: learntorch.where(x != y, x, y) * 1.0, EXACT),
    "lt": (lambda x, y: learntorch.where(x < y, x, y) * 1.0, EXACT),
    "le": (lambda x, y: learntorch.where(x <= 0.5, x, y) * 1.0, EXACT),
    "gt": (lambda x, y: learntorch.where(x > y, x, y) * 1.0, EXACT),
    "ge": (lambda x, y: learntorch.where(x >= y, x, y) * 1.0, EXACT),
    "logical_and": (lambda x, y: learntorch.where(learntorch.logical_and(x > 0, y), x, y) * 1.0, EXACT),
    "logical_or": (lambda x, y: learntorch.where(learntorch.logical_or(x > 0, y > 0), x, y) * 1.0, EXACT),
    "logical_xor": (lambda x, y: learntorch.where(learntorch.logical_xor(x > 0, y > 0), x, y) * 1.0, EXACT),
    "logical_not": (lambda x, y: learntorch.where(learntorch.logical_not(x > 0), x, y) * 1.0, EXACT),
    "bitwise_and": (lambda x, y: learntorch.where((x > 0) & (y > 0), x, y) * 1.0, EXACT),
    "bitwise_or": (lambda x, y: learntorch.where((x > 0) | (y > 0), x, y) * 1.0, EXACT),
    "bitwise_xor": (lambda x, y: learntorch.where((x > 0) ^ (y > 0), x, y) * 1.0, EXACT),
    "bitwise_not": (lambda x, y: learntorch.where(~(x > 0), x, y) * 1.0, EXACT),
    "isnan": (lambda x, y: learntorch.where(x.isnan(), y, x) * 1.0, EXACT),
    "isinf": (lambda x, y: learntorch.where(x.isinf(), y, x) * 1.0, EXACT),
    "isfinite": (lambda x, y: learntorch.where(x.isfinite(), x, y) * 1.0, EXACT),
}

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -2.5, 1.0, 0.5, 100.0]


def inputs(dtype, shape=(40, 33), seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    y = (rng.standard_normal(shape) * 3).astype(dtype)
    flat = x.reshape(-1)
    flat[:len(SPECIAL)] = SPECIAL
    y.reshape(-1)[len(SPECIAL):2 * len(SPECIAL)] = SPECIAL
    y.reshape(-1)[:len(SPECIAL)] = SPECIAL[::-1]
    return learntorch.from_numpy(x), learntorch.from_numpy(y)


def test_every_formula_of_the_table_has_a_program_here():
    assert set(lowering.LOWERINGS) == {op_of(name) for name in PROGRAMS}


def op_of(name):
    return name.split("/")[0]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_compiled_op_computes_what_the_engine_computes(name, dtype):
    program, agreement = PROGRAMS[name]
    x, y = inputs(dtype)
    compiled = learntorch.compile(program)
    got, expected = compiled(x, y), program(x, y)
    assert compiled.kernels, f"{name} was not fused: {compiled.code}"
    assert any(op_of(name) in [n.op_name for n in k.group.nodes] for k in compiled.kernels)
    if agreement == EXACT:
        same_bits(got, expected, name)
    elif agreement == GELU:
        same_as_eager_with_gelu(got, expected, name)
    else:
        close_ulps(got, expected, ulps=ALLOWED_ULPS.get(name, 2), what=name)


@pytest.mark.parametrize("name", sorted(n for n, (_, a) in PROGRAMS.items() if a == EXACT))
def test_the_reference_backend_runs_the_same_source_to_the_same_bits(name):
    program, _ = PROGRAMS[name]
    x, y = inputs(np.float32, shape=(6, 9), seed=1)
    with np.errstate(all="ignore"):
        by_numba = learntorch.compile(program)(x, y)
        by_python = learntorch.compile(program, backend="reference")(x, y)
    same_bits(by_python, by_numba, name)


def test_gelu_is_the_numba_backends_own_formula_bit_for_bit():
    # the Numba backend's gelu (backends/numba_cpu/activations.py's kernel above its size
    # threshold), asked directly: the engine in the reference tier computes it with numpy
    x = learntorch.randn(64, 70) * 3
    program = lambda x: F.gelu(x) * 1.0  # noqa: E731
    same_bits(learntorch.compile(program)(x), NumbaBackend().gelu(x.numpy()), "gelu")
