"""ProgramView (show_program): the state object, its controls, its text, and what Jupyter
receives -- driven headless through the ipywidgets view, as a learner's clicks would."""
import html

import pytest

import learntorch
from learntorch import nn
from widgets import ProgramView, show_graph, show_program


def mlp_graph():
    learntorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    return learntorch.fx.capture(model, learntorch.randn(5, 3))


def picture(view):
    return html.unescape(view._picture.value)


def test_repr_counts_the_nodes_by_kind_and_is_deterministic():
    view = show_program(mlp_graph())
    assert repr(view) == "ProgramView(learntorch.fx graph: 1 input, 4 attributes, 3 ops, 1 output)"
    assert view.counts() == {"input": 1, "initializer": 4, "op": 3, "output": 1, "groups": 0}
    assert repr(show_program(mlp_graph(), groups="modules", show_weights=False)) == (
        "ProgramView(learntorch.fx graph: 1 input, 3 ops, 1 output; 3 groups)")
    assert show_program(mlp_graph()).dot == view.dot


def test_jupyter_gets_text_the_static_svg_and_the_live_view():
    bundle = show_program(mlp_graph())._repr_mimebundle_()
    assert bundle["text/plain"].startswith("ProgramView(")
    svg = bundle["image/svg+xml"]
    for text in ("Linear", "Tanh", "0.weight", "float32[5, 2]", "parameter or buffer (get_attr)"):
        assert text in html.unescape(svg), text
    assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]


def test_node_slider_highlights_a_node_and_describes_it():
    view = show_program(mlp_graph())
    view.view()
    slider = view._controls["node"]
    labels = [label for label, _ in slider.options]
    assert labels[:3] == ["none", "input (input)", "_0_weight (initializer)"]
    assert "linear (Linear)" in labels and "tanh (Tanh)" in labels
    before = picture(view)
    slider.value = view.graph.node_id("tanh")
    assert view.highlighted == ("n4",)
    assert 'stroke="red"' in picture(view) and picture(view) != before
    assert "tanh = Tanh.apply(linear)" in html.unescape(view._info.value)
    assert view._controls["node_name"].value == "<code>tanh (Tanh)</code>"
    slider.value = ""
    assert view.highlighted == () and picture(view) == before


def test_weights_checkbox_hides_the_initializers_and_the_slider_follows():
    view = show_program(mlp_graph())
    view.view()
    view._controls["node"].value = view.graph.node_id("_0_weight")
    view._controls["weights"].value = False
    assert not view.show_weights and "0.weight" not in picture(view)
    assert not any("(initializer)" in label for label, _ in view._controls["node"].options)
    assert view._controls["node"].value == ""      # the hidden weight is no longer highlighted
    view._controls["weights"].value = True
    assert "0.weight" in picture(view)


def test_layout_dropdown_turns_the_picture():
    view = show_program(mlp_graph(), direction="LR")
    view.view()
    assert 'rankdir="LR"' in view.dot
    view._controls["layout"].value = "TB"
    assert view.direction == "TB" and 'rankdir="TB"' in view.dot


def test_highlight_by_name_and_unknown_names_are_refused():
    view = ProgramView(mlp_graph(), highlight="linear_1")
    assert 'color="red"' in view.dot.split("n7 [", 1)[1].split("\n", 1)[0]
    with pytest.raises(KeyError, match="no node 'relu' in this graph; its nodes are input"):
        view.set_highlight("relu")


def test_a_tensor_is_refused_with_a_pointer_to_show_graph():
    loss = (learntorch.ones(2, requires_grad=True) * 2).sum()
    with pytest.raises(TypeError, match=r"use show_graph\(tensor\)"):
        show_program(loss)
    show_graph(loss)   # the widget that draws a tensor's graph
