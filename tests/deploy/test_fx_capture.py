"""learntorch.fx.capture: one concrete trace of a model into a graph of the engine's ops.

The oracle is the model itself: the graph, run on new inputs, must give the model's
outputs bit for bit (the same Functions run in the same order), and its gradients.
"""
import operator
import warnings

import numpy as np
import pytest

import learntorch
from learntorch import fx, nn
from learntorch.autograd.function import Function
from learntorch.fx import op_kinds


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 4 * 4, 10))


def ops(graph):
    return [n.op_name for n in graph.ops()]


def test_an_mlp_becomes_its_four_ops_with_parameters_named_by_their_paths():
    model = mlp()
    graph = fx.capture(model, learntorch.randn(5, 1, 8, 8))
    assert ops(graph) == ["View", "Linear", "Relu", "Linear"]
    [x] = graph.placeholders
    assert x.name == "input" and x.tensor_meta.shape == (5, 1, 8, 8)
    assert x.tensor_meta.dtype is learntorch.float32
    attrs = [n.target for n in graph.nodes if n.op == "get_attr"]
    assert attrs == list(model.state_dict())
    for name in attrs:  # the module's own tensors, not copies: training moves them
        assert graph.attributes[name] is model.get_parameter(name)
    linear = graph.ops()[1]
    assert linear.args[0] is graph.ops()[0] and linear.module_path == "1"
    assert linear.meta["module_type"] == "Linear" and linear.tensor_meta.shape == (5, 32)
    assert graph.outputs == [graph.ops()[-1]]


def test_running_the_graph_gives_the_models_outputs_and_gradients_bit_for_bit():
    model = cnn().eval()
    graph = fx.capture(model, learntorch.randn(6, 1, 8, 8))
    x = learntorch.randn(6, 1, 8, 8, requires_grad=True)
    expected = model(x)
    expected.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    x_grad = x.grad.clone()
    model.zero_grad()
    x.grad = None
    got = graph(x)
    np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())
    got.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), x_grad.numpy())
    for p, g in zip(model.parameters(), grads):
        np.testing.assert_array_equal(p.grad.numpy(), g.numpy())


def test_every_node_knows_its_kind_for_an_exporter_or_a_compiler():
    graph = fx.capture(cnn().eval(), learntorch.randn(2, 1, 8, 8))
    kinds = {n.op_name: n.kind for n in graph.nodes}
    assert kinds == {"placeholder": "placeholder", "get_attr": "get_attr",
                     "Convolution": "conv", "BatchNorm": "normalization",
                     "Relu": "elementwise", "MaxPool2d": "pool", "getitem": "getitem",
                     "View": "view", "Linear": "matmul", "output": "output"}


def test_an_op_with_two_outputs_is_followed_by_getitem_nodes_for_the_ones_used():
    def top_and_where(x):
        values, indices = learntorch.max(x, dim=1)
        return values * 2, indices
    graph = fx.capture(top_and_where, learntorch.randn(3, 4))
    max_node = graph.ops()[0]
    picks = [n for n in graph.ops() if n.target is operator.getitem]
    assert [p.args for p in picks] == [(max_node, 0), (max_node, 1)]
    assert max_node.tensor_meta[1].dtype is learntorch.int64
    x = learntorch.randn(3, 4)
    values, indices = graph(x)
    np.testing.assert_array_equal(indices.numpy(), x.argmax(dim=1).numpy())


def test_a_function_of_several_tensors_is_captured_with_its_argument_names_and_constants():
    graph = fx.capture(lambda a, b: (a * b).sum(dim=1) + 0.5, learntorch.randn(2, 3),
                       learntorch.randn(2, 3))
    assert [p.name for p in graph.placeholders] == ["a", "b"]
    assert ops(graph) == ["Mul", "Sum", "Add"]
    assert graph.ops()[2].args[1] == 0.5
    assert all(n.meta.get("module_type") is None for n in graph.ops())


