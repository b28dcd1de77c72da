"""What a recorded graph keeps alive: freed by reference counting, few objects per op.

Python's cycle collector walks every live container object again and again
while a graph grows, so a graph that needed it (a reference cycle) or that
held many objects per op would make every op slower -- and keep activations
in memory until a collection ran.
"""
import gc
import weakref

import numpy as np
import pytest

import learntorch
from learntorch import tiers
from learntorch.autograd import grad


@pytest.fixture
def collector_off():
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if enabled:
        gc.enable()


@pytest.mark.parametrize("op", [lambda x: x.exp(), lambda x: x.tanh(), lambda x: x.relu(),
                                lambda x: x.sigmoid(), lambda x: x.softmax(0),
                                lambda x: (x * 2).exp() * 3])
def test_an_output_saved_for_backward_is_freed_without_the_cycle_collector(collector_off, op):
    x = learntorch.randn(5, requires_grad=True)
    y = op(x)
    output, node = weakref.ref(y), weakref.ref(y.grad_fn)
    del y
    assert output() is None and node() is None  # no cycle output -> grad_fn -> saved output


def test_the_saved_output_is_the_output_itself_while_the_program_holds_it():
    x = learntorch.randn(4, requires_grad=True)
    y = x.exp()
    saved, = y.grad_fn.saved_tensors
    assert saved is y
    z = x.tanh() * 1.0  # the tanh output is gone: an equal tensor with its history stands in
    saved, = z.grad_fn.next_functions[0][0].saved_tensors
    np.testing.assert_array_equal(saved.detach().numpy(), np.tanh(x.detach().numpy()))
    assert saved.grad_fn is z.grad_fn.next_functions[0][0]


def test_gradients_of_gradients_still_flow_through_a_saved_output():
    # d/dx tanh = 1 - y^2 uses the saved output y; its own derivative needs y's history
    x = learntorch.tensor([0.3, -1.2, 2.0], dtype=learntorch.float64, requires_grad=True)
    (first,) = grad(x.tanh().sum(), x, create_graph=True)
    (second,) = grad(first.sum(), x)
    t = np.tanh(x.detach().numpy())
    np.testing.assert_allclose(second.numpy(), -2 * t * (1 - t * t), rtol=1e-12)


def test_changing_a_saved_output_in_place_is_still_caught():
    x = learntorch.randn(3, requires_grad=True)
    y = x.exp()
    z = y * 2
    y.add_(1)  # exp's backward needs the old y
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_a_recorded_op_keeps_few_new_objects_for_the_cycle_collector(collector_off):
    # a property of the fast tier (its apply shares tuples and skips the per-op objects
    # the reference tier writes out for reading); checked there in either test session
    with tiers.use("fast"):
        x = learntorch.tensor([0.5], requires_grad=True)
        y = x * 1.0
        kept = []
        before = len(gc.get_objects())
        for _ in range(200):
            y = y * 1.0001 + 0.0001
            kept.append(y)
        per_op = (len(gc.get_objects()) - before - 1) / 400  # (- 1: the list `kept` itself)
    # a node, its edges, the output tensor and its version counter; shared tuples for the
    # rest.  torch keeps about one (its graph is C++); each object costs ~0.1 us of
    # collector time per op
    assert per_op <= 6, per_op
