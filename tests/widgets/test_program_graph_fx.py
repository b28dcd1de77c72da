"""show_program's picture of a captured learntorch.fx graph: one box per node of the graph,
an arrow per input a node reads, and the groups that box nodes together.

The oracle is the captured graph itself (``Graph.nodes``, ``Node.all_input_nodes``,
``tensor_meta``, ``module_path``): the picture must say what the IR says, nothing else.
"""
import re

import pytest

import learntorch
from learntorch import nn
from widgets import show_program
from widgets._program_dot import program_graph


def small_cnn():
    learntorch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))


def captured():
    return learntorch.fx.capture(small_cnn(), learntorch.randn(2, 1, 8, 8))


def test_every_node_of_the_graph_is_drawn_once_with_its_kind_and_shape():
    graph = captured()
    picture = program_graph(graph)
    assert [n.id for n in picture.nodes] == [f"n{i}" for i in range(len(graph.nodes))]
    kinds = {"placeholder": "input", "get_attr": "initializer", "call_function": "op",
             "output": "output"}
    for node, drawn in zip(graph.nodes, picture.nodes):
        assert drawn.kind == kinds[node.op]
        assert picture.names[drawn.id] == node.name
        if node.op == "call_function" and node.kind != "getitem":
            # the op, its kind (what a compiler reads) and the shape it made
            meta = node.tensor_meta
            shape = meta[0] if isinstance(meta, tuple) and not hasattr(meta, "shape") else meta
            assert drawn.fields[0] == node.target.__name__
            assert drawn.fields[1] == node.kind
            assert f"[{', '.join(map(str, shape.shape))}]" in drawn.fields[2]
    weights = [n.fields[0] for n in picture.nodes if n.kind == "initializer"]
    assert weights == [n.target for n in graph.nodes if n.op == "get_attr"]
    assert "0.weight" in weights and "1.running_var" in weights


def test_an_arrow_goes_from_each_input_node_to_the_node_that_reads_it():
    graph = captured()
    picture = program_graph(graph)
    ids = {node: f"n{i}" for i, node in enumerate(graph.nodes)}
    expected = sorted((ids[src], ids[node]) for node in graph.nodes
                      for src in node.all_input_nodes)
    assert sorted((e.src, e.dst) for e in picture.edges) == expected


def test_show_weights_false_leaves_out_the_get_attr_nodes_and_their_arrows():
    graph = captured()
    picture = program_graph(graph, show_weights=False)
    assert not any(n.kind == "initializer" for n in picture.nodes)
    drawn = {n.id for n in picture.nodes}
    assert all(e.src in drawn and e.dst in drawn for e in picture.edges)
    assert len(picture.nodes) == len([n for n in graph.nodes if n.op != "get_attr"])


def test_groups_modules_boxes_each_modules_ops_with_the_parameters_it_owns():
    graph = captured()
    picture = program_graph(graph, groups="modules")
    boxes = {c.label: [picture.names[m] for m in c.members] for c in picture.clusters}
    assert list(boxes) == ["0: Conv2d", "1: BatchNorm2d", "2: ReLU", "3: MaxPool2d",
                           "4: Flatten", "5: Linear"]
    assert boxes["0: Conv2d"] == ["_0_weight", "_0_bias", "convolution"]
    by_name = {n.name: n for n in graph.nodes}
    for label, members in boxes.items():
        path = label.split(":")[0]
        for name in members:
            node = by_name[name]
            owner = node.target.rpartition(".")[0] if node.op == "get_attr" else node.module_path
            assert owner == path, (label, name)
    # the input and the output belong to no module
    grouped = {m for c in picture.clusters for m in c.members}
    assert "n0" not in grouped and f"n{len(graph.nodes) - 1}" not in grouped


def test_a_dict_of_groups_takes_nodes_or_their_names_and_draws_clusters():
    graph = captured()
    relu = next(n for n in graph.nodes if n.op_name == "Relu")
    view = show_program(graph, groups={"fused: BatchNorm + Relu": ["batch_norm", relu]})
    [cluster] = view.graph.clusters
    assert [view.graph.names[m] for m in cluster.members] == ["batch_norm", relu.name]
    dot = view.dot
    block = re.search(r"subgraph cluster_g0 \{\n(.*?)\n  \}", dot, re.S).group(1)
    assert 'label="fused: BatchNorm + Relu"' in block
    assert all(re.search(rf"^    {m} \[", block, re.M) for m in cluster.members)
    # a cluster's nodes are written inside it only
    assert all(len(re.findall(rf"^\s+{m} \[", dot, re.M)) == 1 for m in cluster.members)


def test_groups_naming_an_unknown_node_or_one_node_twice_are_refused():
    graph = captured()
    with pytest.raises(KeyError, match="'nothing_here', which is not a node"):
        program_graph(graph, groups={"a": ["nothing_here"]})
    with pytest.raises(ValueError, match="'relu' is in two groups, 'a' and 'b'"):
        program_graph(graph, groups={"a": ["relu"], "b": ["relu"]})
    with pytest.raises(TypeError, match="groups must be None, 'modules' or a dict"):
        program_graph(graph, groups=["relu"])


def test_describe_gives_the_nodes_line_of_the_graphs_python_code():
    graph = captured()
    view = show_program(graph)
    line = view.describe("convolution")
    assert line.startswith("convolution = Convolution.apply(input, _0_weight, _0_bias,")
    assert "float32[2, 4, 8, 8]" in line and "0: Conv2d" in line
    assert view.describe("output").startswith("return linear")
    assert view.describe("input") == "input (input): float32[2, 1, 8, 8]"
    assert view.describe("no_such_node") == "no node 'no_such_node' in this graph"
