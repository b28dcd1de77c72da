"""ProfilerView draws a profile's own records: one bar per op name (the rows of
``key_averages()``), a timeline with one box per event at its nesting depth.  The oracle is
the profile itself; the view is driven through its controls' ``.value``."""
import re

import pytest

import learntorch as torch
import learntorch.nn.functional as F
from learntorch.profiler import profile, record_function
from widgets import ProfilerView

BAR = re.compile(r"<title>([^<(]+) \((forward|backward|user)\): (\d+) call\(s\), self ([\d.]+) us, "
                 r"total ([\d.]+) us</title><rect x='[\d.]+' y='[\d.]+' width='([\d.]+)'")
BOX = re.compile(r"<title>([^<(]+) \((forward|backward|user)\): [\d.]+ us from [\d.]+ us</title>"
                 r"<rect x='[\d.]+' y='(\d+)'")


def profiled_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    with profile() as prof:
        with record_function("train_step"):
            F.cross_entropy(model(x), y).backward()
    return prof


def test_one_bar_per_op_of_key_averages_longest_first():
    prof = profiled_step()
    view = ProfilerView(prof, rows=50)
    expected = {(a.key, a.kind, a.count) for a in prof.key_averages()}
    bars = BAR.findall(view.static_svg())
    assert {(name, kind, int(count)) for name, kind, count, *_ in bars} == expected
    selfs = [float(s) for *_, s, _, _ in bars]
    assert selfs == sorted(selfs, reverse=True)
    widths = [float(w) for *_, w in bars]
    assert widths[0] == 420.0 and widths == sorted(widths, reverse=True)
    names = {name for name, *_ in bars}
    assert {"Linear", "LinearBackward0", "Relu", "ReluBackward0", "train_step"} <= names


def test_show_backward_keeps_the_backward_nodes_and_slowest_follows_sort_by():
    prof = profiled_step()
    view = ProfilerView(prof, show="backward")
    assert view.shown() and all(op.kind == "backward" and op.key.endswith("Backward0")
                                for op in view.shown())
    view.sort_by = "cpu_time_total"
    ops = [op for op in prof.key_averages() if op.kind != "user"]
    assert view.slowest() == max(ops, key=lambda op: op.cpu_time_total).key
    assert view.slowest("backward") == max((op for op in ops if op.kind == "backward"),
                                           key=lambda op: op.cpu_time_total).key


def test_the_timeline_draws_each_event_at_its_nesting_depth():
    prof = profiled_step()
    view = ProfilerView(prof, chart="timeline")
    boxes = BOX.findall(view.static_svg())
    assert len(boxes) == len(prof.events())
    depth_of = {(e.name, e.kind): (0 if e.parent is None else 1 if e.parent.parent is None else 2)
                for e in prof.events()}
    for name, kind, y in boxes:
        assert (int(y) - 40) // 20 == depth_of[(name, kind)]
    assert ("train_step", "user") in {(n, k) for n, k, _ in boxes}
    assert depth_of[("Linear", "forward")] == 1     # inside the labelled region


def test_the_controls_change_the_picture():
    import ipywidgets
    view = ProfilerView(profiled_step())
    box = view.view()
    chart = next(c for c in box.children if getattr(c, "description", "") == "chart")
    rows = next(c for c in box.children if isinstance(c, ipywidgets.IntSlider))
    show = next(c for c in box.children if getattr(c, "description", "") == "show")
    picture = box.children[4]
    rows.value = 2
    assert len(BAR.findall(picture.value)) == 2
    show.value = "forward"
    assert {kind for _, kind, *_ in BAR.findall(picture.value)} == {"forward"}
    chart.value = "timeline"
    assert "every event in time order (forward)" in picture.value and BOX.findall(picture.value)
    assert "slowest (forward)" in box.children[5].value


def test_repr_is_deterministic_and_bad_settings_are_named():
    view = ProfilerView(profiled_step())
    assert repr(view).startswith("ProfilerView(") and "us" not in repr(view)
    assert "2 forward" not in repr(view) and "1 labelled" in repr(view)
    with pytest.raises(ValueError, match="chart must be one of 'bars', 'timeline'"):
        view.chart = "pie"
    with pytest.raises(ValueError, match="recorded no events"):
        with profile() as empty:
            pass
        ProfilerView(empty)
