"""KernelGrid shows what a real CUDA launch did (on a GPU, or in Numba's CUDA simulator).

The oracle for the elementwise layout is the engine's own launch geometry
(``backends/cuda/driver.py``: thread i = block * threads_per_block + thread); for the
tree reduction it is numpy: the fold of thread t is ``x[r, t::T].sum()``, each round adds
slot t + step into slot t, and the result is ``x.sum(axis=1)`` -- which the engine's own
cuda ``sum(dim=1)`` must also give.  The view is driven through ``.value`` and ``.click()``.
"""
import re

import numpy as np
import pytest

from widgets import KernelGrid

X = (np.arange(3 * 13, dtype=np.float32).reshape(3, 13) * 7) % 11 - 5   # small whole numbers
MAP_CELL = re.compile(r"<title>x\[(\d+), (\d+)\] \(element (\d+)\): block (\d+), thread (\d+)"
                      r"</title><rect[^>]*fill='([^']+)'")
SLOT = re.compile(r"<title>block (\d+), shared\[(\d+)\] after round (\d+)(?: \(([^)]*)\))?"
                  r"</title><rect[^>]*stroke='([^']+)'[^>]*/><text[^>]*>([^<]*)</text>")


def test_map_records_the_engines_launch_geometry_for_every_element():
    grid = KernelGrid(X, kernel="map")   # first: it chooses the simulator before numba.cuda loads
    from learntorch.backends.cuda import driver
    per_block = driver.threads_per_block()
    assert grid.threads_per_block == per_block and grid.blocks == driver.blocks(X.size)
    flat = np.arange(X.size).reshape(X.shape)
    np.testing.assert_array_equal(grid.block_of, flat // per_block)
    np.testing.assert_array_equal(grid.thread_of, flat % per_block)
    assert grid.owner(2, 12) == divmod(38, per_block)


def test_the_map_picture_has_a_cell_per_element_coloured_by_block():
    grid = KernelGrid(X, kernel="map")
    cells = MAP_CELL.findall(grid.static_svg())
    assert [(int(r), int(c)) for r, c, *_ in cells] == [(r, c) for r in range(3) for c in range(13)]
    colours = {}
    for r, c, element, block, thread, fill in cells:
        assert int(element) == int(r) * 13 + int(c)
        assert (int(block), int(thread)) == grid.owner(int(r), int(c))
        colours.setdefault(block, set()).add(fill)
    assert all(len(fills) == 1 for fills in colours.values())          # one colour per block
    assert len({next(iter(f)) for f in colours.values()}) == len(colours)


def test_reduce_records_the_fold_and_every_round_of_the_tree():
    grid = KernelGrid(X, kernel="reduce", threads=8)
    T = 8
    np.testing.assert_array_equal(grid.folded_by, np.arange(13)[None, :].repeat(3, 0) % T)
    previous = np.stack([[X[r, t::T].sum() for t in range(T)] for r in range(3)])
    np.testing.assert_allclose(grid.trace[:, 0], previous)
    assert grid.rounds == 3
    for round_ in range(1, 4):
        step = T >> round_
        grid.round = round_
        for block in range(3):
            now = grid.shared(block)
            np.testing.assert_allclose(now[:step], previous[block, :step] + previous[block, step:2 * step])
            np.testing.assert_allclose(now[step:], previous[block, step:])   # untouched slots
        previous = grid.trace[:, round_]
    np.testing.assert_allclose(grid.result(), X.sum(axis=1))
    assert grid.matches_engine()                   # the engine's cuda sum(dim=1) agrees


def test_reduce_uses_the_engines_thread_count_by_default():
    grid = KernelGrid(X, kernel="reduce")
    from learntorch.backends.cuda import reduction
    assert grid.tree_threads == reduction.threads(13)
    np.testing.assert_allclose(grid.result(), X.sum(axis=1))


def test_the_reduce_picture_outlines_the_slots_written_and_read_in_the_round_shown():
    grid = KernelGrid(X, kernel="reduce", threads=8)
    grid.round = 2                                 # step 2: slots 0, 1 written, 2, 3 read
    slots = SLOT.findall(grid.static_svg())
    assert len(slots) == 3 * 8
    for block, slot, round_, role, stroke, value in slots:
        block, slot = int(block), int(slot)
        assert round_ == "2" and float(value) == grid.trace[block, 2, slot]
        if slot < 2:
            assert stroke == "#d62728" and role == f"written: slot {slot} += slot {slot + 2}"
        elif slot < 4:
            assert stroke == "#1f77b4" and role == f"read by thread {slot - 2}"
        else:
            assert stroke == "#555" and role == ""
    assert "round 2 of 3: threads t &lt; 2 add slot t + 2 into slot t" in grid.static_svg()


def test_the_controls_switch_kernels_and_step_through_the_rounds():
    grid = KernelGrid(X, kernel="map", threads=4)
    view = grid.view()
    kernel, round_ = grid.kernel_control, grid.round_control
    step, reset, picture = grid.step_button, grid.reset_button, grid.picture
    assert (kernel.description, round_.description, step.description) == ("kernel", "round", "Step")
    assert picture in view.children
    assert "one thread per element" in picture.value and round_.disabled and step.disabled
    kernel.value = "reduce"
    assert grid.kernel == "reduce" and round_.max == 2 and not round_.disabled
    assert "after the fold" in picture.value
    step.click()
    assert grid.round == 1 and round_.value == 1 and "round 1 of 2" in picture.value
    round_.value = 2
    assert grid.round == 2 and step.disabled and "slot 0 holds the row&#x27;s sum" in picture.value
    reset.click()
    assert grid.round == 0 and round_.value == 0
    kernel.value = "map"
    assert "one thread per element" in picture.value


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="2-D tensor of at most 8 rows of 32"):
        KernelGrid(np.zeros((2, 40), np.float32))
    with pytest.raises(ValueError, match="power of two"):
        KernelGrid(X, kernel="reduce", threads=6)
    with pytest.raises(IndexError, match="0 \\(after the fold\\) to 3"):
        KernelGrid(X, kernel="reduce", threads=8).round = 4
