"""The machinery behind ``pytest --through-compile`` (through_compile.py) and what its first
runs over tests/ops found and fixed.

The hook must catch a compiled program that differs from eager (else the whole run could
pass while checking nothing), compare bit for bit exactly when every kernel keeps the
engine's operation order, and leave the test's own inputs with the compiled gradients.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from learntorch.compiler import fusion, lowering

import through_compile
from compile_compare import same_bits


@pytest.fixture
def hook(monkeypatch):
    monkeypatch.setattr(fusion, "MIN_OPS", 1)
    return through_compile.ThroughCompile(["numba", "reference", "eager"])


def strided(values):
    wide = np.zeros(2 * len(values))
    wide[::2] = values
    return wide[::2]


def test_a_program_that_agrees_passes_and_is_counted_bit_for_bit(hook):
    x = learntorch.from_numpy(strided([0.5, -1.0, 2.0])).requires_grad_()
    y = learntorch.tensor([3.0, 0.25, -2.0], dtype=learntorch.float64, requires_grad=True)
    out = hook.forward(lambda a, b: a * b - a / 4.0, [x, y])
    hook.backward(out, [x, y], learntorch.ones(3, dtype=learntorch.float64))
    same_bits(out, x.detach() * y.detach() - x.detach() / 4.0)
    same_bits(x.grad, y.detach() - 0.25)
    for backend in ("numba", "reference"):
        assert hook.stats[backend]["fused"] == 1 and hook.stats[backend]["bit for bit"] == 1
    assert hook.stats["eager"]["fused"] == 0


def test_a_kernel_that_differs_from_eager_is_caught(hook, monkeypatch):
    monkeypatch.setitem(lowering.LOWERINGS, "Mul", lambda emit, dtype, a, b:
                        f"{emit.operand(a, dtype)} * {emit.operand(b, dtype)} + "
                        f"{emit.const(1e-3, dtype)}")
    x = learntorch.tensor([1.0, 2.0, 3.0])
    with pytest.raises(AssertionError, match=r"through compile\(numba\): forward: 3 elements"):
        hook.forward(lambda a: a * 3.0, [x])


def test_an_approximate_kernel_is_compared_within_the_dtypes_tolerance(hook):
    x = learntorch.linspace(-3, 3, 50).requires_grad_()
    out = hook.forward(lambda a: a.exp(), [x])
    hook.backward(out, [x], learntorch.ones(50))
    assert hook.stats["numba"]["within tolerance"] == 1
    assert "math.exp" in hook.approximate


def test_an_exception_must_be_the_one_eager_raises(hook):
    x, y = learntorch.ones(2, 3), learntorch.ones(4, 3)
    with pytest.raises(RuntimeError, match="size"):
        hook.forward(lambda a, b: a + b, [x, y])
    assert hook.stats["numba"]["raised as eager"] == 1


def test_twins_have_the_values_dtype_and_strides_but_not_the_memory():
    x = learntorch.from_numpy(strided([1.0, 2.0, 3.0])).requires_grad_()
    t = through_compile.twin(x)
    assert t.stride() == x.stride() == (2,) and t.requires_grad and t.is_leaf
    same_bits(t.detach(), x.detach())
    with learntorch.no_grad():
        t.mul_(0)
    assert x.detach().tolist() == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------- what the runs found
def test_an_expand_of_a_strided_input_replays_with_the_inputs_strides():
    """The capture copied inputs contiguously, so expand recorded the copy's strides and
    the replay read x[::2]'s memory with them (wrong values)."""
    for requires_grad in (False, True):
        x = learntorch.from_numpy(strided([0.0, 1.0])).requires_grad_(requires_grad)
        program = lambda a: a.expand(3, 2) * 2.0  # noqa: E731
        same_bits(learntorch.compile(program)(x), program(x))


def test_a_kernel_whose_values_only_python_reads_is_left_to_the_engine():
    """3 / x is fused into (reciprocal, mul); when only its grad_fn is read, no value leaves
    the group, and the generated line was `(,) = ...`: a SyntaxError."""
    program = lambda x: (3 / x).grad_fn.name()  # noqa: E731
    x = learntorch.tensor([2.0], requires_grad=True)
    assert learntorch.compile(program)(x) == program(x) == "MulBackward0"


def test_a_fill_of_a_view_is_captured():
    """The tracer's wrapper of apply_inplace did not pass on its overlap_ok argument."""
    program = lambda x: x.clone().view(-1)[:1].fill_(2.0)  # noqa: E731
    x = learntorch.tensor([1.0, 5.0])
    same_bits(learntorch.compile(program, fullgraph=True)(x), program(x))


def test_a_nan_bound_of_clamp_gives_nan_in_a_kernel_too():
    x = learntorch.tensor([float("nan"), -5.0, 0.5, 5.0])
    for program in (lambda a: a.clamp(min=float("nan")) * 2.0,
                    lambda a: a.clamp(max=float("nan")) * 2.0,
                    lambda a: a.clamp(-1.0, 1.0) * 2.0):
        compiled = learntorch.compile(program)
        same_bits(compiled(x), program(x))
        assert compiled.kernels


@pytest.mark.parametrize("scalar", [-1, 2, 0, 1, 0.5, True])
def test_a_bool_tensor_compared_with_a_number_is_compared_in_the_engines_type(scalar):
    """bool against -1 compares as integers (True != -1): it was compared as bools."""
    x = learntorch.tensor([True, False])
    program = lambda a: learntorch.logical_and(a != scalar, a <= scalar)  # noqa: E731
    compiled = learntorch.compile(program)
    same_bits(compiled(x), program(x))
    assert compiled.kernels


# ---------------------------------------------------------------- shared and exact kernels
def test_two_layers_doing_the_same_share_one_compiled_kernel():
    learntorch.manual_seed(0)
    model = learntorch.nn.Sequential(learntorch.nn.Linear(6, 8), learntorch.nn.GELU(),
                                     learntorch.nn.Linear(8, 8), learntorch.nn.GELU())
    compiled = learntorch.compile(model)
    x = learntorch.randn(4, 6)
    with learntorch.no_grad():
        close = compiled(x)
    np.testing.assert_allclose(close.numpy(), model(x).detach().numpy(), rtol=1e-6, atol=1e-7)
    first, second = compiled._compiled.kernels
    assert first.text != second.text, "each kernel's readable source names its own nodes"
    assert first.source.canonical == second.source.canonical
    assert first.fn is second.fn, "one compiled kernel serves both layers"


@pytest.mark.parametrize("program, exact", [
    (lambda x: (x * 2.0 + 1.0).relu(), True),
    (lambda x: (x * 2.0).clamp(-1.0, 1.0).amax(), True),
    (lambda x: (x * 2.0).exp(), False),
    (lambda x: F.gelu(x * 2.0), False),
    (lambda x: (x * 2.0).sum(), False),
    (lambda x: (x * 2.0) ** 3.0, False),
    (lambda x: (x * 2.0) ** 2, True),
])
def test_a_kernel_says_whether_it_gives_the_engines_bits(program, exact):
    x = learntorch.linspace(-2, 2, 64)
    compiled = learntorch.compile(program)
    got = compiled(x)
    (kernel,) = compiled.kernels
    assert kernel.exact is exact, kernel.source.approximate
    if exact:
        same_bits(got, program(x))