def test_submodules_are_named_by_their_paths():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.features(x)).softmax(dim=-1)

    graph = fx.capture(Net(), learntorch.randn(3, 4))
    assert [(n.op_name, n.module_path, n.meta["module_type"]) for n in graph.ops()] == [
        ("Linear", "features.0", "Linear"), ("Tanh", "features.1", "Tanh"),
        ("Linear", "head", "Linear"), ("Softmax", "", "Net")]
    assert graph.ops()[0].where() == "module 'features.0' (Linear)"
    assert graph.ops()[3].where() == "the top module (Net)"


def test_in_place_ops_are_captured_and_the_callers_input_is_left_alone():
    def inplace(x):
        y = x * 2
        y.add_(1)
        y.relu_()
        x.mul_(3)            # an in-place op on the input itself
        return y + x

    example = learntorch.randn(4, 5)
    before = example.clone()
    graph = fx.capture(inplace, example)
    assert learntorch.equal(example, before)
    x = learntorch.randn(4, 5)
    np.testing.assert_array_equal(graph(x).numpy(), inplace(x.clone()).numpy())
    relu_inplace = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True), nn.Linear(3, 1))
    graph = fx.capture(relu_inplace, learntorch.randn(2, 3))
    x = learntorch.randn(2, 3)
    np.testing.assert_array_equal(graph(x).detach().numpy(), relu_inplace(x).detach().numpy())


def test_values_computed_outside_the_engines_functions_are_caught_by_the_check():
    def masked(x):
        return x * (x > 0)   # a comparison is not a Function: its result would be frozen

    with pytest.raises(fx.CaptureError, match="comparison"):
        fx.capture(masked, learntorch.randn(3, 3))
    graph = fx.capture(masked, learntorch.randn(3, 3), check=False)
    constants = [n for n in graph.nodes if n.meta.get("attribute") == "constant"]
    assert [n.target for n in constants] == ["_tensor_constant0"]

    def scaled_by_a_number(x):
        return x.exp() * x.sum().item()   # .item() is a Python float: frozen into Mul's args

    with pytest.raises(fx.CaptureError, match="item"):
        fx.capture(scaled_by_a_number, learntorch.ones(2))


def test_a_graph_refuses_inputs_of_other_shapes_or_dtypes_with_the_captured_ones():
    graph = fx.capture(mlp(), learntorch.randn(5, 1, 8, 8))
    with pytest.raises(RuntimeError, match=r"(?i)float32\[5, 1, 8, 8\].*capture again"):
        graph(learntorch.randn(7, 1, 8, 8))
    with pytest.raises(RuntimeError, match="float64"):
        graph(learntorch.randn(5, 1, 8, 8, dtype=learntorch.float64))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        graph()


def test_dropout_in_training_mode_warns_and_the_graph_replays_the_captured_mask():
    model = cnn().train()
    with pytest.warns(UserWarning, match="random numbers"):
        graph = fx.capture(model, learntorch.randn(4, 1, 8, 8))
    assert graph.meta["random"]
    assert "Mul" in ops(graph)                     # input * mask, the mask a constant
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph = fx.capture(model, learntorch.randn(4, 1, 8, 8))
    assert "Mul" not in ops(graph) and not graph.meta["random"]   # eval: dropout is no op


def test_capture_changes_the_module_and_the_random_state_as_one_call_does():
    learntorch.manual_seed(3)
    model = cnn().train()
    twin = cnn().train()
    twin.load_state_dict(model.state_dict())
    x = learntorch.randn(4, 1, 8, 8)
    state = learntorch.get_rng_state()
    with pytest.warns(UserWarning):
        fx.capture(model, x)
    after_capture = learntorch.rand(3)
    learntorch.set_rng_state(state)
    twin(x)
    assert learntorch.equal(learntorch.rand(3), after_capture)
    for name, buffer in model.named_buffers():
        assert learntorch.equal(buffer, twin.get_buffer(name)), name


