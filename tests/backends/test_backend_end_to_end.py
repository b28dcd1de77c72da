"""Whole computations through ``learntorch`` give the same values and gradients on both backends.

The kernel tests compare primitives; these run real ops (forward, backward,
broadcasting, views, autograd) with ``backends.use("numba")`` against
``backends.use("numpy")``, at sizes above the default thresholds so that the
default Numba backend really runs its kernels, and on small arrays with every
kernel forced on.  One test also compares the Numba path with torch.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from learntorch import backends
from learntorch.backends.numba_cpu import NumbaBackend

from oracle import arrays, check_against_torch, require_torch
from test_backend_kernels import kernel_calls


def run_model(x_np, w_np, backend):
    """A small network's forward and backward; returns the loss and the input gradients."""
    with backends.use(backend):
        x = learntorch.tensor(x_np, requires_grad=True)
        w = learntorch.tensor(w_np, requires_grad=True)
        h = learntorch.gelu(x) * w                 # broadcast (rows, cols) * (cols,)
        h = h.relu() + h.sigmoid() - learntorch.tanh(h) + learntorch.silu(h)
        p = learntorch.softmax(h, dim=-1)
        logp = learntorch.log_softmax(h.t(), dim=0)  # a transposed view, softmax over dim 0
        loss = (p * logp.t()).sum() + learntorch.logsumexp(h, dim=1).sum() + h.sum(dim=1).mean()
        loss.backward()
        return loss.item(), x.grad.numpy(), w.grad.numpy()


def test_model_forward_and_backward_agree_on_large_arrays_and_use_kernels():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 300)).astype(np.float32)  # 120 000 elements
    w = rng.standard_normal(300).astype(np.float32)
    with kernel_calls() as calls:
        got = run_model(x, w, "numba")
    expected = run_model(x, w, "numpy")
    # the default thresholds sent these through compiled kernels
    assert {"activations.gelu", "activations.gelu_backward", "activations.sigmoid",
            "reduction.sum_rows"} <= set(calls)
    assert got[0] == pytest.approx(expected[0], rel=1e-5)
    for g, e in zip(got[1:], expected[1:]):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * np.abs(e).max())


def test_activations_above_threshold_match_torch_through_the_numba_backend():
    torch = require_torch()
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((300, 400)) * 4).astype(np.float32)
    with backends.use("numba"):
        for lt_fn, th_name in [(learntorch.relu, "relu"), (learntorch.sigmoid, "sigmoid"),
                               (learntorch.gelu, "gelu"), (learntorch.silu, "silu"),
                               (learntorch.tanh, "tanh")]:
            th_fn = getattr(torch.nn.functional, th_name, None) or getattr(torch, th_name)
            check_against_torch(lt_fn, th_fn, x, rtol=1e-5, atol=1e-6)
        big = (rng.standard_normal((1000, 1000)) * 30).astype(np.float32)  # softmax backward kernel
        check_against_torch(lambda a: learntorch.softmax(a, -1), lambda a: torch.softmax(a, -1),
                            big, rtol=1e-4, atol=1e-6)


FUNCTIONS = {
    "relu": lambda t: t.relu(),
    "sigmoid": lambda t: t.sigmoid(),
    "tanh": lambda t: t.tanh(),
    "gelu": lambda t: learntorch.gelu(t),
    "silu": lambda t: learntorch.silu(t),
    "softmax": lambda t: t.softmax(-1),
    "log_softmax": lambda t: t.log_softmax(0),
    "logsumexp": lambda t: t.logsumexp(-1),
    "sum": lambda t: t.sum(-1),
    "arithmetic": lambda t: (t * t - t / (t * t + 1)) + t,
}


@given(name=st.sampled_from(sorted(FUNCTIONS)),
       a=arrays(dtype=np.float64, min_dims=1, max_dims=3, max_side=5,
                elements=st.floats(-30, 30, width=32)))
def test_every_op_agrees_across_backends_with_every_kernel_forced_on(name, a):
    fn = FUNCTIONS[name]
    forced = NumbaBackend(min_size=0)
    results = []
    for backend in (forced, "numpy"):
        with backends.use(backend):
            x = learntorch.from_numpy(a.copy()).requires_grad_(True)
            out = fn(x)
            out.backward(learntorch.ones_like(out) * 0.5 + out.detach() * 0.1)
            results.append((out.detach().numpy(), x.grad.numpy()))
    (out_nb, grad_nb), (out_np, grad_np) = results
    np.testing.assert_allclose(out_nb, out_np, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grad_nb, grad_np, rtol=1e-9, atol=1e-9)
