"""The stepper's history: one record per node in engine order, values frozen at their step,
going back without re-running, the leaves' ``.grad`` following the step shown (step 0: as before
backward; the end: as after it), Reset showing step 0, and the graph left as backward leaves it."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from learntorch.autograd.graph import walk

from oracle import require_torch
from widgets import BackpropStepper


def affine(seed_grad=None):
    x = learntorch.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    w = learntorch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = learntorch.tensor([0.25], requires_grad=True)
    if seed_grad is not None:
        w.grad = learntorch.tensor(seed_grad)
    return ((x * w + b) ** 2).mean(), {"w": w, "b": b}


def records_as_numbers(history):
    """Everything a record shows, as plain python/numpy values (for comparing two runs)."""
    return [(r.index, r.node_id, r.name, [None if g is None else g.tolist() for g in r.grad_outputs],
             [(s.position, s.receiver_id, s.returned.tolist(), s.sent.tolist()) for s in r.sent],
             [None if g is None else g.tolist() for g in r.leaf_grads]) for r in history]


def test_history_has_one_record_per_node_in_engine_order():
    learntorch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    loss = F.mse_loss(model(learntorch.randn(5, 3)), learntorch.randn(5, 1))
    stepper = BackpropStepper(loss, params=model.named_parameters())
    stepper.run_to_end()
    assert [r.name for r in stepper.history] == [n.name for n in walk(loss)]
    assert [r.index for r in stepper.history] == list(range(len(stepper.history)))
    assert [r.node_id for r in stepper.history] == [n.id for n in walk(loss)]
    assert stepper.n_steps == len(stepper.history) == stepper.position


def test_incoming_gradients_are_the_gradients_pytorch_computes_for_each_intermediate():
    torch = require_torch()
    loss, params = affine()
    stepper = BackpropStepper(loss, params=params)
    stepper.run_to_end()
    incoming = {r.name: r.grad_outputs[0] for r in stepper.history}

    x = torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.25], requires_grad=True)
    xw = x * w
    z = xw + b
    square = z ** 2
    for t in (xw, z, square):
        t.retain_grad()
    square.mean().backward()
    # the gradient arriving at a node is ∂loss/∂(the output of that node's forward)
    np.testing.assert_allclose(incoming["PowBackward0"], square.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(incoming["AddBackward0"], z.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(incoming["MulBackward0"], xw.grad.numpy(), rtol=1e-6)


def test_leaf_grads_shown_at_a_step_are_the_values_of_that_step():
    loss, params = affine(seed_grad=[10.0, 20.0, 30.0])
    stepper = BackpropStepper(loss, params=params)
    w_index = stepper.leaf_labels.index("w")
    w_step = next(i for i, n in enumerate(walk(loss))
                  if n.is_leaf and n.variable is params["w"]) + 1
    stepper.run_to_end()
    final = params["w"].grad.numpy().copy()
    # adding into w.grad *in place*: a record that kept a reference instead of a copy would
    # now show the doubled value
    params["w"].grad += params["w"].grad
    params["b"].grad.zero_()

    stepper.go_to(w_step - 1)
    np.testing.assert_array_equal(stepper.leaf_grads()[w_index], [10.0, 20.0, 30.0])
    stepper.go_to(w_step)
    np.testing.assert_array_equal(stepper.leaf_grads()[w_index], final)
    assert stepper.current.leaf_grad_before.tolist() == [10.0, 20.0, 30.0]
    assert "w.grad += g" in stepper.describe()
    assert all(g is not None and g.any() for g in stepper.leaf_grads())  # b's was not zeroed


def test_previous_shows_recorded_steps_without_running_the_engine():
    loss, params = affine()
    stepper = BackpropStepper(loss, params=params)
    stepper.go_to(4)
    fourth, third = stepper.history[3], stepper.history[2]
    assert stepper.previous() is third
    assert stepper.position == 3
    assert len(stepper.history) == 4  # nothing new ran
    assert stepper.step() is fourth   # replayed from history, not run again
    assert len(stepper.history) == 4
    stepper.go_to(0)
    assert stepper.current is None and stepper.previous() is None and stepper.position == 0


def test_grads_before_any_step_are_what_the_leaves_held():
    loss, params = affine(seed_grad=[1.0, 1.0, 1.0])
    stepper = BackpropStepper(loss, params=params)
    grads = dict(zip(stepper.leaf_labels, stepper.leaf_grads()))
    assert grads["w"].tolist() == [1.0, 1.0, 1.0] and grads["b"] is None


@pytest.mark.parametrize("seed_grad", [None, [1.0, 2.0, 3.0]], ids=["no-grad", "with-grad"])
def test_the_leaves_hold_what_backward_had_left_at_the_step_shown(seed_grad):
    loss, params = affine(seed_grad)
    plain_loss, plain = affine(seed_grad)
    plain_loss.backward()
    stepper = BackpropStepper(loss, params=params)
    stepper.run_to_end()
    for name in plain:
        np.testing.assert_array_equal(params[name].grad.numpy(), plain[name].grad.numpy())

    stepper.go_to(0)  # as before backward: the seed, or None
    assert (params["w"].grad is None) if seed_grad is None else params["w"].grad.tolist() == seed_grad
    assert params["b"].grad is None
    for k in range(stepper.n_steps + 1):  # every step: the leaves hold the recorded .grad
        stepper.go_to(k)
        for leaf, recorded in zip(stepper.leaves, stepper.leaf_grads()):
            assert (leaf.grad is None) if recorded is None else leaf.grad.tolist() == recorded.tolist()
    for name in plain:  # and the end is backward's end again
        np.testing.assert_array_equal(params[name].grad.numpy(), plain[name].grad.numpy())


@pytest.mark.parametrize("seed_grad", [None, [1.0, 2.0, 3.0]], ids=["no-grad", "with-grad"])
def test_reset_shows_step_0_and_replays_the_record_identically(seed_grad):
    loss, params = affine(seed_grad)
    stepper = BackpropStepper(loss, params=params)
    stepper.run_to_end()
    first_run = records_as_numbers(stepper.history)
    after_first = {k: p.grad.numpy().copy() for k, p in params.items()}

    stepper.go_to(2)
    stepper.reset()
    assert stepper.position == 0 and stepper.current is None
    if seed_grad is None:
        assert params["w"].grad is None
    else:
        assert params["w"].grad.tolist() == seed_grad
    assert params["b"].grad is None

    stepper.run_to_end()
    assert records_as_numbers(stepper.history) == first_run
    for name, grad in after_first.items():
        np.testing.assert_array_equal(params[name].grad.numpy(), grad)


def test_reset_in_the_middle_then_stepping_to_the_end_equals_backward():
    loss, params = affine()
    plain_loss, plain = affine()
    plain_loss.backward()
    stepper = BackpropStepper(loss, params=params)
    stepper.go_to(stepper.n_steps - 1)  # b.grad is set by now, w.grad not yet
    stepper.reset()
    stepper.run_to_end()  # the engine goes on from where it stopped, onto the .grad it left
    for name in plain:
        np.testing.assert_array_equal(params[name].grad.numpy(), plain[name].grad.numpy())


def test_at_the_end_the_graph_is_freed_as_backward_frees_it():
    torch = require_torch()
    loss, _ = affine()
    BackpropStepper(loss).run_to_end()
    with pytest.raises(RuntimeError, match="backward through the graph a second time") as ours:
        loss.backward()
    # PyTorch says the same after a first backward
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    twice = (x.exp() * x).sum()
    twice.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        twice.backward()
    assert "retain_graph=True" in str(ours.value)


def test_retain_graph_keeps_it_as_for_backward():
    loss, params = affine()
    stepper = BackpropStepper(loss, params=params, retain_graph=True)
    stepper.run_to_end()
    once = params["w"].grad.numpy().copy()
    loss.backward()  # adds the gradients a second time, as after backward(retain_graph=True)
    np.testing.assert_allclose(params["w"].grad.numpy(), 2 * once, rtol=1e-6)


def test_go_to_out_of_range_is_an_index_error_naming_the_range():
    loss, params = affine()
    stepper = BackpropStepper(loss, params=params)
    with pytest.raises(IndexError, match=r"steps 0 to 6"):
        stepper.go_to(7)
    with pytest.raises(IndexError, match="out of range"):
        stepper.go_to(-1)


def test_a_tensor_used_twice_gets_the_sum_of_both_gradients():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    stepper = BackpropStepper((y * y.exp()).sum(), params={"x": x})
    stepper.run_to_end()
    mul_by_3 = stepper.history[-2]
    assert mul_by_3.name == "MulBackward0"
    y_grad = (y.exp() + y * y.exp()).detach().numpy()  # d(y e^y)/dy, from both uses of y
    np.testing.assert_allclose(mul_by_3.grad_outputs[0], y_grad, rtol=1e-6)
    stepper.go_to(stepper.n_steps - 1)
    assert "the sum of the 2 gradients sent here" in stepper.describe()


class BlockGradient(learntorch.autograd.Function):
    """Passes values forward, sends no gradient back: the nodes behind it get none."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return None


def test_nodes_that_receive_no_gradient_are_skipped_and_the_step_count_corrected():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    loss = (BlockGradient.apply(x * 2) + x).sum()
    names = [n.name for n in walk(loss)]
    assert "MulBackward0" in names and len(names) == 5
    stepper = BackpropStepper(loss, params={"x": x})
    assert stepper.n_steps == 5  # walk's count, before the engine has run
    stepper.go_to(5)
    # MulBackward0 got no gradient, so the engine never ran it: 4 steps
    assert [r.name for r in stepper.history] == [n for n in names if n != "MulBackward0"]
    assert stepper.n_steps == stepper.position == 4 and stepper.finished
    assert stepper.step() is None
    assert x.grad.tolist() == [1.0, 1.0]
