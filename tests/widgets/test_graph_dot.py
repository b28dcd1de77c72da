"""show_graph's DOT text: what the picture says about the recorded graph.

The oracle is the engine's own introspection (``walk``), PyTorch (the same
computation's gradients and saved tensors) and numpy (summaries of large tensors).
"""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import learntorch
from learntorch.autograd.graph import walk
from widgets import BackpropStepper, show_graph
from widgets._dot import build_dot, build_graph

torch = pytest.importorskip("torch")


def node_lines(dot):
    """DOT id -> the attribute text of that node (legend entries left out)."""
    found = re.findall(r"^  (\w+) \[(.*)\];$", dot, flags=re.M)
    return {name: attrs for name, attrs in found
            if name not in ("graph", "node", "edge") and not name.startswith("legend_")}


def label_of(dot, node_id):
    return re.search(r'label="((?:[^"\\]|\\.)*)"', node_lines(dot)[node_id]).group(1)


def small_regression():
    x = learntorch.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
    w = learntorch.tensor([[0.25], [-1.5], [2.0]], requires_grad=True)
    loss = (x @ w).tanh().sum()
    return loss, x, w


def test_same_graph_twice_gives_identical_dot_text():
    loss, x, w = small_regression()
    first = show_graph(loss, params={"x": x, "w": w}).dot
    again = show_graph(loss, params={"x": x, "w": w}).dot
    rebuilt = show_graph(small_regression()[0]).dot
    assert first == again
    assert "0x" not in first  # no memory addresses
    assert rebuilt == show_graph(small_regression()[0]).dot


def test_dot_text_is_the_same_in_a_fresh_process():
    program = textwrap.dedent("""
        import learntorch
        from widgets._dot import build_dot
        learntorch.manual_seed(0)
        m = learntorch.nn.Sequential(learntorch.nn.Linear(3, 2), learntorch.nn.ReLU())
        loss = m(learntorch.randn(4, 3)).sum()
        print(build_dot(loss, dict(m.named_parameters())), end="")
    """)
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1]
    assert "n0 [" in runs[0]


def test_ids_follow_the_walk_order_and_every_walk_node_is_drawn():
    loss, x, w = small_regression()
    infos = walk(loss)
    graph = build_graph(loss, {"x": x, "w": w})
    ops = [n for n in graph.nodes if n.kind == "op"]
    values = [n for n in graph.nodes if n.is_value]
    assert [n.id for n in ops] == [f"n{i.id}" for i in infos]
    assert [n.fields[0] for n in ops] == ["Sum", "Tanh", "Mm", "AccumulateGrad", "AccumulateGrad"]
    assert len(graph.nodes) == len(infos) + len(values)
    # the values: the output, the two leaves, and tanh's output (saved by TanhBackward)
    assert sorted(n.id for n in values) == ["out", "s0", "v3", "v4"]
    assert len(node_lines(graph.to_dot())) == len(graph.nodes)


def test_edges_follow_next_functions_in_the_forward_direction():
    loss, x, w = small_regression()
    graph = build_graph(loss, show_saved=False)
    data_edges = {(e.src, e.dst) for e in graph.edges}
    expected = {("n0", "out"), ("v3", "n3"), ("v4", "n4")}
    for info in walk(loss):
        expected |= {(f"n{src}", f"n{info.id}") for src, _ in info.inputs if src is not None}
    assert data_edges == expected


def test_names_from_params_label_leaves_and_the_output():
    loss, x, w = small_regression()
    dot = show_graph(loss, params={"x": x, "w": w, "loss": loss}).dot
    labels = [label_of(dot, i) for i in ("v3", "v4", "out")]
    # left to right, a record's cells stack up and down: no { } around them
    assert labels[0].startswith("x\\n(1, 3) | ") or labels[1].startswith("x\\n(1, 3) | ")
    assert any(lab.startswith("w\\n(3, 1) | ") for lab in labels)
    assert labels[2].startswith("loss\\n() | ")
    assert label_of(show_graph(loss).dot, "out").startswith("output\\n() | ")


def test_model_named_parameters_label_the_leaves():
    model = learntorch.nn.Linear(2, 1)
    loss = model(learntorch.ones(1, 2)).sum()
    dot = show_graph(loss, params=dict(model.named_parameters())).dot
    assert 'label="weight\\n(1, 2) | ' in dot and 'label="bias\\n(1,) | ' in dot


