"""Graph introspection: torch's ``grad_fn``/``next_functions``/``name()`` and
learntorch's ``autograd.graph.walk`` / ``backward_steps`` used by the widgets."""
import numpy as np
import pytest

import learntorch
from learntorch.autograd import graph
from oracle import as_numpy, require_torch


def name_tree(fn):
    """(name, [(child tree, output index), ...]) -- the shape of a graph, as torch prints it."""
    if fn is None:
        return None
    return (fn.name(), [(name_tree(n), nr) for n, nr in fn.next_functions])


PROGRAMS = {
    "spec": lambda m, x, y: (x * y + x.exp()).sum(),
    "tanh_mean": lambda m, x, y: (x * y).tanh().mean(),
    "sub_div": lambda m, x, y: ((x - y) / (y.exp() + x)).sum(0),
    "matmul_relu": lambda m, x, y: (x.reshape(2, 1) @ y.reshape(1, 2)).relu().sum(),
    "pow_sigmoid_abs": lambda m, x, y: (x ** 2 - y.sigmoid()).abs().sum(),
    "index": lambda m, x, y: (x[0] * y[1:]).sum(),
    "views": lambda m, x, y: x.view(1, 2).expand(3, 2).sum() + y.unsqueeze(0).squeeze(0).sum(),
    "cat_max": lambda m, x, y: m.cat([x, y]).max(),
    "clone_neg": lambda m, x, y: x.clone().neg().sum(),
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_node_names_and_next_functions_match_torch(program):
    torch = require_torch()
    trees = []
    for m in (learntorch, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, 4.0], requires_grad=True)
        trees.append(name_tree(PROGRAMS[program](m, x, y).grad_fn))
    assert trees[0] == trees[1]


def test_accumulate_grad_nodes_hold_their_leaf_and_are_shared():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    y = learntorch.tensor([3.0, 4.0], requires_grad=True)
    z = (x * y + x.exp()).sum()
    add = z.grad_fn.next_functions[0][0]
    mul, exp = add.next_functions[0][0], add.next_functions[1][0]
    acc_x, acc_y = mul.next_functions[0][0], mul.next_functions[1][0]
    assert type(acc_x).__name__ == "AccumulateGrad"
    assert acc_x.variable is x and acc_y.variable is y
    assert exp.next_functions[0][0] is acc_x  # one node per leaf, shared by every use
    assert acc_x.next_functions == ()


