"""show_compiled draws what learntorch.compile fused: one frame per generated kernel,
around exactly the ops that kernel computes, with the kernel's loop beside it; before
fusion every op is a plain box.  Its traffic figures count the bytes each pass moves."""
import re

import pytest

import learntorch
import learntorch.nn.functional as F
from widgets import show_compiled


@pytest.fixture
def layer():
    f = learntorch.compile(lambda x, W, b: F.gelu(x @ W + b) * 0.5)
    f(learntorch.randn(16, 8), learntorch.randn(8, 32), learntorch.randn(32))
    return f


def frame_members(dot):
    """{cluster index: [node ids inside it]} read back from the DOT text."""
    frames = {}
    for k, body in re.findall(r"subgraph cluster_(\d+) \{(.*?)\n  \}", dot, re.S):
        frames[int(k)] = re.findall(r"^\s+(n_\w+) \[", body, re.M)
    return frames


def test_after_fusion_each_kernel_frames_exactly_its_ops(layer):
    view = show_compiled(layer)
    assert frame_members(view.dot) == {0: ["n_add", "n_gelu", "n_mul"]}
    assert "n_mm [" in view.dot and "cluster" not in view.dot.split("n_mm [")[0]


def test_before_fusion_there_are_no_frames_and_no_source(layer):
    view = show_compiled(layer, mode="before")
    assert frame_members(view.dot) == {}
    assert "source [" not in view.dot
    assert repr(view) == "CompiledView(before fusion: 4 ops, each its own pass over memory)"


def test_the_note_beside_the_frame_is_the_kernels_own_loop(layer):
    view = show_compiled(layer)
    note = re.search(r'source \[.*label="(.*)"\];', view.dot).group(1)
    for line in layer.kernels[0].source.body:
        assert line.split("#")[0].rstrip().replace("\\", "\\\\") in note.split("\\l")
    assert view.source == layer.kernels[0].text
    assert "n_mul -> source" in view.dot  # joined to the group's last op


def test_selecting_walks_through_the_kernels_and_rejects_a_missing_one():
    f = learntorch.compile(lambda x, y: ((x * y).relu() @ y.t() + 1).tanh())
    f(learntorch.randn(3, 4), learntorch.randn(3, 4))
    view = show_compiled(f)
    assert view.selected == 0
    view.next_kernel()
    assert view.selected == 1 and "kernel_1" in view.source
    view.next_kernel()
    assert view.selected == 0
    with pytest.raises(IndexError, match="2 kernel"):
        view.select(2)
    view.select(None)
    assert view.source == "" and "source [" not in view.dot


def test_traffic_counts_each_pass_over_memory(layer):
    # x (16, 8), W (8, 32), b (32,), every result (16, 32): float32, 4 bytes
    x, w, b, r = 16 * 8 * 4, 8 * 32 * 4, 32 * 4, 16 * 32 * 4
    eager = (x + w + r) + (r + b + r) + (r + r) + (r + r)  # mm, add, gelu, mul
    fused = (x + w + r) + (r + b + r)                      # mm, then one kernel
    assert show_compiled(layer).traffic() == {"eager": eager, "fused": fused}


def test_the_picture_is_deterministic_and_rendered(layer):
    a, b = show_compiled(layer), show_compiled(layer)
    assert a.dot == b.dot and a.svg() == b.svg()
    assert "<svg" in a.static_svg() and "kernel_0" in a.static_svg()


def test_showing_before_the_first_call_explains_what_to_do():
    with pytest.raises(ValueError, match="call the compiled function once"):
        show_compiled(learntorch.compile(lambda x: x + 1))
    with pytest.raises(TypeError, match="learntorch.compile"):
        show_compiled(lambda x: x)


def test_a_number_argument_is_not_drawn_as_an_input():
    # scale is a Python float: the kernel holds it as a constant, no tensor flows from it
    f = learntorch.compile(lambda x, scale: x.exp() * scale + 1)
    f(learntorch.randn(5), 0.5)
    dot = show_compiled(f).dot
    assert "n_x [" in dot and "n_scale" not in dot