def test_small_data_and_grad_show_with_four_significant_digits_like_torch():
    values = [[0.123456, -2.5], [3.0, 1e-5]]
    a = learntorch.tensor(values, requires_grad=True)
    loss = (a.sin() * 3.0).sum()
    loss.backward()
    ta = torch.tensor(values, requires_grad=True)
    (ta.sin() * 3.0).sum().backward()
    expected_grad = "\\n".join("[" + ", ".join(f"{v:.4g}" for v in row) + "]"
                               for row in ta.grad.tolist())
    label = label_of(show_graph(loss, {"a": a}).dot, "v3")
    assert "data [0.1235, -2.5]\\n[3, 1e-05]" in label
    assert f"grad {expected_grad}" in label


def test_large_tensors_show_a_summary_instead_of_values():
    big = learntorch.randn(20, 30, requires_grad=True)
    label = label_of(show_graph(big.relu().sum(), {"big": big}).dot, "v2")
    a = big.detach().numpy().astype(np.float64)
    assert "(20, 30)" in label and "float32" in label
    for word, value in (("min", a.min()), ("mean", a.mean()), ("max", a.max())):
        assert f"{word} {value:.3g}" in label  # a summary says how big: 3 significant digits
    assert label.count(",") < 10  # not 600 numbers


def test_more_than_six_values_are_summarised_so_that_a_record_stays_narrow():
    bias = learntorch.linspace(-1, 1, 10).requires_grad_()   # chapter 03's head.bias: 10 values
    label = label_of(show_graph((bias * 2).sum(), {"head.bias": bias}).dot, "v2")
    assert "data float32\\nmin -1\\nmean 0\\nmax 1" in label
    six = learntorch.arange(6.0).requires_grad_()
    assert "data [0, 1, 2, 3, 4, 5]" in build_dot(six.sum())


def test_max_values_sets_the_line_between_values_and_summary():
    a = learntorch.arange(6.0).requires_grad_()
    assert "data [0, 1, 2, 3, 4, 5]" in build_dot(a.sum(), max_values=6)
    assert "min 0\\nmean 2.5\\nmax 5" in build_dot(a.sum(), max_values=5)
    assert "data [0, 1, 2, 3, 4, 5]" in build_dot(a.sum())   # the default is 6


def test_legend_names_every_colour_the_picture_has_in_one_row():
    dot = show_graph(small_regression()[0]).dot
    legend = dict(re.findall(r"^    legend_(\w+) \[label=\"([^\"]*)\"", dot, flags=re.M))
    assert legend == {"leaf": "leaf (requires grad)", "saved": "saved for backward",
                      "output": "output", "op": "op (backward node)"}
    assert "subgraph cluster_legend" in dot
    # left to right, one row: consecutive columns, held by invisible edges
    assert re.findall(r"legend_(\w+) -> legend_(\w+) \[style=\"invis\"\]", dot) == [
        ("leaf", "saved"), ("saved", "output"), ("output", "op")]
    top_down = show_graph(small_regression()[0], direction="TB").dot
    assert "{ rank=same; legend_leaf; legend_saved; legend_output; legend_op; }" in top_down
    # only the kinds that are drawn: nothing saved here, no orange in the legend
    a = learntorch.tensor([1.0, 2.0], requires_grad=True)
    assert "legend_saved" not in show_graph((a * 2).sum()).dot


def test_the_message_under_the_graph_is_not_repeated_in_the_legend_box():
    a = learntorch.tensor([1.0, 2.0], requires_grad=True)
    dot = BackpropStepper((a * 2).sum()).dot_source()
    legend = dot[dot.index("subgraph cluster_legend"):dot.index("  }\n")]
    assert "label=\"gold" not in legend and "label=\"gold" in dot[dot.index("  }\n"):]


