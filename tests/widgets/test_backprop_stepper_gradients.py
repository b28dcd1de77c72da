"""Stepping a BackpropStepper to the end leaves exactly the gradients ``loss.backward()`` leaves.

Each graph is built twice from the same numbers: one copy is stepped node by node,
the other runs plain ``backward()``; the leaves' ``.grad`` must be identical (the
stepper runs the engine's own backward, so not merely close).  One example is also
compared with PyTorch.
"""
import copy

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from learntorch.autograd.graph import walk

from oracle import require_torch
from widgets import BackpropStepper


def scalar_chain():
    a = learntorch.tensor(0.7, requires_grad=True)
    return ((a * a).exp() + a.sin()).log(), {"a": a}


def broadcast_affine():
    # b (shape (1,)) and w (shape (3,)) are broadcast over a batch of 4 rows
    x = learntorch.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    w = learntorch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = learntorch.tensor([0.25], requires_grad=True)
    return ((x * w + b) ** 2).mean(), {"w": w, "b": b}


def linear_relu_mse():
    learntorch.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = learntorch.randn(5, 3)
    y = learntorch.randn(5, 1)
    return model, x, y


def step_to_end(stepper):
    """Drive only ``step()``, as the Next button does, and count the steps."""
    count = 0
    while stepper.step() is not None:
        count += 1
    return count


@pytest.mark.parametrize("make", [scalar_chain, broadcast_affine], ids=["chain", "broadcast"])
def test_stepping_to_the_end_equals_backward(make):
    stepped_loss, stepped = make()
    plain_loss, plain = make()
    plain_loss.backward()

    stepper = BackpropStepper(stepped_loss, params=stepped)
    assert step_to_end(stepper) == len(walk(stepped_loss))
    assert stepper.finished
    for name in plain:
        np.testing.assert_array_equal(stepped[name].grad.numpy(), plain[name].grad.numpy(),
                                      err_msg=name)


def test_linear_relu_mse_model_equals_backward_of_a_clone():
    model, x, y = linear_relu_mse()
    clone = copy.deepcopy(model)
    F.mse_loss(clone(x), y).backward()

    stepper = BackpropStepper(F.mse_loss(model(x), y), params=model.named_parameters())
    stepper.run_to_end()
    assert sorted(stepper.leaf_labels) == sorted(name for name, _ in model.named_parameters())
    for (name, p), (_, q) in zip(model.named_parameters(), clone.named_parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy(), err_msg=name)


def test_broadcast_gradients_match_pytorch():
    torch = require_torch()
    loss, params = broadcast_affine()
    BackpropStepper(loss, params=params).run_to_end()

    x = torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.25], requires_grad=True)
    ((x * w + b) ** 2).mean().backward()
    np.testing.assert_allclose(params["w"].grad.numpy(), w.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(params["b"].grad.numpy(), b.grad.numpy(), rtol=1e-6)


def test_existing_grads_accumulate_as_backward_does():
    stepped_loss, stepped = broadcast_affine()
    plain_loss, plain = broadcast_affine()
    for params in (stepped, plain):
        params["w"].grad = learntorch.tensor([1.0, 2.0, 3.0])
    plain_loss.backward()
    BackpropStepper(stepped_loss, params=stepped).run_to_end()
    np.testing.assert_array_equal(stepped["w"].grad.numpy(), plain["w"].grad.numpy())
    np.testing.assert_array_equal(stepped["b"].grad.numpy(), plain["b"].grad.numpy())


def test_a_non_scalar_output_steps_with_the_gradient_given():
    x = learntorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seed = learntorch.tensor([1.0, 0.5, -1.0])
    BackpropStepper(x * x, gradient=seed).run_to_end()
    np.testing.assert_array_equal(x.grad.numpy(), (2 * x.detach() * seed).numpy())


def test_with_retain_graph_backward_still_works_afterwards():
    # as after loss.backward(retain_graph=True): a later backward() adds the gradients again
    loss, params = broadcast_affine()
    stepper = BackpropStepper(loss, params=params, retain_graph=True)
    stepper.run_to_end()
    once = params["w"].grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(params["w"].grad.numpy(), 2 * once, rtol=1e-6)
