"""What the stepper says: the chain-rule table agrees with the engine's nodes, broadcasting's
sum is named with its dims and shapes, values are printed deterministically."""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from learntorch.autograd.graph import backward_steps

from widgets import BackpropStepper
from widgets._stepper_record import summed_dims
from widgets._stepper_rules import known_nodes, local_rule
from widgets._stepper_text import format_values


def _ops():
    """One small forward per node name in the rules table (the node its output's grad_fn is)."""
    a = learntorch.tensor([[0.5, -1.5, 2.0], [1.0, 0.3, -0.7]], requires_grad=True)
    b = learntorch.tensor([[1.5, 2.0, -0.5], [0.2, -1.0, 3.0]], requires_grad=True)
    m = learntorch.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 7, requires_grad=True)
    v = learntorch.tensor([0.1, -0.2, 0.3], requires_grad=True)
    target = learntorch.tensor([0, 2])
    probs = learntorch.tensor([[0.2, 0.9, 0.5], [0.6, 0.1, 0.3]])
    return {
        "AddBackward0": lambda: a + b, "SubBackward0": lambda: a - b,
        "MulBackward0": lambda: a * b, "DivBackward0": lambda: a / b,
        "NegBackward0": lambda: -a, "PowBackward0": lambda: a ** 2,
        "PowBackward1": lambda: b.abs() ** a, "PowBackward2": lambda: 2 ** a,
        "ReciprocalBackward0": lambda: b.reciprocal(), "ExpBackward0": lambda: a.exp(),
        "LogBackward0": lambda: b.abs().log(), "SqrtBackward0": lambda: b.abs().sqrt(),
        "AbsBackward0": lambda: a.abs(), "SinBackward0": lambda: a.sin(),
        "CosBackward0": lambda: a.cos(), "TanhBackward0": lambda: a.tanh(),
        "SigmoidBackward0": lambda: a.sigmoid(), "ReluBackward0": lambda: a.relu(),
        "LeakyReluBackward0": lambda: F.leaky_relu(a), "ClampBackward1": lambda: a.clamp(min=0),
        "CloneBackward0": lambda: a.clone(), "SumBackward0": lambda: a.sum(),
        "SumBackward1": lambda: a.sum(1), "MeanBackward0": lambda: a.mean(),
        "MeanBackward1": lambda: a.mean(0), "MaxBackward0": lambda: a.max(1).values,
        "MaxBackward1": lambda: a.max(), "MmBackward0": lambda: a @ m,
        "BmmBackward0": lambda: a.reshape(1, 2, 3) @ m.reshape(1, 3, 4),
        "MvBackward0": lambda: a @ v, "DotBackward0": lambda: v @ v,
        "LinearBackward0": lambda: F.linear(a, m.t(), m[0]),
        "TBackward0": lambda: a.t(), "TransposeBackward0": lambda: a.transpose(0, 1),
        "PermuteBackward0": lambda: a.permute(1, 0), "ViewBackward0": lambda: a.view(6),
        "UnsqueezeBackward0": lambda: a.unsqueeze(0),
        "SqueezeBackward0": lambda: a.unsqueeze(0).squeeze(),
        "SqueezeBackward1": lambda: a.unsqueeze(0).squeeze(0),
        "ExpandBackward0": lambda: v.expand(2, 3), "SelectBackward0": lambda: a[0],
        "SliceBackward0": lambda: a[:, 1:], "IndexBackward0": lambda: a[learntorch.tensor([1, 0])],
        "MseLossBackward0": lambda: F.mse_loss(a, b),
        "SoftmaxBackward0": lambda: a.softmax(1), "LogSoftmaxBackward0": lambda: a.log_softmax(1),
        "NllLossBackward0": lambda: F.nll_loss(a, target),
        "CrossEntropyLossBackward0": lambda: F.cross_entropy(a, target),
        "BinaryCrossEntropyWithLogitsBackward0":
            lambda: F.binary_cross_entropy_with_logits(a, probs),
    }


def test_every_rule_has_an_example_here():
    assert sorted(_ops()) == known_nodes()


@pytest.mark.parametrize("name", known_nodes())
def test_rule_names_the_arguments_the_engine_sends_gradients_to(name):
    out = _ops()[name]()
    assert out.grad_fn.name() == name  # the example really makes that node
    first = next(backward_steps(out, gradient=learntorch.ones(out.shape), retain_graph=True))
    receiving = {i for i, g in enumerate(first.reduced) if g is not None}
    assert receiving, "the example sends no gradient at all"
    rule = local_rule(name)
    assert receiving <= set(rule.args), f"positions {receiving} not all in {sorted(rule.args)}"
    for arg, local, chain in rule.args.values():
        assert arg and local.startswith("∂") and chain


