"""The fast tier's raw-array engine computes what the reference engine computes.

Plain ``backward()`` in the fast tier lets gradients travel between nodes as arrays
and calls ``ARRAY_BACKWARD``'s entry for an op; ``create_graph=True`` and the
step-by-step ``graph.backward_steps`` run the reference engine on Tensors.  All must
agree with torch, including 0-d tensors (numpy turns their results into scalars),
broadcasting, a tensor used twice, hooks and ``retain_grad``.
"""
import numpy as np
import pytest

import learntorch
from learntorch.autograd import Function, graph
from learntorch.ops.arithmetic import Mul
from learntorch._fast.array_backward import ARRAY_BACKWARD

torch = pytest.importorskip("torch")

CHAINS = {
    "mul_add_sub": lambda x, w: (x * w + 0.5 - w) * 2.0,
    "rsub_neg": lambda x, w: -(3.0 - x * w),
    "add_alpha": lambda x, w: learntorch.add(x, w, alpha=2.5) if isinstance(x, learntorch.Tensor)
    else torch.add(x, w, alpha=2.5),
    "tanh_sigmoid_relu": lambda x, w: (x * w).tanh().sigmoid() + (x - w).relu(),
    "exp": lambda x, w: (x * 0.3).exp() * w,
    "used_twice": lambda x, w: x * x + x * w,
}


def _grads(lib, chain, x_shape, w_shape, mode):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(x_shape)
    ws = rng.standard_normal(w_shape)
    x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(ws, dtype=lib.float64, requires_grad=True)
    y = CHAINS[chain](x, w).sum()
    if mode == "steps":  # the Tensor path, one node at a time
        for _ in graph.backward_steps(y):
            pass
    else:
        y.backward(create_graph=(mode == "create_graph"))
    return x.grad.detach().numpy(), w.grad.detach().numpy()


@pytest.mark.parametrize("mode", ["arrays", "create_graph", "steps"])
@pytest.mark.parametrize("shapes", [((), ()), ((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), ())])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_gradients_match_torch_on_every_path(chain, shapes, mode):
    got = _grads(learntorch, chain, *shapes, mode)
    want = _grads(torch, chain, *shapes, "arrays")
    for g, t in zip(got, want):
        assert g.shape == t.shape
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_leaf_grad_is_a_real_array_for_0d_tensors():
    x = learntorch.tensor(2.0, requires_grad=True)
    (x * 3.0 * x).backward()
    assert isinstance(x.grad._data, np.ndarray) and x.grad.shape == ()
    assert x.grad.item() == 12.0
    x.grad.add_(1.0)  # .grad owns writable memory
    assert x.grad.item() == 13.0


def test_hooks_and_retain_grad_see_tensors_and_can_change_the_gradient():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    h.retain_grad()
    seen = []

    def double(grad):
        seen.append(type(grad))
        return grad * 2

    h.register_hook(double)
    (h * h).sum().backward()
    assert seen == [learntorch.Tensor]
    np.testing.assert_allclose(h.grad.numpy(), [12.0, 24.0])   # 2h, doubled by the hook
    np.testing.assert_allclose(x.grad.numpy(), [36.0, 72.0])   # 3 * that


def test_in_place_change_of_a_saved_tensor_is_still_reported():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    y = x.tanh()
    z = y * 2.0
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_a_subclass_that_overrides_backward_does_not_inherit_the_array_backward():
    class MulTimesTen(Mul):
        @staticmethod
        def backward(ctx, grad):
            ga, gb = Mul.backward(ctx, grad)
            return ga * 10, gb

    assert Mul in ARRAY_BACKWARD
    assert MulTimesTen not in ARRAY_BACKWARD  # keyed by the exact class
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    MulTimesTen.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])


def test_a_learners_function_without_an_array_backward_gets_tensors():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            assert isinstance(grad, learntorch.Tensor)
            x, = ctx.saved_tensors
            return 3 * x * x * grad

    x = learntorch.tensor([1.0, -2.0], requires_grad=True)
    (Cube.apply(x * 2.0) * 1.5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [36.0, 144.0])   # 1.5 * 3 (2x)^2 * 2
