"""The fast tier's cross-entropy forward (``_fast/cross_entropy.py``) against the reference
``CrossEntropy.forward``: the same bits for every reduction, dtype and target on both
engine backends (on the Numba backend a classifier's batch reaches the one-pass kernel),
the same gradients through both backward engines and second derivatives, the reference's
errors, and the backend still called where the fast path does not apply.  The recorded
graph of every case is compared by ``test_fast_apply_equals_reference.py``'s walk."""
import numpy as np
import pytest

import learntorch
from learntorch import backends, tiers
from learntorch.backends.numba_cpu import NumbaBackend
from learntorch.backends.reference import NumpyBackend
from learntorch.nn import functional as F
from learntorch.nn._functional.loss_cross_entropy import CrossEntropy

from code_calls import calls_during
from tier_compare import tiers_agree

# (logits shape, class numbers, keyword arguments): the common case first, then each thing
# the fast forward hands to the reference
CASES = [
    ((128, 10), "classes", {}),                               # the Numba kernel's batch
    ((128, 10), "classes", {"reduction": "sum"}),
    ((128, 10), "some ignored", {}),
    ((128, 10), "some ignored", {"ignore_index": 3}),
    ((4, 10), "all ignored", {}),                             # 'mean' over no rows: NaN
    ((3, 5), "classes", {}),                                  # too small for the kernel
    ((128, 10), "classes", {"reduction": "none"}),
    ((128, 10), "classes", {"label_smoothing": 0.2}),
    ((128, 10), "classes", {"weight": "weight"}),
    ((7,), "classes", {}),                                    # one unbatched sample
    ((6, 4, 3), "classes", {}),                               # K-dimensional
]


def _inputs(shape, targets, kwargs, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = learntorch.from_numpy(rng.standard_normal(shape) * 3).to(dtype)
    n_classes = shape[1] if len(shape) > 1 else shape[0]
    target_shape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, n_classes, target_shape)
    if targets == "some ignored":
        t.reshape(-1)[::5] = kwargs.get("ignore_index", -100)
    elif targets == "all ignored":
        t[...] = -100
    kwargs = dict(kwargs)
    if kwargs.get("weight") == "weight":
        kwargs["weight"] = learntorch.from_numpy(rng.uniform(0.5, 2, n_classes)).to(dtype)
    return x, learntorch.from_numpy(t), kwargs


def _forward_and_grads(tier, backend, x, t, kwargs):
    """Loss, unrecorded loss, dL/dx by both backward engines' paths (plain, create_graph),
    and a second derivative."""
    with tiers.use(tier), backends.use(backend):
        leaf = x.detach().requires_grad_(True)
        loss = F.cross_entropy(leaf, t, **kwargs)
        seed = learntorch.ones_like(loss)
        loss.backward(seed)
        with learntorch.no_grad():
            unrecorded = F.cross_entropy(x, t, **kwargs)
        leaf2 = x.detach().requires_grad_(True)
        g, = learntorch.autograd.grad(F.cross_entropy(leaf2, t, **kwargs), leaf2,
                                      learntorch.ones_like(loss), create_graph=True)
        gg, = learntorch.autograd.grad((g * g).sum(), leaf2)
        return [r.detach().to(learntorch.float64).numpy()
                for r in (loss, unrecorded, leaf.grad, g, gg)]


@pytest.mark.parametrize("shape,targets,kwargs", CASES,
                         ids=[f"{s}-{t}-{'-'.join(k) or 'plain'}" for s, t, k in CASES])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fast_cross_entropy_is_the_reference_bit_for_bit(shape, targets, kwargs, dtype, backend):
    x, t, kwargs = _inputs(shape, targets, kwargs, getattr(learntorch, dtype))
    fast = tiers_agree(_forward_and_grads, backend, x, t, kwargs)
    if targets == "all ignored" and kwargs.get("reduction", "mean") == "mean":
        assert np.isnan(fast[0]).all()


def test_the_losses_match_torch():
    torch = pytest.importorskip("torch")
    x, t, _ = _inputs((128, 10), "some ignored", {}, learntorch.float32)
    for reduction in ("mean", "sum"):
        with tiers.use("fast"), backends.use("numba"):
            leaf = x.detach().requires_grad_(True)
            loss = F.cross_entropy(leaf, t, reduction=reduction)
            loss.backward()
        tx = torch.from_numpy(x.numpy().copy()).requires_grad_(True)
        expected = torch.nn.functional.cross_entropy(tx, torch.from_numpy(t.numpy()),
                                                     reduction=reduction)
        expected.backward()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
        np.testing.assert_allclose(leaf.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-7)



@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_common_case_skips_the_reference_forward_and_keeps_the_backend_rows(backend):
    x, t, _ = _inputs((128, 10), "classes", {}, learntorch.float32)
    x.requires_grad_(True)
    reference_forward = CrossEntropy.forward.__code__
    backend_rows = getattr(NumbaBackend if backend == "numba" else NumpyBackend,
                           "cross_entropy_rows")
    rows = getattr(backend_rows, "__wrapped__", backend_rows).__code__
    out = []
    with tiers.use("fast"), backends.use(backend):  # (a tier switch sets its own backend)
        assert calls_during(lambda: out.append(F.cross_entropy(x, t)), reference_forward) == 0
        assert calls_during(lambda: F.cross_entropy(x, t), rows) == 1
    with tiers.use("reference"), backends.use(backend):
        assert calls_during(lambda: F.cross_entropy(x, t), reference_forward) == 1
    node = out[0].grad_fn
    assert node.name() == "CrossEntropyLossBackward0"
    assert node.input is x and node.target is t and node.total_weight == 128.0


@pytest.mark.parametrize("method", ["cross_entropy_rows", "loss_reduction"])
def test_a_replaced_backend_method_is_called(method, monkeypatch):
    """A backend class whose method was replaced (a learner patching it) is not the engine's
    own any more: the reference forward runs and calls it."""
    calls = []
    real = getattr(NumbaBackend, method)
    monkeypatch.setattr(NumbaBackend, method,
                        lambda self, *args: calls.append(1) or real(self, *args))
    x, t, _ = _inputs((128, 10), "classes", {}, learntorch.float32)
    with tiers.use("fast"), backends.use("numba"):
        F.cross_entropy(x.requires_grad_(True), t)
    assert calls == [1]


def test_a_learners_backend_gets_the_rows():
    calls = []

    class Spy(NumpyBackend):
        def cross_entropy_rows(self, *args):
            calls.append(args[0].shape)
            return super().cross_entropy_rows(*args)

    x, t, _ = _inputs((16, 10), "classes", {}, learntorch.float32)
    with tiers.use("fast"), backends.use(Spy()):
        F.cross_entropy(x.requires_grad_(True), t).backward()
    assert calls == [(16, 10)]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_class_number_out_of_range_is_torchs_index_error(backend):
    x, t, _ = _inputs((128, 10), "classes", {}, learntorch.float32)
    t._data[7] = 10
    with tiers.use("fast"), backends.use(backend):
        with pytest.raises(IndexError, match="Target 10 is out of bounds"):
            F.cross_entropy(x.requires_grad_(True), t)


def test_an_in_place_change_of_the_input_is_caught_by_the_second_derivative():
    x, t, _ = _inputs((128, 10), "classes", {}, learntorch.float32)
    with tiers.use("fast"):
        leaf = x.detach().requires_grad_(True)
        h = leaf * 1.0
        g, = learntorch.autograd.grad(F.cross_entropy(h, t), leaf, create_graph=True)
        h.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            learntorch.autograd.grad(g.sum(), leaf)
