"""The backward engine: order, accumulation, retain_graph, gradient=, inputs=,
create_graph and ``autograd.grad``, each compared with torch on the same program."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import assert_same, both, as_numpy, require_torch




def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.value


# ---------------------------------------------------------------- order and depth
def test_a_100000_op_chain_backpropagates_without_recursion():
    # micrograd's recursive topological sort dies past depth ~1000; this engine is iterative
    x = learntorch.tensor([1.5], dtype=learntorch.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001 ** 100_000], rtol=1e-9)


def test_diamond_and_shared_subexpressions_accumulate_every_path():
    def program(m):
        x = m.tensor([2.0, -1.0], dtype=m.float64, requires_grad=True)
        a = x * 3
        b = a * a + a.exp()  # a used three times
        c = (b + a).sum() + (x * x).sum()
        c.backward()
        return x.grad
    assert_same(*both(program))


@given(st.integers(2, 6), st.integers(0, 2 ** 16))
def test_random_dags_of_shared_nodes_match_torch(n_nodes, seed):
    rng = np.random.default_rng(seed)
    plan = [(rng.integers(0, i + 1, size=2), rng.integers(0, 3)) for i in range(n_nodes)]

    def program(m):
        x = m.tensor([0.3, -0.7], dtype=m.float64, requires_grad=True)
        nodes = [x]
        for (i, j), kind in plan:
            a, b = nodes[i], nodes[j]
            nodes.append([a * b, a + b, (a - b).tanh()][kind])
        sum(n.sum() for n in nodes[1:]).backward()
        return x.grad
    assert_same(*both(program))


def test_grad_accumulates_across_backward_calls_until_zeroed():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        second = x.grad.clone()
        x.grad = None
        (x * 3).sum().backward()
        return first, second, x.grad
    assert_same(*both(program))


# ---------------------------------------------------------------- retain_graph
def test_second_backward_fails_only_when_a_node_saved_tensors():
    def program(m):
        x = m.tensor([2.0], requires_grad=True)
        no_saved = (x + 1).sum()
        no_saved.backward()
        no_saved.backward()  # AddBackward saved nothing: allowed, as in torch
        saved = (x * x).sum()
        saved.backward()
        err = error_of(saved.backward)
        return x.grad, type(err).__name__, str(err).split(" (")[0]
    lt, th = both(program)
    assert_same(lt, th)
    assert lt[2] == "Trying to backward through the graph a second time"


def test_retain_graph_allows_backward_again_and_gradients_add_up():
    def program(m):
        x = m.tensor([2.0, 3.0], requires_grad=True)
        z = (x * x * x).sum()
        z.backward(retain_graph=True)
        z.backward()
        return x.grad
    assert_same(*both(program))


# ---------------------------------------------------------------- gradient=
def test_non_scalar_backward_needs_a_gradient_of_the_output_shape():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        no_grad_given = error_of(lambda: y.backward(retain_graph=True))
        wrong_shape = error_of(lambda: y.backward(m.ones(3), retain_graph=True))
        not_a_tensor = error_of(lambda: y.backward([1.0, 1.0], retain_graph=True))
        y.backward(m.tensor([1.0, 10.0]))
        return (x.grad, type(no_grad_given).__name__, type(wrong_shape).__name__,
                type(not_a_tensor).__name__)
    lt, th = both(program)
    assert_same(lt, th)


def test_gradient_of_another_dtype_is_cast_like_torch():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x * x).backward(m.tensor([1, 2]))
        return x.grad
    assert_same(*both(program))


def test_backward_on_a_tensor_outside_autograd_is_an_error():
    def program(m):
        plain = error_of(lambda: m.tensor([1.0]).backward())
        with m.no_grad():
            y = m.tensor([1.0], requires_grad=True) * 2
        under_no_grad = error_of(lambda: y.sum().backward())
        return type(plain).__name__, type(under_no_grad).__name__
    assert_same(*both(program))
    with pytest.raises(RuntimeError, match="does not require grad.*requires_grad=True"):
        learntorch.tensor([1.0]).backward()


# ---------------------------------------------------------------- inputs=
def test_backward_inputs_restricts_which_grads_are_filled():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        a_only = (a.grad.clone(), b.grad)
        (a * b).sum().backward(inputs=b)
        return a_only, a.grad, b.grad
    assert_same(*both(program))


def test_backward_inputs_may_be_a_non_leaf_whose_grad_then_accumulates():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        h = a * 2
        (h * b).sum().backward(inputs=[h], retain_graph=True)
        once = h.grad.clone()
        (h * b).sum().backward(inputs=[h, b])
        return once, h.grad, a.grad, b.grad
    assert_same(*both(program))


def test_backward_inputs_empty_or_not_requiring_grad_is_an_error():
    def program(m):
        a = m.tensor([1.0], requires_grad=True)
        return (type(error_of(lambda: (a * 2).sum().backward(inputs=[]))).__name__,
                type(error_of(lambda: (a * 2).sum().backward(inputs=[m.ones(1)]))).__name__)
    assert_same(*both(program))


def test_backward_inputs_outside_the_graph_get_no_gradient():
    def program(m):
        a = m.tensor([1.0], requires_grad=True)
        c = m.tensor([1.0], requires_grad=True)
        (a * 2).sum().backward(inputs=[c])
        return a.grad, c.grad
    assert_same(*both(program))


# ---------------------------------------------------------------- create_graph
def test_create_graph_gives_higher_derivatives_of_tanh():
    def program(m):
        x = m.tensor([0.3, -1.2, 2.0], dtype=m.float64, requires_grad=True)
        g1, = m.autograd.grad(x.tanh().sum(), x, create_graph=True)
        g2, = m.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = m.autograd.grad(g2.sum(), x)
        return g1, g2, g3, g1.requires_grad, g3.requires_grad
    assert_same(*both(program))


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")  # torch's leak warning
def test_backward_with_create_graph_makes_grad_differentiable():
    def program(m):
        x = m.tensor([0.3, -1.2], dtype=m.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        x.grad = None
        first.sum().backward()  # d/dx of 3x^2 = 6x
        return first, first.requires_grad, x.grad
    assert_same(*both(program))


def test_mixed_partial_derivatives_of_a_product():
    def program(m):
        x = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        y = m.tensor(3.0, dtype=m.float64, requires_grad=True)
        z = x * x * y
        gx, gy = m.autograd.grad(z, [x, y], create_graph=True)
        gxx, gxy = m.autograd.grad(gx, [x, y], retain_graph=True)
        gyx, gyy = m.autograd.grad(gy, [x, y], allow_unused=True)
        return gx, gy, gxx, gxy, gyx, gyy
    assert_same(*both(program))


# ---------------------------------------------------------------- autograd.grad
def test_grad_returns_gradients_without_touching_dot_grad():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        ga, gb = m.autograd.grad((a * b).sum(), [a, b])
        return ga, gb, a.grad, b.grad, ga.requires_grad
    assert_same(*both(program))


def test_grad_of_unused_input_is_an_error_or_none_or_zeros():
    def program(m):
        a = m.tensor([1.0], requires_grad=True)
        c = m.tensor([1.0], requires_grad=True)
        err = error_of(lambda: m.autograd.grad((a * 2).sum(), [a, c]))
        allowed = m.autograd.grad((a * 2).sum(), [a, c], allow_unused=True)
        zeros = m.autograd.grad((a * 2).sum(), [a, c], materialize_grads=True)
        return type(err).__name__, "allow_unused=True" in str(err), allowed, zeros
    assert_same(*both(program))


def test_grad_with_respect_to_non_leaf_and_output_itself():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        h = a * 3
        out = (h * h).sum()
        gh, = m.autograd.grad(out, h, retain_graph=True)
        gout, = m.autograd.grad(out, out)
        s = m.tensor(2.0, requires_grad=True)
        gs, = m.autograd.grad(s, s)
        return gh, gout, gs, a.grad
    assert_same(*both(program))


def test_grad_of_several_outputs_with_grad_outputs():
    def program(m):
        a = m.tensor(2.0, requires_grad=True)
        b = m.tensor(3.0, requires_grad=True)
        plain = m.autograd.grad([a * b, a * a], [a, b], retain_graph=True)
        weighted = m.autograd.grad([a * b, a * a], [a, b],
                                   grad_outputs=[m.tensor(2.0), m.tensor(3.0)])
        return plain, weighted
    assert_same(*both(program))


def test_grad_input_that_does_not_require_grad_is_an_error():
    def program(m):
        a = m.tensor(2.0, requires_grad=True)
        return type(error_of(lambda: m.autograd.grad(a * 2, [m.tensor(1.0)]))).__name__
    assert_same(*both(program))


def test_grad_frees_the_graph_unless_retained():
    def program(m):
        a = m.tensor([2.0], requires_grad=True)
        out = (a * a).sum()
        m.autograd.grad(out, a)
        return type(error_of(lambda: m.autograd.grad(out, a))).__name__
    assert_same(*both(program))


def test_gradients_through_broadcasting_are_summed_to_each_input_shape():
    def program(m):
        a = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        b = m.tensor([1.0, -1.0, 2.0], requires_grad=True)
        c = m.tensor([[0.5], [2.0]], requires_grad=True)
        ((a * b + c) ** 2).sum().backward()
        return a.grad, b.grad, c.grad
    assert_same(*both(program))
