"""Module collapsing: one box per submodule keeps an MLP's graph readable."""
import learntorch
from learntorch.autograd.graph import walk
from widgets import show_graph
from widgets._dot import build_graph


def mlp_and_loss():
    model = learntorch.nn.Sequential(learntorch.nn.Linear(3, 8), learntorch.nn.ReLU(),
                                     learntorch.nn.Linear(8, 8), learntorch.nn.ReLU(),
                                     learntorch.nn.Linear(8, 1))
    x, y = learntorch.randn(6, 3), learntorch.randn(6, 1)
    loss = learntorch.nn.functional.mse_loss(model(x), y)
    return model, loss


def test_collapsing_an_mlp_gives_one_box_per_linear_layer():
    model, loss = mlp_and_loss()
    full = show_graph(loss, model=model)
    collapsed = show_graph(loss, model=model, collapse_modules=True)
    assert len(collapsed.graph.nodes) < len(full.graph.nodes) / 2
    boxes = [n for n in collapsed.graph.nodes if n.kind == "module"]
    assert [b.fields[0] for b in boxes] == ["Linear 4 (weight, bias)", "Linear 2 (weight, bias)",
                                            "Linear 0 (weight, bias)"]
    assert [b.id for b in boxes] == ["m0", "m1", "m2"]
    assert boxes[2].fields[1] == "weight (8, 3)\nbias (8,)"
    assert "Linear 0 (weight, bias)" in collapsed.dot
    # the values left: the output and what MseLoss and the two Relus saved
    assert repr(collapsed) == "GraphView(11 nodes: 5 values, 3 ops, 3 modules)"


def test_ops_without_parameters_stay_between_the_boxes():
    model, loss = mlp_and_loss()
    graph = build_graph(loss, model=model, collapse_modules=True, show_saved=False)
    ops = [n.fields[0] for n in graph.nodes if n.kind == "op"]
    assert ops == ["MseLoss", "Relu", "Relu"]
    chain = {(e.src, e.dst) for e in graph.edges}
    relus = [n.id for n in graph.nodes if n.fields[0] == "Relu"]
    # Linear 0 -> Relu -> Linear 2 -> Relu -> Linear 4 -> MseLoss -> output
    assert {("m2", relus[1]), (relus[1], "m1"), ("m1", relus[0]), (relus[0], "m0"),
            ("m0", "n0"), ("n0", "out")} == chain


def test_every_walk_node_is_drawn_once_box_or_node():
    model, loss = mlp_and_loss()
    graph = build_graph(loss, model=model, collapse_modules=True)
    covered = sorted(w for n in graph.nodes if not n.is_value for w in n.walk_ids)
    assert covered == [i.id for i in walk(loss)]
    # a walk id inside a box highlights the box
    linear0 = next(n for n in graph.nodes if n.fields[0].startswith("Linear 0"))
    assert graph.node_id(linear0.walk_ids[0]) == "m2"


def test_without_the_model_boxes_are_named_by_parameter_path():
    model, loss = mlp_and_loss()
    graph = build_graph(loss, dict(model.named_parameters()), collapse_modules=True)
    titles = [n.fields[0] for n in graph.nodes if n.kind == "module"]
    assert titles == ["module 4 (weight, bias)", "module 2 (weight, bias)",
                      "module 0 (weight, bias)"]


def test_depth_groups_nested_modules_by_their_first_name_parts():
    class Net(learntorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = learntorch.nn.Sequential(learntorch.nn.Linear(2, 3), learntorch.nn.Tanh(),
                                                 learntorch.nn.Linear(3, 3))
            self.head = learntorch.nn.Linear(3, 1)

        def forward(self, x):
            return self.head(self.body(x))

    net = Net()
    loss = net(learntorch.randn(4, 2)).sum()
    owners = build_graph(loss, model=net, collapse_modules=True)
    top = build_graph(loss, model=net, collapse_modules=1)
    assert [n.fields[0] for n in owners.nodes if n.kind == "module"] == [
        "Linear head (weight, bias)", "Linear body.2 (weight, bias)", "Linear body.0 (weight, bias)"]
    # depth 1: body's two Linear layers become one box; the Tanh between them joins it,
    # since it only sees body's parameters
    assert [n.fields[0] for n in top.nodes if n.kind == "module"] == [
        "Linear head (weight, bias)", "Sequential body (0.weight, 0.bias, 2.weight, 2.bias)"]
    box = next(n for n in top.nodes if n.fields[0].startswith("Sequential"))
    assert box.fields[2] == "Linear, Tanh"


def test_root_level_parameters_are_not_collapsed():
    w = learntorch.randn(3, requires_grad=True)
    loss = (w * w).sum()
    full = build_graph(loss, {"w": w})
    assert [n.id for n in build_graph(loss, {"w": w}, collapse_modules=True).nodes] == \
        [n.id for n in full.nodes]