def test_unknown_nodes_point_to_the_node_s_backward():
    class Cube(learntorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackpropStepper(Cube.apply(x).sum(), params={"x": x})
    stepper.go_to(2)
    assert local_rule(stepper.current.name) is None
    assert f"see the node's backward ({stepper.current.name})" in stepper.describe()
    assert "[ 3., 12.]" in stepper.describe()  # what the learner's backward sent to x


def test_broadcast_sum_is_explained_with_dims_and_shapes():
    x = learntorch.ones(4, 3)
    w = learntorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = learntorch.tensor([0.5], requires_grad=True)
    stepper = BackpropStepper((x * w + b).sum(), params={"w": w, "b": b})
    stepper.go_to(2)  # AddBackward0: b was broadcast from (1,) to (4, 3)
    add = stepper.current
    assert add.name == "AddBackward0"
    to_b = next(s for s in add.sent if s.position == 1)
    assert to_b.broadcast and to_b.summed_dims == (0, 1)
    assert to_b.returned.shape == (4, 3) and to_b.sent.tolist() == [12.0]
    assert ("returned shape (4, 3), summed over dims (0, 1) to match input shape (1,)"
            in stepper.describe())
    stepper.go_to(4)  # MulBackward0: w was broadcast from (3,) over the 4 rows
    assert "summed over dims (0,) to match input shape (3,)" in stepper.describe()
    assert ("input b -> leaf w, into w.grad (AccumulateGrad, node 4): ∂out/∂b = a, so it gets "
            "g · a = [4., 4., 4.]") in stepper.describe()


def test_each_input_of_an_add_is_named_with_the_leaf_it_reaches():
    # add sends the very same gradient object to both inputs: each still gets its own line
    a = learntorch.tensor(1.0, requires_grad=True)
    b = learntorch.tensor(2.0, requires_grad=True)
    stepper = BackpropStepper(a + b, params={"a": a, "b": b})
    stepper.go_to(1)
    assert [s.position for s in stepper.current.sent] == [0, 1]
    lines = [text for kind, text in stepper.step_lines() if kind == "sent"]
    assert lines[0].startswith("input a -> leaf a, into a.grad")
    assert lines[1].startswith("input b -> leaf b, into b.grad")
    assert "alpha: torch.add's multiplier, 1 for a + b" in stepper.describe()


def test_the_chain_rule_text_brackets_what_it_multiplies():
    x = learntorch.tensor(0.5, requires_grad=True)
    stepper = BackpropStepper(x.tanh(), params={"x": x})
    stepper.go_to(1)
    expected = float(1 - np.tanh(0.5) ** 2)
    assert (f"input x -> leaf x, into x.grad (AccumulateGrad, node 1): ∂out/∂x = 1 − tanh²x, "
            f"so it gets g · (1 − tanh²x) = {format_values(np.float32(expected))}") in stepper.describe()


def test_no_broadcast_no_sum_sentence():
    a = learntorch.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackpropStepper((a * a).sum(), params={"a": a})
    stepper.run_to_end()
    for k in range(stepper.n_steps + 1):
        stepper.go_to(k)
        assert "summed over dims" not in stepper.describe()


@pytest.mark.parametrize("returned, input_shape", [
    ((4, 3), (3,)), ((4, 3), (1,)), ((4, 3), (4, 1)), ((2, 4, 3), (1, 3)),
    ((2, 1, 3), (3,)), ((5,), ()), ((2, 3), (2, 3))])
def test_summed_dims_are_what_sums_a_broadcast_gradient_back(returned, input_shape):
    g = np.random.rand(*returned)
    dims = summed_dims(returned, input_shape)
    # the oracle: each input element gets the sum of g over every position that read it
    n = int(np.prod(input_shape))
    reader = np.broadcast_to(np.arange(n).reshape(input_shape), returned)
    expected = np.bincount(reader.ravel(), weights=g.ravel(), minlength=n).reshape(input_shape)
    np.testing.assert_allclose(g.sum(axis=dims, keepdims=True).reshape(input_shape), expected)


def test_values_are_printed_in_full_when_small_and_summarised_when_large():
    assert format_values(np.array([1.0, -0.5, 0.25])) == "[ 1.  , -0.5 ,  0.25]"
    assert format_values(np.float32(2.0) * np.ones(())) == "2."
    big = np.arange(100, dtype=np.float32).reshape(10, 10)
    assert format_values(big) == "shape (10, 10): mean 49.5, min 0, max 99"
    assert format_values(None) == "None"


def test_repr_and_describe_are_deterministic():
    def make():
        w = learntorch.tensor([1.0, -2.0], requires_grad=True)
        return BackpropStepper((w * w).sum(), params={"w": w})

    first, second = make(), make()
    assert repr(first) == "BackpropStepper(step 0 of 3: before backward)"
    for stepper in (first, second):
        stepper.go_to(2)
    assert repr(first) == repr(second) == "BackpropStepper(step 2 of 3: MulBackward0)"
    assert first.describe() == second.describe()
    assert "0x" not in first.describe()  # no memory addresses


def test_describe_before_backward_names_the_first_node_and_the_seed():
    w = learntorch.tensor([1.0, -2.0], requires_grad=True)
    stepper = BackpropStepper((w * w).mean(), params={"w": w})
    text = stepper.describe()
    assert text.startswith("Step 0 of 3: nothing has run yet; Next runs the first node "
                           "(MeanBackward0) with g = ∂loss/∂loss = 1")
    assert "w (2,): .grad = None" in text


def test_leaf_step_says_how_grad_is_filled():
    w = learntorch.tensor([1.0, -2.0], requires_grad=True)
    stepper = BackpropStepper((w * 3).sum(), params={"w": w})
    stepper.run_to_end()
    assert "incoming g = ∂loss/∂w, shape (2,): [3., 3.]" in stepper.describe()
    assert "w.grad was None, so w.grad = g: w.grad = [3., 3.]" in stepper.describe()
    assert "w (2,): .grad = [3., 3.]" in stepper.describe()
