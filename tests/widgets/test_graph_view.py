"""GraphView: the state object, its controls, its text, and what Jupyter receives."""
import html

import pytest

import learntorch
from learntorch.autograd.graph import walk
from widgets import GraphView, show_graph
import widgets._dot
import widgets._graphviz
import widgets.graph


def regression():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    w = learntorch.tensor([3.0, -4.0], requires_grad=True)
    return (x * w).sum(), x, w


def picture(view):
    """The text of the live view's picture (Graphviz writes "-" as "&#45;")."""
    return html.unescape(view._picture.value)


def test_repr_counts_values_and_ops():
    loss, x, w = regression()
    view = show_graph(loss, params={"x": x, "w": w})
    assert repr(view) == "GraphView(7 nodes: 3 values, 4 ops)"
    assert view.counts() == {"values": 3, "ops": len(walk(loss)), "modules": 0}


def test_jupyter_gets_text_the_static_svg_and_the_live_view():
    loss, x, w = regression()
    bundle = show_graph(loss)._repr_mimebundle_()
    assert bundle["text/plain"] == "GraphView(7 nodes: 3 values, 4 ops)"
    assert "<svg" in bundle["image/svg+xml"] and "Mul" in bundle["image/svg+xml"]
    assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]


def test_display_dropdown_hides_and_shows_data_and_grad():
    loss, x, w = regression()
    loss.backward()
    view = show_graph(loss, {"x": x, "w": w})
    box = view.view()
    display = view._controls["display"]
    assert display.value == "data and grad"
    assert "grad [3, -4]" in view.dot and "grad [3, -4]" in picture(view)
    display.value = "shapes only"
    assert (view.show_data, view.show_grad) == (False, False)
    assert "data [1, 2]" not in view.dot and "grad [" not in view.dot
    assert "data [1, 2]" not in picture(view)
    display.value = "grad"
    assert "grad [3, -4]" in picture(view) and "data [1, 2]" not in picture(view)
    assert box.children[2] is view._picture


def test_node_slider_highlights_a_node_and_describes_it():
    loss, x, w = regression()
    view = show_graph(loss, {"x": x, "w": w})
    view.view()
    slider = view._controls["node"]
    assert [label for label, _ in slider.options] == [
        "none", "n0 SumBackward0", "n1 MulBackward0", "n2 AccumulateGrad", "n3 AccumulateGrad"]
    before = picture(view)
    slider.value = 1
    assert view.highlighted == (1,)
    assert picture(view) != before and 'stroke="red"' in picture(view)
    assert "n1 MulBackward0: inputs (2,) from n2, (2,) from n3; output (2,); saved (2,), (2,)" \
        in view._info.value
    slider.value = -1
    assert view.highlighted == () and picture(view) == before


def test_refresh_button_reads_grads_after_backward():
    loss, x, w = regression()
    view = show_graph(loss, {"x": x, "w": w})
    view.view()
    assert "grad None" in picture(view)
    loss.backward()
    assert "grad None" in picture(view)  # a picture is a snapshot...
    view._controls["refresh"].click()
    assert "grad [3, -4]" in picture(view) and "grad [1, 2]" in picture(view)
    assert "saved" not in view._info.value  # ...backward freed the saved tensors


def test_describe_reads_the_walk():
    loss, x, w = regression()
    view = show_graph(loss, {"x": x, "w": w})
    assert view.describe(0) == "n0 SumBackward0: inputs (2,) from n1; output (); saved nothing (or freed by backward)"
    assert view.describe(2).startswith("n2 AccumulateGrad: adds the incoming gradient into .grad of v2")
    assert view.describe("v2") == "v2: x (2,); data [1, 2]; grad None"
    assert view.describe(99) == "no node 99 in this graph"


def test_highlight_argument_and_set_highlight_agree():
    loss, x, w = regression()
    assert show_graph(loss, highlight=1).dot == GraphView(loss, highlight=[1]).dot
    view = show_graph(loss)
    view.set_highlight("n1")
    assert view.dot == show_graph(loss, highlight=1).dot


def test_the_view_of_a_tensor_without_grad_explains_why_it_is_empty():
    view = show_graph(learntorch.ones(3) * 2)
    view.view()
    assert "does not require grad" in view._info.value
    assert [label for label, _ in view._controls["node"].options] == ["none"]


@pytest.mark.parametrize("bad, message", [
    (dict(tensor=[1.0, 2.0]), "expects a learntorch Tensor"),
    (dict(params=learntorch.nn.Linear(1, 1)), "model=model"),
    (dict(params=[("x", 1)]), "params must be a dict name -> tensor"),
    (dict(model={"w": 1}), "model must be an nn.Module"),
])
def test_bad_arguments_raise_type_error_naming_the_fix(bad, message):
    arguments = dict(tensor=learntorch.ones(1, requires_grad=True), params=None, model=None)
    arguments.update(bad)
    with pytest.raises(TypeError, match=message):
        show_graph(arguments["tensor"], arguments["params"], model=arguments["model"])
