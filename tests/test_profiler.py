"""learntorch.profiler: every op's forward and backward recorded once, times that add up."""
import pytest

import learntorch as torch
from learntorch import nn
from learntorch.autograd import function as autograd_function
from learntorch.autograd.graph import walk
from learntorch.profiler import ProfilerActivity, profile, record_function


def _counts(prof):
    return {row.key: row.count for row in prof.key_averages()}


def test_each_forward_and_backward_is_one_event_named_after_its_function_and_node():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    with profile() as prof:
        loss = (x * w).exp().sum()
        loss.backward()
    top_level = [(e.name, e.kind) for e in prof.events() if e.parent is None]
    assert top_level == [("Mul", "forward"), ("Exp", "forward"), ("Sum", "forward"),
                         ("SumBackward0", "backward"), ("ExpBackward0", "backward"),
                         ("MulBackward0", "backward"),
                         # the engine sums MulBackward0's (3, 4) gradient to w's shape (4,)
                         ("Sum", "forward")]
    # the ops a backward formula runs are recorded inside its node (SumBackward0 expands
    # its gradient with tensor ops; ExpBackward0 multiplies arrays, which are not ops)
    nested = {(e.parent.name, e.name) for e in prof.events() if e.parent is not None}
    assert ("SumBackward0", "Expand") in nested


def test_backward_events_are_the_graph_nodes_walk_reports():
    model = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 3))
    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    nodes = [n.name for n in walk(loss) if n.name != "AccumulateGrad"]
    with profile() as prof:
        loss.backward()
    backward_names = [e.name for e in prof.events() if e.kind == "backward"]
    assert sorted(backward_names) == sorted(nodes)


def test_self_time_excludes_nested_ops_and_totals_contain_them():
    x = torch.randn(16, 16, requires_grad=True)
    with profile() as prof:
        with record_function("step"):
            (x.softmax(-1) * 2).sum().backward()
    events = prof.events()
    step = next(e for e in events if e.name == "step")
    inner = [e for e in events if e.parent is step]
    assert inner, "the ops inside record_function must be its children"
    assert step.cpu_time_total >= sum(e.cpu_time_total for e in inner)
    assert step.self_cpu_time_total == pytest.approx(
        step.cpu_time_total - sum(e.cpu_time_total for e in inner), abs=1e-6)
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
    # self times partition the whole recorded time: they add up to the outermost totals
    outermost = sum(e.cpu_time_total for e in events if e.parent is None)
    assert prof.key_averages().self_cpu_time_total == pytest.approx(outermost, rel=1e-9)


def test_record_shapes_groups_by_input_shape():
    with profile(record_shapes=True) as prof:
        torch.ones(2, 3) + torch.ones(3)
        torch.ones(4, 1) + torch.ones(4, 1)
        torch.ones(4, 1) + torch.ones(4, 1)
    rows = {(r.key, str(r.input_shapes)): r.count
            for r in prof.key_averages(group_by_input_shape=True)}
    assert rows == {("Add", "[[2, 3], [3]]"): 1, ("Add", "[[4, 1], [4, 1]]"): 2}
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()


def test_table_has_torchs_columns_sorted_and_limited():
    x = torch.randn(32, 32, requires_grad=True)
    with profile() as prof:
        for _ in range(3):
            (x @ x).relu().mean().backward()
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    lines = table.splitlines()
    # 3 forward matmuls, and 2 per backward (the gradients of both operands)
    assert lines[3].split()[0] == "Mm" and lines[3].split()[-1] == "9"
    for column in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg", "# of Calls"):
        assert column in lines[1]
    assert len(lines) == 3 + 2 + 2  # header block, two rows, rule and total
    assert lines[-1].startswith("Self CPU time total:")
    assert int(lines[4].split()[-1]) <= 9
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="flops")


def test_profiling_leaves_the_engine_as_it_found_it_even_after_an_error():
    from learntorch._fast import engine
    forward = autograd_function.Function.__dict__["apply"]
    backward = autograd_function.BackwardNode.__dict__["apply"]
    backward_raw = engine.apply_raw
    with pytest.raises(ZeroDivisionError):
        with profile():
            with profile():  # nested profiles install the wrappers once
                1 / 0
    assert autograd_function.Function.__dict__["apply"] is forward
    assert autograd_function.BackwardNode.__dict__["apply"] is backward
    assert engine.apply_raw is backward_raw
    x = torch.ones(2, requires_grad=True)
    (x * 3).sum().backward()  # and the engine still works
    assert x.grad.tolist() == [3.0, 3.0]


def test_results_wait_for_the_end_of_the_block():
    with pytest.raises(RuntimeError, match="never entered"):
        profile().events()
    with profile() as prof:
        with pytest.raises(RuntimeError, match="still recording"):
            prof.events()


def test_only_cpu_activity_is_recorded():
    with pytest.raises(ValueError, match="CPU"):
        profile(activities=[ProfilerActivity.CUDA])
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.ones(3).sum()
    assert _counts(prof) == {"Sum": 1}
