"""A leaf's edge made once (``learntorch/_fast/leaf_edges.py``): every node the fast tier
records with a leaf input points at the leaf's own ``AccumulateGrad`` node, exactly as the
reference's ``Tensor._edge()`` does -- also after that node changes -- and the graph,
gradients, hooks, ``retain_graph`` and version-counter errors are the reference tier's."""
import numpy as np
import pytest

import learntorch
from learntorch import tiers

from tier_graphs import nodes_behind as _nodes

torch = pytest.importorskip("torch")


def _leaves(lib, requires=True):
    w = lib.tensor([1.5, -0.5], requires_grad=requires)
    b = lib.tensor([0.25, 2.0], requires_grad=requires)
    return w, b


def _chain(x, w, b, n=5):
    y = x
    for _ in range(n):
        y = y * w + b
    return y


def _shape_of(y):
    """The graph as a reader sees it: names and where each edge points (leaves by name)."""
    def target(node, leaves):
        return leaves.get(id(node), type(node).__name__)
    leaves = {}
    for node in _nodes(y):
        if node.name() == "torch::autograd::AccumulateGrad":
            leaves[id(node)] = f"leaf{len(leaves)}"
    return [(node.name(), [(target(n, leaves), nr) for n, nr in node.next_functions])
            for node in _nodes(y)]


# ---- the edge is the reference's, the tuple is made once --------------------------------

