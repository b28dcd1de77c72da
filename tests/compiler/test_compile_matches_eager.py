"""A compiled function computes what the eager one computes: forward and gradients.

Inputs are broadcast (a bias row, a (1, 1) scale), transposed and strided views, in
float32 and float64; the programs mix fused elementwise chains, a final reduction,
matmuls left to the engine, and a module.  Where the kernel keeps the engine's
operation order (arithmetic), results are bit for bit; transcendentals within a few
units in the last place (lowering.py); gradients, which the kernel's backward
recomputes through the engine's own ops, must equal eager's.  The same programs run in
torch (the oracle) give the same values within float tolerance.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from compile_compare import close_ulps, same_as_eager_with_gelu, same_bits
from oracle import broadcastable_pair, lt_tensor, require_torch, torch_tensor


def arithmetic(m, x, y):
    return ((x * 2.0 - y) / 3.0 + x * y).clamp(-1.0, 1.0) * (x > 0)


def activations(m, x, y):
    return m.nn.functional.gelu(x + y).sin() * m.sigmoid(y) - x.exp() / 3


def chain_then_mean(m, x, y):
    return ((x - y) ** 2).mean()


def layer(m, x, w, b):
    return m.nn.functional.gelu(x @ w + b) * 0.5


def views(dtype):
    """A transposed and a strided view, and a row broadcast against them."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((7, 5)).astype(dtype)
    transposed = base.T                                   # (5, 7), strides swapped
    wide = rng.standard_normal((5, 14)).astype(dtype)
    strided = wide[:, ::2]                                # (5, 7), every other column
    row = rng.standard_normal((7,)).astype(dtype)
    return {"transposed": (transposed, strided), "strided": (strided, row),
            "broadcast": (transposed, rng.standard_normal((1, 1)).astype(dtype))}


def run(fn, arrays, compiled):
    inputs = [lt_tensor(a.copy() if a.flags.c_contiguous else a, requires_grad=True)
              for a in arrays]
    f = learntorch.compile(lambda *t: fn(learntorch, *t)) if compiled else \
        (lambda *t: fn(learntorch, *t))
    out = f(*inputs)
    out.backward(learntorch.ones_like(out))
    return out, [t.grad for t in inputs], f


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["transposed", "strided", "broadcast"])
@pytest.mark.parametrize("fn, exact", [(arithmetic, True), (activations, False),
                                       (chain_then_mean, False)])
def test_compiled_forward_and_gradients_equal_eager(fn, exact, layout, dtype):
    arrays = views(dtype)[layout]
    eager, eager_grads, _ = run(fn, arrays, compiled=False)
    got, grads, compiled = run(fn, arrays, compiled=True)
    assert compiled.kernels, f"nothing was fused:\n{compiled.code}"
    # a composition of rounded functions: a few epsilons of the values' size (a difference
    # of two transcendentals can cancel, so "units in the last place" of it says little)
    tol = 16 * np.finfo(dtype).eps
    if exact:
        same_bits(got, eager, "forward")
    else:
        np.testing.assert_allclose(got.detach().numpy(), eager.detach().numpy(), rtol=tol,
                                   atol=tol, err_msg="forward")
    for i, (g, e) in enumerate(zip(grads, eager_grads)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("fn", [arithmetic, activations, chain_then_mean])
def test_compiled_results_match_torch(fn):
    torch = require_torch()
    arrays = views(np.float64)["strided"]
    got, grads, _ = run(fn, arrays, compiled=True)
    th_in = [torch_tensor(a, requires_grad=True) for a in arrays]
    expected = fn(torch, *th_in)
    expected.backward(torch.ones_like(expected))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    for g, t in zip(grads, th_in):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@given(broadcastable_pair(dtype=np.float32))
def test_any_broadcast_of_two_views_gives_eagers_bits(pair):
    x, y = (learntorch.from_numpy(a) for a in pair)
    program = lambda x, y: (x - y) * y + x / 4.0  # noqa: E731  (only arithmetic: exact)
    same_bits(learntorch.compile(program, dynamic=False)(x, y), program(x, y))


def test_the_matmul_is_left_to_the_engine_and_the_rest_is_one_kernel():
    # 128 x 12 outputs: above the Numba backend's minimum size, so eager's gelu is the
    # kernel whose formula the compiled kernel shares (smaller, eager computes it with
    # numpy in float64: a few units apart, docs/compile.md)
    x, w, b = learntorch.randn(128, 8), learntorch.randn(8, 12), learntorch.randn(12)
    compiled = learntorch.compile(lambda x, w, b: layer(learntorch, x, w, b))
    same_as_eager_with_gelu(compiled(x, w, b), layer(learntorch, x, w, b))
    assert len(compiled.kernels) == 1
    fused = [n.op_name for n in compiled.kernels[0].group.nodes]
    assert fused == ["Add", "Gelu", "Mul"], fused
    assert "MatMul" in compiled.code or "Mm" in compiled.code, compiled.code


def test_a_compiled_module_trains_like_the_eager_module():
    learntorch.manual_seed(0)
    eager = learntorch.nn.Sequential(learntorch.nn.Linear(6, 16), learntorch.nn.GELU(),
                                     learntorch.nn.Linear(16, 3))
    twin = learntorch.nn.Sequential(learntorch.nn.Linear(6, 16), learntorch.nn.GELU(),
                                    learntorch.nn.Linear(16, 3))
    twin.load_state_dict(eager.state_dict())
    compiled = learntorch.compile(twin)
    opt_e = learntorch.optim.SGD(eager.parameters(), lr=0.1)
    opt_c = learntorch.optim.SGD(twin.parameters(), lr=0.1)
    x, t = learntorch.randn(10, 6), learntorch.randn(10, 3)
    for _ in range(3):
        for model, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            F.mse_loss(model(x), t).backward()
            opt.step()
    for (name, p), q in zip(eager.named_parameters(), twin.parameters()):
        close_ulps(q, p, ulps=8, what=name)
    assert list(compiled.state_dict())[0].startswith("_orig_mod."), "torch's key prefix"