def test_walk_lists_every_node_in_backward_order_with_shapes_and_saved_tensors():
    x = learntorch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = learntorch.tensor([1.0, -1.0], requires_grad=True)
    z = ((x * b).exp() + x).sum()
    infos = graph.walk(z)
    assert [n.name for n in infos] == ["SumBackward0", "AddBackward0", "ExpBackward0",
                                      "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    by_name = {n.name: n for n in infos if not n.is_leaf}
    assert [n.id for n in infos] == list(range(6))
    # inputs point at node ids like next_functions point at nodes
    for info in infos:
        assert [None if i is None else infos[i].node for i, _ in info.inputs] == \
               [n for n, _ in info.node.next_functions]
    mul = by_name["MulBackward0"]
    assert mul.input_shapes == [(2, 2), (2,)] and mul.output_shapes == [(2, 2)]
    saved = [as_numpy(t) for t in mul.saved]
    np.testing.assert_array_equal(saved[0], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(saved[1], [1, -1])
    assert mul.saved_shapes == [(2, 2), (2,)]
    exp = by_name["ExpBackward0"]
    np.testing.assert_allclose(as_numpy(exp.saved[0]), np.exp([[1, -2], [3, -4]]), rtol=1e-6)
    leaves = [n for n in infos if n.is_leaf]
    assert [id(n.variable) for n in leaves] == [id(x), id(b)]
    assert [n.output_shapes for n in leaves] == [[(2, 2)], [(2,)]]


def test_walk_of_leaves_and_constants():
    x = learntorch.tensor([1.0], requires_grad=True)
    assert [(n.name, n.variable is x) for n in graph.walk(x)] == [("AccumulateGrad", True)]
    assert graph.walk(learntorch.tensor([1.0])) == []


def _program(m):
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = m.tensor([1.0, -1.0], requires_grad=True)
    h1 = x * b
    h2 = h1.exp()
    loss = (h2 + x).sum()
    return x, b, h1, h2, loss


def test_backward_steps_run_to_the_end_leave_the_gradients_of_backward():
    torch = require_torch()
    x, b, h1, h2, loss = _program(learntorch)
    steps = list(graph.backward_steps(loss))
    tx, tb, th1, th2, tloss = _program(torch)
    th1.retain_grad()
    th2.retain_grad()
    tloss.backward()
    np.testing.assert_allclose(as_numpy(x.grad), as_numpy(tx.grad), rtol=1e-6)
    np.testing.assert_allclose(as_numpy(b.grad), as_numpy(tb.grad), rtol=1e-6)
    # each step reports the gradient that reached the node: torch's grad of its output
    step_of = {s.node: s for s in steps}
    np.testing.assert_allclose(as_numpy(step_of[h2.grad_fn].grad_outputs[0]),
                               as_numpy(th2.grad), rtol=1e-6)
    np.testing.assert_allclose(as_numpy(step_of[h1.grad_fn].grad_outputs[0]),
                               as_numpy(th1.grad), rtol=1e-6)
    assert [s.index for s in steps] == list(range(len(steps)))
    assert [s.node for s in steps] == [n.node for n in graph.walk(loss)]


def test_a_step_shows_the_broadcast_gradient_and_its_reduction():
    x, b, h1, h2, loss = _program(learntorch)
    mul, = [s for s in graph.backward_steps(loss) if s.node.name() == "MulBackward0"]
    assert [tuple(g.shape) for g in mul.grad_inputs] == [(2, 2), (2, 2)]
    assert [tuple(g.shape) for g in mul.reduced] == [(2, 2), (2,)]
    assert mul.broadcast_reduced == (1,)
    np.testing.assert_allclose(as_numpy(mul.reduced[1]), as_numpy(mul.grad_inputs[1]).sum(0))
    # ``sent`` pairs each gradient with the node that receives it
    assert [(id(n.variable), nr) for n, nr, _ in mul.sent] == [(id(x), 0), (id(b), 0)]



def test_leaf_steps_report_the_leaf_and_its_new_grad():
    x, b, h1, h2, loss = _program(learntorch)
    leaf_steps = [s for s in graph.backward_steps(loss) if s.leaf is not None]
    assert [id(s.leaf) for s in leaf_steps] == [id(x), id(b)]
    assert [id(s.leaf_grad) for s in leaf_steps] == [id(x.grad), id(b.grad)]
    assert all(s.node.name() == "torch::autograd::AccumulateGrad" for s in leaf_steps)


def test_backward_steps_is_lazy_one_node_per_next():
    x, b, h1, h2, loss = _program(learntorch)
    steps = graph.backward_steps(loss)
    first = next(steps)
    assert first.node is loss.grad_fn and x.grad is None and b.grad is None
    rest = list(steps)
    assert rest and x.grad is not None


def test_backward_steps_accepts_gradient_and_inputs_like_backward():
    def run(stepper):
        x = learntorch.tensor([1.0, 2.0], requires_grad=True)
        w = learntorch.tensor([3.0, -1.0], requires_grad=True)
        y = x * w
        stepper(y, learntorch.tensor([1.0, 10.0]), [x])
        return x.grad, w.grad
    stepped = run(lambda y, g, inputs: list(graph.backward_steps(y, g, inputs=inputs)))
    direct = run(lambda y, g, inputs: y.backward(g, inputs=inputs))
    np.testing.assert_array_equal(as_numpy(stepped[0]), as_numpy(direct[0]))
    assert stepped[1] is None and direct[1] is None


def test_the_module_docstring_example_is_true():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    assert [(n.name, n.inputs) for n in graph.walk((x * x).exp().sum())] == [
        ("SumBackward0", [(1, 0)]), ("ExpBackward0", [(2, 0)]),
        ("MulBackward0", [(3, 0), (3, 0)]), ("AccumulateGrad", [])]
    assert "walk((x * x).exp().sum())" in graph.__doc__
