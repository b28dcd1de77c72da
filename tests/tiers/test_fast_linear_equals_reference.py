"""The fast tier's ``Linear`` forward (``_fast/linear.py``) against the reference
``Linear.forward``: the same bits in every float dtype on both engine backends, the same
saved tensors, and the backend's ``linear`` still called where the fast path does not
apply (bfloat16's kernel, a learner's backend).  The graph of every case is compared
by ``test_fast_apply_equals_reference.py``'s hypothesis walk."""
import numpy as np
import pytest

import learntorch
from learntorch import backends, tiers
from learntorch.backends.numba_cpu import NumbaBackend
from learntorch.backends.numpy_families.linear import LinearFamily
from learntorch.backends.reference import NumpyBackend
from learntorch.nn import functional as F

from code_calls import calls_during
from tier_compare import tiers_agree

SHAPES = [((7,), (5, 7), True), ((6, 33), (9, 33), True), ((2, 3, 8), (4, 8), False),
          ((6, 33), (9, 33), False)]


def _layer(x_shape, w_shape, with_bias, dtype, seed=0):
    rng = np.random.default_rng(seed)
    make = lambda shape: learntorch.from_numpy(rng.standard_normal(shape)).to(dtype)  # noqa: E731
    bias = make((w_shape[0],)) if with_bias else None
    return make(x_shape), make(w_shape), bias


def _forward_and_grads(tier, backend, x, w, b):
    with tiers.use(tier), backends.use(backend):
        leaves = [t.detach().requires_grad_(True) for t in (x, w) + ((b,) if b is not None else ())]
        out = F.linear(*leaves)
        out.sum().backward()
        with learntorch.no_grad():
            unrecorded = F.linear(x, w, b)
        return [t.detach().to(learntorch.float64).numpy() for t in [out, unrecorded]
                + [leaf.grad for leaf in leaves]]


@pytest.mark.parametrize("x_shape,w_shape,with_bias", SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fast_linear_is_the_reference_bit_for_bit(x_shape, w_shape, with_bias, dtype, backend):
    x, w, b = _layer(x_shape, w_shape, with_bias, getattr(learntorch, dtype))
    tiers_agree(_forward_and_grads, backend, x, w, b)


def test_a_transposed_weight_and_a_strided_input_give_the_reference_bits():
    rng = np.random.default_rng(3)
    x = learntorch.from_numpy(rng.standard_normal((10, 12)).astype(np.float32))[::2, ::3]
    w = learntorch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32)).mT
    b = learntorch.from_numpy(rng.standard_normal((12,)).astype(np.float32))[::2]
    for backend in ("numpy", "numba"):
        tiers_agree(_forward_and_grads, backend, x, w, b)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_fast_forward_calls_numpy_not_the_backend_method(backend):
    """For numpy's floats both engine backends' ``linear`` is ``LinearFamily.linear``: numpy's
    matmul and an in-place add.  The fast forward makes those two calls itself."""
    x, w, b = _layer((4, 5), (3, 5), True, learntorch.float32)
    w.requires_grad_(True)
    backend_linear = LinearFamily.linear.__code__
    out = []
    with backends.use(backend):
        with tiers.use("fast"):
            assert calls_during(lambda: out.append(F.linear(x, w, b)), backend_linear) == 0
        with tiers.use("reference"):
            assert calls_during(lambda: F.linear(x, w, b), backend_linear) == 1
    node = out[0].grad_fn
    assert node.name() == "LinearBackward0"
    assert node._saved[0] is x and node._saved[1] is None  # (only dW is needed: it reads x)


@pytest.mark.parametrize("method", ["linear", "matmul"])
def test_a_replaced_backend_method_is_called(method, monkeypatch):
    """A backend whose ``linear`` or ``matmul`` was replaced (a learner patching the class)
    is not numpy's any more: the fast forward calls the backend."""
    calls = []
    real = getattr(NumpyBackend, method)
    monkeypatch.setattr(NumpyBackend, method,
                        lambda self, *args: calls.append(1) or real(self, *args))
    x, w, b = _layer((4, 5), (3, 5), True, learntorch.float32)
    with tiers.use("fast"), backends.use("numpy"):
        F.linear(x, w.requires_grad_(True), b)
    assert calls == [1]


def test_bfloat16_still_reaches_the_numba_backends_kernel(monkeypatch):
    """A bfloat16 layer on the Numba backend is its kernel's work (one pass, float32 sums):
    the fast forward hands it to the backend."""
    calls = []
    real = NumbaBackend.linear
    monkeypatch.setattr(NumbaBackend, "linear",
                        lambda self, *args: calls.append(args[0].dtype) or real(self, *args))
    x, w, b = _layer((4, 5), (3, 5), True, learntorch.bfloat16)
    with tiers.use("fast"), backends.use("numba"):
        F.linear(x, w.requires_grad_(True), b)
    assert len(calls) == 1


def test_an_in_place_change_of_the_saved_input_is_still_caught():
    x, w, b = _layer((4, 5), (3, 5), True, learntorch.float32)
    w.requires_grad_(True)
    with tiers.use("fast"):
        out = F.linear(x, w, b)
        x.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