def test_saved_tensors_are_marked_as_torch_saves_them():
    values = [0.5, -1.0, 2.0]
    x = learntorch.tensor(values, requires_grad=True)
    w = learntorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x.exp() * w).sum()
    graph = build_graph(loss, {"x": x, "w": w})
    dot = graph.to_dot()
    # torch: ExpBackward0 saves its result; MulBackward0 saves both factors
    tx = torch.tensor(values, requires_grad=True)
    tloss = (tx.exp() * torch.tensor([1.0, 2.0, 3.0])).sum()
    exp_result = tloss.grad_fn.next_functions[0][0].next_functions[0][0]._saved_result
    saved = [n for n in graph.nodes if n.kind == "saved"]
    assert [n.fields[0] for n in saved] == ["saved output\nof Exp\n(3,)"]
    assert saved[0].fields[1] == "data [" + ", ".join(f"{v:.4g}" for v in exp_result.tolist()) + "]"
    assert 'style="filled,dashed"' in node_lines(dot)[saved[0].id]
    # w is a leaf saved by Mul: its own box gets the dashed orange border, no copy
    w_node = next(n for n in graph.nodes if n.kind == "leaf" and n.fields[0].startswith("w"))
    assert w_node.saved and 'color="darkorange"' in node_lines(dot)[w_node.id]
    x_node = next(n for n in graph.nodes if n.kind == "leaf" and n.fields[0].startswith("x"))
    assert not x_node.saved  # exp saved its result, not x
    ids = {i.name: f"n{i.id}" for i in walk(loss)}
    mul, exp = ids["MulBackward0"], ids["ExpBackward0"]
    # a leaf saved: its arrow goes the forward way; a tensor drawn on its own is written from
    # each op that keeps it and drawn pointing back at it, so it sits after that op
    assert {(e.src, e.dst) for e in graph.edges if e.kind == "saved"} == {(w_node.id, mul)}
    assert {(e.src, e.dst) for e in graph.edges if e.kind == "kept"} == {
        (mul, saved[0].id), (exp, saved[0].id)}
    assert f'{mul} -> {saved[0].id} [style="dashed", color="darkorange", dir="back"]' in dot


def test_a_leaf_alone_draws_its_accumulate_grad_node():
    a = learntorch.tensor([1.0, 2.0], requires_grad=True)
    view = show_graph(a, {"a": a})
    assert [n.id for n in view.graph.nodes] == ["n0", "v0"]
    assert label_of(view.dot, "v0") == "a\\n(2,) | data [1, 2] | grad None"
    assert repr(view) == "GraphView(2 nodes: 1 value, 1 op)"


def test_a_tensor_without_grad_gets_a_message_not_an_exception():
    t = learntorch.tensor([1.0, 2.0]) * 3
    view = show_graph(t)
    assert [n.id for n in view.graph.nodes] == ["out"]
    assert "does not require grad" in view.message and "requires_grad=True" in view.message
    assert "requires_grad=True" in view.dot
    assert "does not require grad" in repr(view)
    assert "<svg" in view.svg()


def test_after_backward_freed_the_graph_it_still_draws_without_saved_tensors():
    loss, x, w = small_regression()
    before = build_graph(loss, {"x": x, "w": w})
    loss.backward()
    after = build_graph(loss, {"x": x, "w": w})
    assert [n.id for n in after.nodes if n.kind == "op"] == \
        [n.id for n in before.nodes if n.kind == "op"]
    assert any(n.kind == "saved" for n in before.nodes)
    assert not any(n.kind == "saved" for n in after.nodes)
    grads = [n.fields[2] for n in after.nodes if n.kind == "leaf"]
    assert all(g.startswith("grad [") for g in grads)
    assert "<svg" in show_graph(loss).svg()


def test_record_special_characters_in_names_are_escaped():
    a = learntorch.tensor(1.0, requires_grad=True)
    dot = build_dot(a * 2, {"a|b {c}": a})
    assert "a\\|b \\{c\\}" in dot


def test_highlight_marks_the_node_of_a_walk_id_or_a_dot_id():
    loss = small_regression()[0]
    graph = build_graph(loss)
    plain = node_lines(graph.to_dot())
    marked = node_lines(graph.to_dot(highlight=1))
    assert 'penwidth="3"' in marked["n1"] and 'penwidth="3"' not in plain["n1"]
    assert node_lines(graph.to_dot(highlight=["n1"])) == marked
    styled = node_lines(graph.to_dot(styles={"n2": {"fillcolor": "gold"}}))
    assert 'fillcolor="gold"' in styled["n2"]


def test_a_picture_does_not_keep_the_saved_tensors_alive():
    import gc
    import weakref

    x = learntorch.randn(3, requires_grad=True)
    hidden = x.exp()
    alive = weakref.ref(hidden)
    loss = hidden.sum()
    graph = build_graph(loss)
    del hidden, loss
    gc.collect()
    assert alive() is None
    exp_info = next(i for i in graph.infos if i.name == "ExpBackward0")
    assert exp_info.saved_shapes == [(3,)] and exp_info.saved == ()
