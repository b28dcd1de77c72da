"""Every entry of the fast tier's ``ARRAY_BACKWARD`` computes what the reference ``backward`` does.

For each registered Function class, a program makes a node of that class from hypothesis
inputs (0-d, broadcast, strided, float32/float64, with inf and nan), then the node's
reference ``backward`` (on Tensors) and the registered array backward (on arrays) run on
the same output gradient.  After each gradient is fitted to its input (broadcasting's
backward, as the engine does), the two must be equal bit for bit: the entries are
promised to make the same backend calls in the same order.  Both run on the numpy
backend, so the comparison is about the tier alone.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
import learntorch.nn.functional as F
from learntorch import backends, tiers
from learntorch._fast.array_backward import ARRAY_BACKWARD
from learntorch._fast.engine import _fitted
from learntorch.autograd.engine import _fit
from learntorch.nn._functional.linear import Linear
from learntorch.ops import activations, arithmetic, shape, softmax, unary

from oracle import broadcastable_pair, noncontiguous

FLOAT_DTYPES = st.sampled_from([np.float32, np.float64])
WITH_SPECIALS = st.one_of(st.floats(-3, 3, width=32),
                          st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0]))


def _leaf(a):
    return learntorch.from_numpy(a).requires_grad_(True)


def _two(draw, dtype):
    a, b = draw(broadcastable_pair(dtype=dtype, elements=WITH_SPECIALS))
    return _leaf(a), _leaf(b)


def _one(draw, dtype):
    a, _ = draw(broadcastable_pair(dtype=dtype, elements=WITH_SPECIALS))
    return _leaf(a)


def _number(draw):
    return draw(st.sampled_from([2.5, -0.5, 1.0, 3]))


# Function class -> program(draw, dtype) returning an output whose grad_fn runs that class
PROGRAMS = {
    arithmetic.Add: lambda d, t: (lambda x, y: learntorch.add(x, y, alpha=d(st.sampled_from(
        [1, 2.5, -1]))))(*_two(d, t)),
    arithmetic.Sub: lambda d, t: (lambda x, y: x - y)(*_two(d, t)),
    arithmetic.Rsub: lambda d, t: _number(d) - _one(d, t),
    arithmetic.Mul: lambda d, t: d(st.sampled_from([
        lambda x, y: x * y, lambda x, y: x * 2.5, lambda x, y: x * y.detach(),
        lambda x, y: x * y.double()]))(*_two(d, t)),  # (float32 * float64: operands widened)
    unary.Neg: lambda d, t: -_one(d, t),
    unary.Exp: lambda d, t: _one(d, t).exp(),
    activations.Tanh: lambda d, t: _one(d, t).tanh(),
    activations.Sigmoid: lambda d, t: _one(d, t).sigmoid(),
    activations.Relu: lambda d, t: _one(d, t).relu(),
    activations.Silu: lambda d, t: F.silu(_one(d, t)),
    softmax.Softmax: lambda d, t: (lambda x: x.softmax(dim=d(st.integers(-x.ndim or -1, max(
        x.ndim - 1, 0)))))(_one(d, t)),
    softmax.LogSoftmax: lambda d, t: (lambda x: x.log_softmax(dim=d(st.integers(-x.ndim or -1, max(
        x.ndim - 1, 0)))))(_one(d, t)),
    Linear: lambda d, t: _linear(d, t),
    shape.ToDtype: lambda d, t: _one(d, t).to(d(st.sampled_from(
        [learntorch.float16, learntorch.bfloat16, learntorch.float32, learntorch.float64]).filter(
        lambda to: to.np != t))),
}


def _linear(draw, dtype):
    rows = draw(st.sampled_from([(), (3,), (2, 3)]))
    n_in, n_out = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    x = draw(st.sampled_from([True, False]))
    values = lambda shape: noncontiguous(draw, np.random.default_rng(len(shape)).standard_normal(
        shape).astype(dtype))
    inp = learntorch.from_numpy(values(rows + (n_in,))).requires_grad_(x)
    weight = _leaf(values((n_out, n_in)))
    bias = _leaf(values((n_out,))) if draw(st.booleans()) else None
    return F.linear(inp, weight, bias)


# The families of entries with a test file of their own (each checks that it covers its file)
TESTED_ELSEWHERE = {"array_backward.nn_layers": "test_nn_layer_tiers.py",
                    "array_backward.losses": "test_array_backward_losses.py"}


def test_every_array_backward_entry_has_a_program_here_or_in_its_family_test():
    """Entries of core.py have a program above; every other entry lives in a file whose
    family test (TESTED_ELSEWHERE) compares it with the reference."""
    for cls, fn in ARRAY_BACKWARD.items():
        family = fn.__module__.rsplit(".", 2)[-2:]
        family = ".".join(family)
        assert cls in PROGRAMS or family in TESTED_ELSEWHERE, \
            f"add a program for {cls.__name__} (its entry is in {fn.__module__})"


@pytest.mark.parametrize("cls", sorted(PROGRAMS, key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=FLOAT_DTYPES)
def test_array_backward_is_the_reference_backward_bit_for_bit(cls, data, dtype):
    with tiers.use("fast"), backends.use("numpy"):
        out = PROGRAMS[cls](data.draw, dtype)
        node = out.grad_fn
        assert node is not None and node._function is cls, f"the program made {node}"
        grad = noncontiguous(data.draw, np.random.default_rng(1).standard_normal(
            out.shape).astype(out.dtype.np))
        with learntorch.no_grad():
            expected = node._function.backward(node, learntorch.from_numpy(grad))
            got = ARRAY_BACKWARD[cls](node, grad)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for i, meta in enumerate(node._input_meta):
        e = expected[i] if i < len(expected) else None
        g = got[i] if i < len(got) else None
        if meta is None:
            continue
        assert (e is None) == (g is None), f"input {i}: one side gave no gradient"
        if e is None:
            continue
        with learntorch.no_grad(), backends.use("numpy"):
            e = _fit(node, i, e, meta)._data
            g = _fitted(node, i, g, meta)
        assert e.dtype == g.dtype and e.shape == g.shape
        assert np.array_equal(e, g, equal_nan=True), f"input {i}: {e} != {g}"


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 300), n_out=st.integers(1, 4), scale=st.sampled_from([1.0, 3.0, 1e3]))
def test_linear_array_backward_sums_a_bfloat16_bias_gradient_as_the_reference(rows, n_out, scale):
    """Autocast's linear layers run in bfloat16: the bias gradient is a sum over the batch,
    which the reference adds in float32 (``backend.sum``) and rounds once; summing in
    bfloat16 itself would stall (1024 + 1 is 1024 in bfloat16)."""
    rng = np.random.default_rng(rows)
    bf16 = learntorch.bfloat16.np
    with tiers.use("fast"), backends.use("numpy"):
        x = learntorch.from_numpy(rng.standard_normal((rows, 3)).astype(bf16))
        weight = _leaf(rng.standard_normal((n_out, 3)).astype(bf16))
        bias = _leaf(rng.standard_normal(n_out).astype(bf16))
        node = F.linear(x, weight, bias).grad_fn
        grad = (rng.random((rows, n_out)) * scale + scale).astype(bf16)
        with learntorch.no_grad():
            expected = node._function.backward(node, learntorch.from_numpy(grad))[2]
            got = ARRAY_BACKWARD[Linear](node, grad)[2]
            expected = _fit(node, 2, expected, node._input_meta[2])._data
    assert got.dtype == expected.dtype == bf16
    assert np.array_equal(got, expected)



@settings(max_examples=40, deadline=None)
@given(data=st.data(), backend=st.sampled_from(["numpy", "numba-kernels"]))
def test_linear_array_backward_of_bfloat16_is_the_reference_bit_for_bit(data, backend):
    """Autocast's linear layers: the array backward's two bfloat16 products are the
    reference's two bfloat16 matmuls bit for bit, with the numpy backend (widen, float32
    product, round) and with the Numba one (``bfloat16_layers.matmul``: one kernel each,
    transposed and strided operands read in place)."""
    from learntorch.backends.numba_cpu import NumbaBackend
    chosen = "numpy" if backend == "numpy" else NumbaBackend(min_size=0)
    bf16 = learntorch.bfloat16.np
    rows = data.draw(st.sampled_from([(), (3,), (2, 3), (40,)]))
    n_in, n_out = data.draw(st.integers(1, 70)), data.draw(st.integers(1, 70))
    rng = np.random.default_rng(n_in * n_out)
    leaf = lambda shape: _leaf(noncontiguous(data.draw, rng.standard_normal(shape).astype(bf16)))
    with tiers.use("fast"), backends.use(chosen):
        node = F.linear(leaf(rows + (n_in,)), leaf((n_out, n_in)), leaf((n_out,))).grad_fn
        grad = noncontiguous(data.draw, rng.standard_normal(rows + (n_out,)).astype(bf16))
        with learntorch.no_grad():
            expected = node._function.backward(node, learntorch.from_numpy(grad))
            got = ARRAY_BACKWARD[Linear](node, grad)
    for e, g in zip(expected[:2], got[:2]):  # (the bias's is the test above)
        assert g.dtype == bf16 and e._data.shape == g.shape
        assert np.array_equal(np.ascontiguousarray(e._data).view(np.uint16),
                              np.ascontiguousarray(g).view(np.uint16))
