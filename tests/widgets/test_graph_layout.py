"""Graph pictures fit the notebook: they shrink to the output's width, a graph too wide
left to right is drawn top to bottom, and no control covers another."""
import re

import ipywidgets as w
import pytest

import learntorch
from widgets import BackpropStepper, show_graph
import widgets._graphviz as graphviz
from widgets._svg_fit import fit_width, natural_size


def mlp_loss():
    learntorch.manual_seed(0)
    mlp = learntorch.nn.Sequential(learntorch.nn.Linear(3, 4), learntorch.nn.Tanh(),
                                   learntorch.nn.Linear(4, 1))
    x, y = learntorch.randn(8, 3), learntorch.randn(8, 1)
    return mlp, learntorch.nn.functional.mse_loss(mlp(x), y)


def root_tag(html):
    return re.search(r"<svg\b[^>]*>", html).group(0)


def test_fit_width_keeps_the_drawing_and_scales_the_box():
    svg = ('<?xml version="1.0"?>\n<svg width="1500pt" height="300pt" viewBox="0 0 1500 300" '
           'xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>')
    fitted = fit_width(svg)
    tag = root_tag(fitted)
    assert fitted.startswith("<svg")                          # no XML prolog inside HTML
    assert 'viewBox="0 0 1500 300"' in tag and 'width="100%"' in tag
    assert "height=" not in tag.replace("height:auto", "")     # the height follows the width
    assert "max-width:2000px" in tag                           # 1500 pt = 2000 CSS px, no larger
    assert fitted.endswith('<rect width="10" height="10"/></svg>')


def test_fit_width_adds_the_view_box_a_plain_svg_lacks():
    tag = root_tag(fit_width('<svg width="300" height="40"><text>dot is missing</text></svg>'))
    assert 'viewBox="0 0 300 40"' in tag and "max-width:300px" in tag
    assert natural_size('<svg width="100%"></svg>') is None   # nothing to scale from


def fake_renders(monkeypatch, widths):
    """``render`` answering an SVG of the given width per rankdir, so the rule is tested
    without depending on how wide this machine's Graphviz draws."""
    def render(dot, timeout=10.0):
        direction = re.search(r'rankdir="(\w+)"', dot).group(1)
        return f'<svg width="{widths[direction]}pt" height="10pt"></svg>', "dot"
    monkeypatch.setattr(graphviz, "render", render)
    return lambda direction: f'digraph {{ graph [rankdir="{direction}"]; }}'


@pytest.mark.parametrize("lr_pt, tb_pt, chosen", [
    (600, 900, "LR"),     # 800 px: fits as it is
    (825, 600, "LR"),     # 1100 px: still shows at its own size in a 1200 px output
    (900, 600, "TB"),     # 1200 px: it would shrink; top to bottom is narrower
    (1500, 1600, "LR"),   # wide either way: the narrower, left to right
])
def test_auto_direction_is_left_to_right_unless_far_too_wide(monkeypatch, lr_pt, tb_pt, chosen):
    dot_for = fake_renders(monkeypatch, {"LR": lr_pt, "TB": tb_pt})
    assert graphviz.fitting_direction(dot_for) == chosen


def test_top_to_bottom_records_run_across_and_the_mlp_picks_it():
    mlp, loss = mlp_loss()
    view = show_graph(loss, model=mlp)
    lr, tb = (view.graph.to_dot(direction=d) for d in ("LR", "TB"))
    assert 'rankdir="LR"' in lr and 'rankdir="TB"' in tb
    # a record's cells stack up and down: bare left to right, wrapped in { } top to bottom
    assert 'label="0.weight\\n(4, 3) | data' in lr and 'label="{0.weight\\n(4, 3) | data' in tb
    widths = {d: natural_size(graphviz.render(view.graph.to_dot(direction=d))[0])[0]
              for d in ("LR", "TB")}
    expected = ("LR" if widths["LR"] <= graphviz.LEFT_TO_RIGHT_MAX_PX
                else min(widths, key=widths.get))
    assert view.direction == expected and f'rankdir="{expected}"' in view.dot


def test_bad_direction_is_a_value_error_naming_the_choices():
    _, loss = mlp_loss()
    with pytest.raises(ValueError, match="'LR' .left to right., 'TB' .top to bottom. or 'auto', got 'up'"):
        show_graph(loss, direction="up")
    with pytest.raises(ValueError, match="got 'down'"):
        BackpropStepper(loss, direction="down")
    with pytest.raises(ValueError, match="direction must be one of"):
        show_graph(loss).graph.to_dot(direction="RL")


def test_graph_view_picture_fits_and_the_layout_dropdown_turns_it():
    mlp, loss = mlp_loss()
    view = show_graph(loss, model=mlp, direction="LR")
    box = view.view()
    tag = root_tag(view._picture.value)
    assert 'width="100%"' in tag and "viewBox=" in tag
    assert view._picture.layout.width == "100%"
    layout = view._controls["layout"]
    assert layout.value == "LR"
    layout.value = "TB"
    assert view.direction == "TB" and 'rankdir="TB"' in view.dot
    assert natural_size(view.svg())[0] < natural_size(show_graph(loss, direction="LR").svg())[0]
    layout.value = "auto"
    assert view.layout == "auto" and view.direction in ("LR", "TB")
    # the controls come in two rows: the node slider is not in the row of the refresh button
    first_row, second_row = box.children[0].children, box.children[1].children
    assert view._controls["refresh"] in first_row and view._controls["node"] in second_row


def test_the_node_name_is_a_label_of_its_own_not_a_cut_read_out():
    _, loss = mlp_loss()
    view = show_graph(loss)
    view.view()
    slider, name = view._controls["node"], view._controls["node_name"]
    assert isinstance(slider, w.SelectionSlider) and slider.readout is False
    assert name.value == "<code>none</code>"
    slider.value = 0
    assert name.value == "<code>n0 MseLossBackward0</code>" and view.highlighted == (0,)


def test_stepper_picture_fits_and_keeps_its_layout_while_stepping():
    mlp, loss = mlp_loss()
    stepper = BackpropStepper(loss, params=dict(mlp.named_parameters()))
    stepper.view()
    from widgets._stepper_view import StepperView
    view = StepperView(stepper)
    tag = root_tag(view.picture.value)
    assert 'width="100%"' in tag and "viewBox=" in tag
    chosen = stepper.direction
    assert chosen in ("LR", "TB")
    while not view.next_button.disabled:
        view.next_button.click()
        assert f'rankdir="{chosen}"' in stepper.dot_source()
    # the current node is in the picture the learner sees (the whole graph is shown)
    assert 'stroke="red"' in view.picture.value


@pytest.mark.parametrize("direction", ["LR", "TB"])
def test_the_legend_reads_left_to_right_in_its_own_order(direction):
    # Graphviz lays out one rank's nodes as it likes (top to bottom it drew the legend
    # backwards); invisible edges between the legend's boxes keep the order in both directions
    if graphviz.render('digraph { a -> b }')[1] != "dot":
        pytest.skip("needs Graphviz's dot: the fallback drawings place nodes themselves")
    mlp, loss = mlp_loss()
    svg = show_graph(loss, model=mlp, direction=direction).svg()
    boxes = re.findall(r'<title>legend_(\w+)</title>.*?<text[^>]*x="([-\d.]+)"', svg, re.S)
    assert [kind for kind, _ in boxes] == ["leaf", "saved", "output", "op"]
    xs = [float(x) for _, x in boxes]
    assert xs == sorted(xs), f"legend boxes out of order left to right: {boxes}"
