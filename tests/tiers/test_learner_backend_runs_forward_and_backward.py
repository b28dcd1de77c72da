"""A learner's backend is the one dispatch point: ``backends.use(MyBackend())`` is called by
every op in forward *and* in backward, in the default (fast) tier as in the reference tier,
and a whole model trains on it.

The spy subclasses the numpy reference backend and counts the calls of each primitive,
separately while the forward pass, the backward pass and the optimizer step run.
"""
import collections

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from learntorch import backends, tiers
from learntorch.backends import NumpyBackend


class SpyBackend(NumpyBackend):
    """Counts every primitive call, by phase ("forward", "backward", "step")."""

    def __init__(self):
        self.phase = "forward"
        self.calls = collections.defaultdict(collections.Counter)


def _spied(name):
    def method(self, *args, **kwargs):
        self.calls[self.phase][name] += 1
        return getattr(NumpyBackend, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


for _name in backends._PRIMITIVES:
    setattr(SpyBackend, _name, _spied(_name))


def _step(model, opt, x, y, spy):
    spy.phase = "forward"
    loss = F.cross_entropy(model(x), y)
    spy.phase = "backward"
    opt.zero_grad()
    loss.backward()
    spy.phase = "step"
    opt.step()
    return loss.item()


@pytest.mark.parametrize("tier", ["fast", "reference"])
def test_an_mlp_trains_on_a_learners_backend_called_in_forward_and_backward(tier):
    learntorch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = learntorch.tensor(rng.standard_normal((32, 8)), dtype=learntorch.float32)
    y = learntorch.tensor(rng.integers(0, 3, 32))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = learntorch.optim.SGD(model.parameters(), lr=0.5)
    spy = SpyBackend()
    with tiers.use(tier), backends.use(spy):
        losses = [_step(model, opt, x, y, spy) for _ in range(20)]
    assert losses[-1] < 0.7 * losses[0], f"the model did not train: {losses[0]} -> {losses[-1]}"
    forward, backward = spy.calls["forward"], spy.calls["backward"]
    assert forward["matmul"] >= 2 and forward["relu"] >= 1, dict(forward)
    # backward: the matmuls of both layers' gradients, relu's derivative kernel
    assert backward["matmul"] >= 3 and backward["relu_backward"] >= 1, dict(backward)


def test_a_learners_kernel_replaces_the_builtin_one_in_backward_too():
    class DoubledReluBackward(NumpyBackend):
        """A deliberately wrong relu derivative: if it runs, gradients double."""

        def relu_backward(self, y, grad):
            return 2 * super().relu_backward(y, grad)

    x = learntorch.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    with backends.use(DoubledReluBackward()):
        x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0]  # the learner's kernel ran in backward


def test_the_fast_tier_steps_aside_for_a_backend_it_does_not_know():
    spy = SpyBackend()
    a = learntorch.tensor([1.0, 2.0], requires_grad=True)
    with tiers.use("fast"), backends.use(spy):
        loss = (a * a * 3.0).sum()
        spy.phase = "backward"
        loss.backward()
    assert spy.calls["backward"]["mul"] >= 2, dict(spy.calls["backward"])
    assert a.grad.tolist() == [6.0, 12.0]