def test_function_apply_is_restored_even_when_forward_raises_and_nests_with_the_profiler():
    original = Function.__dict__["apply"]

    def broken(x):
        return x.exp() @ learntorch.ones(7)

    with pytest.raises(RuntimeError):
        fx.capture(broken, learntorch.randn(2, 3))
    assert Function.__dict__["apply"] is original
    with learntorch.profiler.profile() as prof:
        graph = fx.capture(mlp(), learntorch.randn(2, 1, 8, 8))
    assert Function.__dict__["apply"] is original
    assert ops(graph) == ["View", "Linear", "Relu", "Linear"]
    assert "Linear" in {e.key for e in prof.key_averages()}


def test_the_graph_prints_as_python_with_shapes_and_modules():
    graph = fx.capture(mlp(), learntorch.randn(5, 1, 8, 8))
    code = str(graph)
    assert code.splitlines()[0] == "def forward(self, input):"
    assert "# input: float32[5, 1, 8, 8]" in code
    assert 'view = View.apply(input, (5, 64))' in code
    assert '_1_weight = self.get_parameter("1.weight")' in code
    line = next(l for l in code.splitlines() if "linear = Linear.apply" in l)
    assert "view, _1_weight, _1_bias" in line and "float32[5, 32]" in line and "1: Linear" in line
    assert code.splitlines()[-1] == "    return linear_1"
    table = graph.tabular().splitlines()
    assert table[0].split() == ["opcode", "name", "target", "args", "result", "module"]
    assert len(table) == 2 + len(graph.nodes)


def test_eliminate_dead_code_drops_unused_ops_and_keeps_the_inputs():
    def wasteful(x, unused):
        x.exp()                  # computed, never used
        return x + 1

    graph = fx.capture(wasteful, learntorch.randn(2), learntorch.randn(2))
    assert ops(graph) == ["Exp", "Add"]
    graph.eliminate_dead_code()
    assert ops(graph) == ["Add"] and len(graph.placeholders) == 2


def test_the_kind_table_names_only_functions_that_exist():
    for part in learntorch._ON_FIRST_USE:  # the parts imported when first named define some
        getattr(learntorch, part)

    def walk(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from walk(sub)
    engine = {c.__name__ for c in walk(Function) if c.__module__.startswith("learntorch.")}
    listed = {n for names in op_kinds.KINDS.values() for n in names.split()}
    assert listed - engine == set(), "op_kinds.KINDS names Functions the engine no longer has"
    unlisted = {c.__name__ for c in walk(Function) if c.__module__.startswith("learntorch.")
                and op_kinds.kind_of(c) == op_kinds.OTHER}
    assert unlisted == set(), f"engine Functions without a kind: {sorted(unlisted)}"


def test_kinds_are_inherited_and_a_learners_function_is_other():
    from learntorch.ops.linalg import Mm

    class Relu(Function):        # a learner's own, named like the engine's
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad):
            return grad

    assert op_kinds.kind_of(Mm) == op_kinds.MATMUL
    assert op_kinds.kind_of(Relu) == op_kinds.OTHER
    graph = fx.capture(lambda x: Relu.apply(x) * 2, learntorch.randn(3))
    assert [(n.op_name, n.kind) for n in graph.ops()] == [("Relu", "other"),
                                                          ("Mul", "elementwise")]


def test_inputs_that_are_not_tensors_are_constants_the_graph_checks():
    graph = fx.capture(lambda x, k: x * k, learntorch.randn(2), 3.0)
    assert graph.placeholders[1].meta["value"] == 3.0
    assert graph(learntorch.ones(2), 3.0).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="capture again"):
        graph(learntorch.ones(2), 4.0)
    with pytest.raises(TypeError, match="each tensor as its own argument"):
        fx.capture(lambda pair: pair[0] + pair[1], (learntorch.ones(2), learntorch.ones(2)))