PROGRAMS = {  # the fast operators (* and +) and the fast Function.apply (the other ops)
    "operators": lambda x, w, b: _chain(x, w, b),
    "apply_binary": lambda x, w, b: (x - w) / b,
    "apply_unary": lambda x, w, b: w.exp() + b.tanh() * x,
    "apply_matmul": lambda x, w, b: (learntorch.outer(x, w) @ learntorch.diag(b)).sum(0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_nodes_point_at_the_leafs_own_accumulate_grad_node(name):
    def run(tier):
        with tiers.use(tier):
            w, b = _leaves(learntorch)
            x = learntorch.tensor([0.5, 3.0])
            y = PROGRAMS[name](x, w, b)
            nodes = _nodes(y)
            edges = [e for node in nodes if hasattr(node, "_function") for e in node._edges
                     if e[0] is not None and e[0].__class__.__name__ == "AccumulateGrad"]
            assert edges
            for e in edges:  # the reference's edge: (the leaf's node, 0)
                assert e == (e[0].variable._accumulate_node, 0)
                assert e[0].variable is w or e[0].variable is b
            y.sum().backward()
            return _shape_of(y), w.grad.numpy().copy(), b.grad.numpy().copy(), edges
    fast, reference = run("fast"), run("reference")
    assert fast[0] == reference[0]
    np.testing.assert_array_equal(fast[1], reference[1])
    np.testing.assert_array_equal(fast[2], reference[2])
    by_node = {}
    for e in fast[3]:  # the fast tier: one tuple per leaf, whatever the number of uses
        assert by_node.setdefault(id(e[0]), e) is e


def test_every_use_of_a_leaf_shares_one_edge_tuple_in_the_fast_tier():
    with tiers.use("fast"):
        w, b = _leaves(learntorch)
        y = _chain(learntorch.tensor([0.5, 3.0]), w, b, n=20)
        w_edges = {node._edges[1] for node in _nodes(y) if node.name() == "MulBackward0"}
        b_edges = {node._edges[1] for node in _nodes(y) if node.name() == "AddBackward0"}
        assert w_edges == {(w._accumulate_node, 0)} and b_edges == {(b._accumulate_node, 0)}
        assert len({id(node._edges[1]) for node in _nodes(y) if node.name() in
                    ("MulBackward0", "AddBackward0")}) == 2  # two tuples for 40 uses


def test_a_new_grad_accumulator_is_used_once_the_leaf_has_one():
    """``Tensor.__init__`` called again on a leaf drops its AccumulateGrad node: the next
    graph must point at the new node, as the reference's ``_edge()`` does."""
    def run(tier):
        with tiers.use(tier):
            w = learntorch.Tensor([1.5, -0.5]).requires_grad_()
            x = learntorch.tensor([0.5, 3.0])
            first = x * w
            old = first.grad_fn.next_functions[1][0]
            first.sum().backward()
            grads = [w.grad.numpy().copy()]
            w.__init__([2.0, 4.0])  # new data, no accumulator yet
            w.requires_grad_()
            second = x * w + w
            new_nodes = {n for node in _nodes(second) for n, _ in node.next_functions
                         if n is not None and type(n).__name__ == "AccumulateGrad"}
            assert new_nodes == {w._accumulate_node} and old not in new_nodes
            second.sum().backward()
            grads.append(None if w.grad is None else w.grad.numpy().copy())
            return grads, _shape_of(second)
    fast, reference = run("fast"), run("reference")
    assert fast[1] == reference[1]
    for got, want in zip(fast[0], reference[0]):
        np.testing.assert_array_equal(got, want)


# ---- what a learner does with leaves: the same in both tiers, and as torch --------------

def _scenario(lib, tier=None):
    """Leaves used many times over several backwards, .grad replaced and None'd between
    them, with a tensor hook and a post-accumulate hook on each leaf."""
    def body():
        w, b = _leaves(lib)
        seen = []
        w.register_hook(lambda g: seen.append(("w hook", g.detach().numpy().copy())))
        b.register_hook(lambda g: g * 2.0)  # the hook's result is what accumulates
        b.register_post_accumulate_grad_hook(
            lambda t: seen.append(("b accumulated", t.grad.detach().numpy().copy())))
        x = lib.tensor([0.5, 3.0])
        record = []
        for step in range(4):
            if step == 1:
                w.grad = None
            elif step == 2:
                w.grad = lib.tensor([10.0, 20.0])  # a .grad the learner put there
            y = _chain(x, w, b, n=6)
            y.sum().backward()
            record.append((w.grad.detach().numpy().copy(), b.grad.detach().numpy().copy()))
        return record, seen
    if tier is None:
        return body()
    with tiers.use(tier):
        return body()


def test_hooks_and_replaced_grads_of_leaves_match_the_reference_and_torch():
    fast, reference, oracle = _scenario(learntorch, "fast"), _scenario(learntorch, "reference"), \
        _scenario(torch)
    assert len(fast[0]) == len(reference[0]) == len(oracle[0])
    for (fw, fb), (rw, rb), (tw, tb) in zip(fast[0], reference[0], oracle[0]):
        np.testing.assert_array_equal(fw, rw)
        np.testing.assert_array_equal(fb, rb)
        np.testing.assert_allclose(fw, tw, rtol=1e-5)
        np.testing.assert_allclose(fb, tb, rtol=1e-5)
    assert [s for s, _ in fast[1]] == [s for s, _ in reference[1]] == [s for s, _ in oracle[1]]
    for (_, f), (_, r), (_, t) in zip(fast[1], reference[1], oracle[1]):
        np.testing.assert_array_equal(f, r)
        np.testing.assert_allclose(f, t, rtol=1e-5)


@pytest.mark.parametrize("tier", ["fast", "reference"])
def test_retain_graph_accumulates_twice_and_a_freed_graph_is_an_error(tier):
    with tiers.use(tier):
        w, b = _leaves(learntorch)
        y = _chain(learntorch.tensor([0.5, 3.0]), w, b).sum()
        y.backward(retain_graph=True)
        once = w.grad.numpy().copy()
        y.backward()
        np.testing.assert_array_equal(w.grad.numpy(), once + once)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()


@pytest.mark.parametrize("tier", ["fast", "reference"])
def test_a_leaf_changed_in_place_after_use_is_reported_at_backward(tier):
    with tiers.use(tier):
        w, b = _leaves(learntorch)
        y = _chain(learntorch.tensor([0.5, 3.0]), w, b).sum()
        with learntorch.no_grad():
            w.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        # a new graph after the change records the new version and runs
        _chain(learntorch.tensor([0.5, 3.0]), w, b).sum().backward()
        assert w.grad is not None


def test_a_leaf_that_stops_requiring_grad_is_not_an_edge_any_more():
    with tiers.use("fast"):
        w, b = _leaves(learntorch)
        x = learntorch.tensor([0.5, 3.0], requires_grad=True)
        (x * w).sum().backward()
        w.requires_grad_(False)
        y = x * w
        assert y.grad_fn.next_functions[1] == (None, 0)
        w.requires_grad_(True)  # the same accumulator again, as the reference's _edge()
        assert (x * w).grad_fn.next_functions[1] == (w._accumulate_node, 0)
