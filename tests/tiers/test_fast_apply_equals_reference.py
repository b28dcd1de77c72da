"""The fast tier's ``Function.apply`` (and its ``FAST_FORWARD`` entries) record what the
reference ``Function.apply`` records: the same values, bit for bit, and the same graph --
node names, edges, input/output metadata, what was saved and the constants."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from learntorch import backends, tiers
from learntorch._fast.apply import ARRAYS_ONLY, FAST_FORWARD
from learntorch.nn import functional as F
from learntorch.nn._functional import linear, loss_cross_entropy
from learntorch.ops import activations, arithmetic, linalg, shape, unary

from oracle import broadcastable_pair

WITH_SPECIALS = st.one_of(st.floats(-3, 3, width=32),
                          st.sampled_from([np.inf, -np.inf, np.nan, 0.0]))

# Function class -> a program of two tensors (x requires grad, y maybe) that runs it
PROGRAMS = {
    arithmetic.Add: [lambda x, y: x + y, lambda x, y: x + 0.5, lambda x, y: 3 + x,
                     lambda x, y: learntorch.add(x, y, alpha=2)],
    arithmetic.Sub: [lambda x, y: x - y, lambda x, y: x - 1.5,
                     lambda x, y: learntorch.sub(x, y, alpha=0.5)],
    arithmetic.Rsub: [lambda x, y: 2.0 - x],
    arithmetic.Mul: [lambda x, y: x * y, lambda x, y: x * 2.5, lambda x, y: y * x],
    arithmetic.Div: [lambda x, y: x / y, lambda x, y: x / 4.0, lambda x, y: 1.0 / x],
    unary.Neg: [lambda x, y: -x],
    unary.Exp: [lambda x, y: x.exp()],
    unary.Log: [lambda x, y: x.log()],
    activations.Tanh: [lambda x, y: x.tanh()],
    activations.Sigmoid: [lambda x, y: x.sigmoid()],
    activations.Relu: [lambda x, y: x.relu()],
    linalg.Mm: [lambda x, y: x.reshape(-1, 1) @ y.reshape(1, -1),
                lambda x, y: x.reshape(1, -1) @ x.reshape(-1, 1),
                lambda x, y: learntorch.mm(y.reshape(-1, 1), x.reshape(1, -1)),
                lambda x, y: x.reshape(-1, 1).mT @ x.reshape(-1, 1).expand(-1, 3)],
    linear.Linear: [lambda x, y: F.linear(x.reshape(-1, 1), y.reshape(-1, 1)),
                    lambda x, y: F.linear(x.reshape(-1, 1), y.reshape(-1, 1), y.reshape(-1)),
                    lambda x, y: F.linear(x.reshape(1, -1, 1), y.reshape(-1, 1), y.reshape(-1)),
                    lambda x, y: F.linear(x.reshape(-1), x.reshape(1, -1).expand(2, -1)),
                    lambda x, y: F.linear(y.reshape(-1, 1), x.reshape(-1, 1).mT.mT)],
    loss_cross_entropy.CrossEntropy: [
        lambda x, y: F.cross_entropy(x.reshape(1, -1), _classes([0])),
        lambda x, y: F.cross_entropy(x.reshape(-1, 1).expand(-1, 3), _classes(x.numel() * [2]),
                                     reduction="sum"),
        lambda x, y: F.cross_entropy(x.reshape(-1, 1).expand(-1, 2),
                                     _classes([-100] + (x.numel() - 1) * [1])),
        lambda x, y: F.cross_entropy(x.reshape(-1), _classes(0)),
        lambda x, y: F.cross_entropy(x.reshape(1, -1), _classes([0]), label_smoothing=0.1),
        lambda x, y: F.cross_entropy(x.reshape(-1, 1).expand(-1, 2), _classes(x.numel() * [1]),
                                     reduction="none")],
    shape.ToDtype: [lambda x, y: x.to(learntorch.float16), lambda x, y: x.bfloat16(),
                    lambda x, y: x.to(learntorch.float32 if x.dtype == learntorch.float64
                                      else learntorch.float64)],
}


def _classes(numbers):
    return learntorch.tensor(numbers, dtype=learntorch.int64)


def test_every_fast_forward_and_arrays_only_op_has_programs_here():
    missing = (set(FAST_FORWARD) | ARRAYS_ONLY) - set(PROGRAMS)
    assert not missing, f"add programs for {sorted(c.__name__ for c in missing)}"


def _graph(t):
    """What a reader can see of the recorded node behind ``t``."""
    node = t.grad_fn
    if node is None:
        return None
    saved = [None if s is None else (s.shape, s.dtype.name, np.asarray(s.detach()).tobytes())
             for s in (node._saved or ())]
    # what forward wrote into the node for backward (shapes, flags, numbers; the saved
    # outputs' weak references are compared through ``saved``)
    written = sorted((k, _comparable(v)) for k, v in getattr(node, "__dict__", {}).items()
                     if isinstance(v, (tuple, bool, int, float, str, type(None)))
                     and k != "_saved_outputs")
    return (node.name(), [(type(n).__name__, nr) for n, nr in node.next_functions],
            node.needs_input_grad, node._input_meta, node._output_meta,
            saved, node.constants, written)


def _comparable(value):
    """``value`` with the arrays in a tuple (cross-entropy's target bundle) as their bytes."""
    if isinstance(value, tuple):
        return tuple((v.shape, v.dtype.str, v.tobytes()) if isinstance(v, np.ndarray)
                     else _comparable(v) for v in value)
    return value


def _run(tier, program, a, b, y_requires_grad):
    with tiers.use(tier), backends.use("numpy"):
        x = learntorch.from_numpy(a.copy()).requires_grad_(True)
        y = learntorch.from_numpy(b.copy()).requires_grad_(y_requires_grad)
        out = program(x, y)
        values = out.detach().numpy().copy()
        graph = _graph(out)
        with learntorch.no_grad():
            unrecorded = program(x, y).numpy().copy()
    return values, graph, unrecorded, out.dtype


@pytest.mark.parametrize("cls", sorted(PROGRAMS, key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_fast_apply_records_what_the_reference_records(cls, data, dtype):
    a, b = data.draw(broadcastable_pair(dtype=dtype, elements=WITH_SPECIALS))
    program = data.draw(st.sampled_from(PROGRAMS[cls]))
    y_requires_grad = data.draw(st.booleans())
    fast = _run("fast", program, a, b, y_requires_grad)
    reference = _run("reference", program, a, b, y_requires_grad)
    assert fast[3] is reference[3]
    assert np.array_equal(fast[0], reference[0], equal_nan=True)
    assert np.array_equal(fast[2], reference[2], equal_nan=True)
    assert fast[1][0] in {c.node_name for c in PROGRAMS} and fast[1] == reference[1]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fast_matrix_product_is_np_matmul_bit_for_bit_in_every_float_dtype(dtype, backend):
    """The fast Mm forward calls np.matmul itself for numpy's floats; bfloat16 (computed in
    float32 and rounded once, by opmath) still goes through the backend."""
    rng = np.random.default_rng(5)
    a = learntorch.from_numpy(rng.standard_normal((7, 33))).to(getattr(learntorch, dtype))
    b = learntorch.from_numpy(rng.standard_normal((33, 5))).to(getattr(learntorch, dtype))
    results = {}
    for tier in ("fast", "reference"):
        with tiers.use(tier), backends.use(backend):
            results[tier] = (a @ b).to(learntorch.float64).numpy()
    assert np.array_equal(results["fast"], results["reference"])
    if dtype != "bfloat16":
        assert np.array_equal(results["fast"], np.matmul(a.numpy(), b.numpy()))


def test_the_fast_unrecorded_product_still_meets_autocast_and_the_profiler():
    """``a @ b`` of matrices no gradient needs skips Function.apply in the fast tier only
    while nothing wraps it: autocast still casts, the profiler still sees the op."""
    a, b = learntorch.randn(4, 5), learntorch.randn(5, 3)
    with tiers.use("fast"):
        with learntorch.autocast("cpu"):
            assert (a @ b).dtype is learntorch.bfloat16
        with learntorch.profiler.profile() as prof:
            a @ b
    assert "Mm" in prof.key_averages().table()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_fast_product_is_taken_on_both_engine_backends(backend, monkeypatch):
    """For numpy's floats both engine backends' matmul is ``np.matmul`` (the Numba one adds
    a bfloat16 kernel only), so the fast tier calls np.matmul itself on either: an
    unrecorded ``a @ b`` without ``linalg.matmul`` and ``Function.apply``."""
    from learntorch._fast import matmul as fast_matmul
    a, b = learntorch.randn(4, 5), learntorch.randn(5, 3)
    calls = []
    real = fast_matmul.reference.matmul
    monkeypatch.setattr(fast_matmul.reference, "matmul",
                        lambda *args: calls.append(args) or real(*args))
    with tiers.use("fast"), backends.use(backend):
        np.testing.assert_array_equal((a @ b).numpy(), np.matmul(a.numpy(), b.numpy()))
        assert calls == []
        with learntorch.autocast("cpu"):  # (autocast must still see the op: the slow path)
            a @ b
        assert len(calls) == 1


def test_the_recorded_fast_product_on_the_numba_backend_skips_the_backend_method(monkeypatch):
    """A recorded ``a @ w`` on the Numba backend: ``mm_forward`` calls np.matmul, not the
    backend's matmul (which would reach the numpy backend's through opmath)."""
    from learntorch.backends.reference import NumpyBackend
    a, w = learntorch.randn(4, 5), learntorch.randn(5, 3, requires_grad=True)
    calls = []
    real = NumpyBackend.matmul
    monkeypatch.setattr(NumpyBackend, "matmul", lambda self, x, y: calls.append(1) or real(self, x, y))
    with tiers.use("fast"), backends.use("numba"):
        out = a @ w
    assert calls == [] and out.grad_fn.name() == "MmBackward0"
