"""TensorExplorer's live view: every control drives the state, and the picture follows."""
import re

import ipywidgets as w

import learntorch as torch
from widgets.tensor_explorer import TensorExplorer


def _controls(explorer):
    box = explorer.view()
    dropdown, sliders, picture, text = box.children
    return dropdown, sliders, picture, text


def test_dropdown_lists_the_views_and_switches_the_picture():
    explorer = TensorExplorer(torch.arange(12.).reshape(3, 4))
    dropdown, sliders, picture, text = _controls(explorer)
    assert isinstance(dropdown, w.Dropdown) and dropdown.description == "view"
    assert list(dropdown.options) == list(explorer.views)
    before = picture.value
    dropdown.value = "t.T"
    assert explorer.selected == "t.T"
    assert picture.value != before and "t.T: shape (4, 3), stride (1, 4), offset 0" in picture.value
    assert [s.max for s in sliders.children] == [3, 2]      # the sliders follow the new shape
    assert "t.T: shape (4, 3), stride (1, 4), storage_offset 0 (not contiguous)" in text.value


def test_index_sliders_move_the_selection_and_the_highlighted_storage_cell():
    explorer = TensorExplorer(torch.arange(12.).reshape(3, 4))
    dropdown, sliders, picture, text = _controls(explorer)
    rows, cols = sliders.children
    assert isinstance(rows, w.IntSlider) and rows.description == "index dim 0"
    rows.value, cols.value = 2, 1
    assert explorer.index == (2, 1) and explorer.storage_position() == 9
    assert "index (2, 1) -&gt; storage[offset 0 + 2·4 + 1·1 = 9] = 9" in text.value
    # the selected grid cell and storage cell are the two with the thick red outline
    thick = re.findall(r"<title>([^<]*)</title><rect[^>]*stroke='#d62728' stroke-width='3'", picture.value)
    assert thick == ["index (2, 1) -&gt; storage[9]", "storage[9]"]
    assert "marker-end='url(#head)'" in picture.value      # the arrow from the cell to its storage


def test_state_changes_made_in_code_move_the_controls():
    explorer = TensorExplorer(torch.arange(12.).reshape(3, 4))
    dropdown, sliders, picture, text = _controls(explorer)
    explorer.select_view("t[::2]")
    explorer.select_index(1, 3)
    assert dropdown.value == "t[::2]"
    assert [s.value for s in sliders.children] == [1, 3]
    assert "= 11]" in text.value


def test_expanded_view_outlines_every_index_that_shares_the_cell():
    explorer = TensorExplorer(torch.arange(12.).reshape(3, 4))
    dropdown, sliders, picture, text = _controls(explorer)
    dropdown.value = "t[0].expand(3, 4)"
    sliders.children[1].value = 2
    dashed = re.findall(r"<title>([^<]*)</title><rect[^>]*stroke-dasharray", picture.value)
    assert dashed == ["index (1, 2) -&gt; storage[2]", "index (2, 2) -&gt; storage[2]"]
    assert "storage[2] is read by 3 indices" in text.value


def test_broadcast_view_slider_moves_the_output_element():
    view = TensorExplorer.broadcast((3, 1), (4,))
    *sliders, picture, text = view.view().children
    assert [s.description for s in sliders] == ["out dim 0", "out dim 1"]
    before = picture.value
    sliders[0].value, sliders[1].value = 2, 3
    assert view.index == (2, 3) and picture.value != before
    assert "out[2, 3] = a[2, 0] + b[3] = 3 + 40 = 43" in text.value


def test_repr_and_display_bundle_are_deterministic():
    def make():
        e = TensorExplorer(torch.arange(12.).reshape(3, 4), index=(1, 2))
        e.select_view("t[:, 1:]")
        return e
    a, b = make(), make()
    assert repr(a) == ("TensorExplorer(view 't[:, 1:]', shape (3, 3), stride (4, 1), offset 1, "
                       "index (1, 2) -> storage[7])")
    assert a.static_svg() == b.static_svg()
    bundle = a._repr_mimebundle_()
    assert bundle["text/plain"] == repr(a)
    assert bundle["image/svg+xml"].startswith("<svg")
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_a_large_tensor_is_drawn_as_a_window_around_the_selection():
    t = torch.arange(30 * 30.).reshape(30, 30)
    explorer = TensorExplorer(t, index=(20, 25))
    svg = explorer.static_svg()
    assert svg.count("<title>index") == 12 * 12               # at most 12 cells per side
    assert "<title>index (20, 25) -&gt; storage[625]</title>" in svg
    assert "<title>storage[625]</title>" in svg
