"""A leaf's first ``.grad`` takes over a gradient array nobody else holds (no copy), as
torch steals one -- and never one that anything else can still see or change."""
import numpy as np
import pytest

import learntorch
from learntorch.autograd import Function


def shares(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


def test_a_fresh_weight_gradient_becomes_the_grad_without_a_copy(monkeypatch):
    from learntorch._fast import engine  # the fast tier's engine adopts; the reference copies
    copies = []
    original = engine.accumulate_grad
    monkeypatch.setattr(engine, "accumulate_grad", lambda *a: (copies.append(a), original(*a)))
    layer = learntorch.nn.Linear(3, 4)
    x = learntorch.randn(5, 3)
    layer(x).sum().backward()
    assert copies == []  # both gradients were adopted
    np.testing.assert_allclose(layer.weight.grad.numpy(), np.ones((5, 4)).T @ x.numpy(),
                               rtol=1e-5)
    np.testing.assert_allclose(layer.bias.grad.numpy(), np.full(4, 5.0))


def test_one_gradient_sent_to_two_leaves_gives_each_its_own_memory():
    a, b = learntorch.ones(3, requires_grad=True), learntorch.ones(3, requires_grad=True)
    (a + b).sum().backward()  # add's backward sends the same array to both
    assert not shares(a.grad, b.grad)
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))


def test_a_retained_non_leaf_grad_and_a_leaf_grad_never_alias():
    x = learntorch.randn(4, requires_grad=True)
    h = x * 1.0
    h.retain_grad()
    (h * 3).sum().backward()
    assert not shares(x.grad, h.grad)
    x.grad.zero_()
    np.testing.assert_array_equal(h.grad.numpy(), np.full(4, 3.0))


def test_a_gradient_a_hook_kept_is_not_adopted():
    x = learntorch.randn(4, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 2).sum().backward()
    assert not shares(x.grad, seen[0])


def test_the_gradient_given_to_backward_stays_the_callers():
    x = learntorch.randn(3, requires_grad=True)
    given = learntorch.tensor([1.0, 2.0, 3.0])
    x.backward(given)
    x.grad.mul_(10)
    np.testing.assert_array_equal(given.numpy(), [1.0, 2.0, 3.0])


class KeepsItsGradient(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        ctx.kept = grad * 2  # a learner's Function holding on to what it returned
        return ctx.kept


def test_a_gradient_a_function_still_holds_is_not_adopted():
    x = learntorch.randn(3, requires_grad=True)
    y = KeepsItsGradient.apply(x)
    y.backward(learntorch.ones(3), retain_graph=True)
    x.grad.add_(100)
    np.testing.assert_array_equal(y.grad_fn.kept.numpy(), np.full(3, 2.0))


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_a_strided_leaf_gets_a_grad_of_its_own_layout(layout):
    base = learntorch.randn(4, 6)
    x = (base.t() if layout == "transposed" else base[:, ::2]).detach().requires_grad_()
    (x * 2).sum().backward()
    assert x.grad.stride() == learntorch.empty_like(x).stride()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(tuple(x.shape), 2.0))
