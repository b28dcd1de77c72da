"""show_program's picture of an ONNX model: its graph inputs, initializers, nodes (op type
and every attribute) and outputs, with the types ONNX's shape inference gives them --
the symbolic batch dimension by name.

The oracle is the ModelProto itself, read with the onnx package.  onnx is the `deploy`
extra, which the learner's and the tests' installs both have.
"""
import pytest

import learntorch
from learntorch import nn
from widgets import show_program
from widgets._program_dot import program_graph

onnx = pytest.importorskip("onnx", reason="the deploy extra is not installed: pip install "
                           "'learntorch[deploy]'")
from onnx import helper  # noqa: E402


def exported(path=None):
    learntorch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    return learntorch.onnx.export(model, learntorch.randn(1, 1, 8, 8), path,
                                  input_names=["image"], output_names=["logits"],
                                  dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})


def test_inputs_initializers_nodes_and_outputs_are_drawn_in_the_models_order():
    program = exported()
    graph = program.model_proto.graph
    picture = program_graph(program)
    kinds = [(n.id, n.kind) for n in picture.nodes]
    expected = ([("i0", "input")] + [(f"w{k}", "initializer") for k in range(len(graph.initializer))]
                + [(f"n{k}", "op") for k in range(len(graph.node))] + [("o0", "output")])
    assert kinds == expected
    assert [picture.names[f"n{k}"] for k in range(len(graph.node))] == [n.name for n in graph.node]
    assert [n.fields[0] for n in picture.nodes if n.kind == "op"] == [n.op_type for n in graph.node]


def test_each_node_shows_every_attribute_and_the_type_it_makes():
    program = exported()
    picture = program_graph(program)
    for k, node in enumerate(program.model_proto.graph.node):
        fields = picture.by_id[f"n{k}"].fields
        for attribute in node.attribute:
            value = helper.get_attribute_value(attribute)
            if isinstance(value, list):
                value = "[" + ", ".join(map(str, value)) + "]"
            assert f"{attribute.name}={value}" in fields, (node.op_type, fields)
    conv = picture.by_id["n0"].fields
    assert conv[0] == "Conv" and "kernel_shape=[3, 3]" in conv and "pads=[1, 1, 1, 1]" in conv
    # shape inference follows the symbolic batch through the graph
    assert conv[-1] == "float[batch, 4, 8, 8]"
    assert picture.by_id["i0"].fields == ["image", "float[batch, 1, 8, 8]"]
    assert picture.by_id["o0"].fields == ["logits", "float[batch, 3]"]
    assert picture.by_id["w0"].fields == ["0.weight", "float[4, 1, 3, 3]"]


def test_arrows_follow_the_value_names_from_producer_to_reader():
    program = exported()
    graph = program.model_proto.graph
    picture = program_graph(program)
    made_by = {"image": "i0", **{t.name: f"w{k}" for k, t in enumerate(graph.initializer)}}
    for k, node in enumerate(graph.node):
        made_by.update({o: f"n{k}" for o in node.output})
    expected = sorted([(made_by[i], f"n{k}") for k, node in enumerate(graph.node)
                       for i in node.input] + [(made_by["logits"], "o0")])
    assert sorted((e.src, e.dst) for e in picture.edges) == expected


def test_a_small_initializer_shows_its_values():
    model = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [onnx.helper.make_tensor("shape", onnx.TensorProto.INT64, [2], [0, -1])]))
    picture = program_graph(model)
    assert picture.by_id["w0"].fields == ["shape", "int64[2]", "= [0, -1]"]


def test_a_program_a_model_proto_and_a_file_draw_the_same_picture(tmp_path):
    path = tmp_path / "model.onnx"
    program = exported(path)
    dots = {show_program(p).dot for p in (program, program.model_proto, path, str(path))}
    assert len(dots) == 1


def test_groups_take_onnx_node_or_value_names_and_modules_needs_an_fx_graph():
    program = exported()
    view = show_program(program, groups={"conv block": ["/convolution/Conv", "relu"]})
    [cluster] = view.graph.clusters
    assert [view.graph.names[m] for m in cluster.members] == ["/convolution/Conv", "/relu/Relu"]
    with pytest.raises(ValueError, match="needs a captured learntorch.fx graph"):
        show_program(program, groups="modules")


def test_describe_names_inputs_outputs_and_attributes_of_a_node():
    view = show_program(exported())
    assert view.describe("/convolution/Conv") == (
        "/convolution/Conv: Conv(image float[batch, 1, 8, 8], 0.weight float[4, 1, 3, 3], "
        "0.bias float[4]) -> convolution float[batch, 4, 8, 8]; dilations=[1, 1], group=1, "
        "kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]")
    assert view.describe("image") == ("image: graph input float[batch, 1, 8, 8], read by "
                                      "/convolution/Conv")
    assert view.describe("4.weight") == "4.weight: initializer float[3, 64], read by /linear/Gemm"
    assert view.describe("logits") == "logits: graph output float[batch, 3], made by /linear/Gemm"
