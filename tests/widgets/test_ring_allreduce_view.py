"""RingAllReduce's picture and live view: the cells, the chunks sent, the controls.

The picture is SVG text, read back with regular expressions: one cell per rank and
element (its tooltip naming the ranks in it), a red outline and an arrow per chunk
sent at the step shown, the bytes under it.  The controls are driven as a learner
would, through ``.click()`` and ``.value``.
"""
import re

import ipywidgets

from widgets import RingAllReduce

CELL = re.compile(r"<title>rank (\d+), element (\d+) \(chunk (\d+)\): holds the numbers of "
                  r"ranks ([\d, ]+)</title><rect[^>]*fill='([^']+)'[^>]*/><text[^>]*>([^<]*)</text>")


def cells(svg):
    return [(int(r), int(e), int(c), ranks, fill, value)
            for r, e, c, ranks, fill, value in CELL.findall(svg)]


def test_the_picture_has_a_cell_per_rank_and_element_with_its_value_and_ranks():
    widget = RingAllReduce(world_size=4, numel=8)
    widget.go_to(2)
    found = cells(widget.static_svg())
    assert [(r, e) for r, e, *_ in found] == [(r, e) for r in range(4) for e in range(8)]
    values = widget.values()
    for rank, element, chunk, ranks, fill, value in found:
        assert value == str(int(values[rank][element]))
        assert chunk == element // 2
        assert ranks == ", ".join(map(str, widget.ranks_in(rank, element)))
        assert (fill == "#98df8a") == (ranks == "0, 1, 2, 3")   # green: every rank's numbers
    assert widget.static_svg().count(">chunk ") == 4 and ">rank 3<" in widget.static_svg()


def test_each_chunk_sent_is_outlined_and_has_an_arrow_to_its_receiver():
    widget = RingAllReduce(world_size=4, numel=8)
    before = widget.static_svg()
    assert "stroke='#d62728' stroke-width='2'/>" not in before and "url(#head)" not in before
    widget.step()
    svg = widget.static_svg()
    assert svg.count("fill='none' stroke='#d62728' stroke-width='2'/>") == 4   # 4 outlines
    assert svg.count("marker-end='url(#head)'") == 4                           # 4 arrows
    assert svg.count("<path d=") == 2     # the arrowhead's, and rank 3 -> rank 0 round the ring
    assert "step 1 of 6 · reduce-scatter" in svg
    assert "this step: 8 B from rank 0; sent by rank 0 so far: 8 of 48 B (the tensor is 32 B)" in svg


def test_the_words_name_each_transfer_and_the_bytes():
    widget = RingAllReduce(world_size=3, numel=6)
    widget.go_to(4)
    text = widget.describe()
    assert text.splitlines()[0] == ("step 4 of 4 · all-gather: each rank sends one chunk to its "
                                    "right neighbour, which replaces its own with it")
    assert "rank 2 -> rank 0: chunk 2 (8 B)" in text
    assert "complete chunks: rank 0: [0, 1, 2], rank 1: [0, 1, 2], rank 2: [0, 1, 2]" in text
    assert "sent by rank 0 so far: 32 B of 32 B in all = 1.33 x the tensor (24 B); " \
           "2(N-1)/N = 1.33" in text


def _control(view, kind, description):
    pending = [view]
    while pending:
        widget = pending.pop(0)
        if isinstance(widget, kind) and getattr(widget, "description", None) == description:
            return widget
        pending.extend(getattr(widget, "children", ()))
    raise LookupError(description)


def test_step_previous_reset_and_the_slider_drive_the_ring_and_the_picture():
    widget = RingAllReduce(world_size=4, numel=8)
    view = widget.view()
    step, previous = _control(view, ipywidgets.Button, "Step"), _control(view, ipywidgets.Button, "Previous")
    reset, slider = _control(view, ipywidgets.Button, "Reset"), _control(view, ipywidgets.IntSlider, "step")
    picture = view.children[1]
    assert previous.disabled and slider.max == 6 and "step 0 of 6" in picture.value
    step.click()
    step.click()
    assert widget.position == 2 and slider.value == 2 and "step 2 of 6" in picture.value
    previous.click()
    assert widget.position == 1 and "step 1 of 6" in view.children[2].value
    slider.value = 6
    assert widget.position == 6 and step.disabled and ">1111<" in picture.value
    reset.click()
    assert widget.position == 0 and slider.value == 0


def test_play_moves_the_slider_and_the_ring():
    widget = RingAllReduce(world_size=2, numel=4)
    view = widget.view()
    play = _control(view, ipywidgets.Play, "play")
    play.value = 1   # what the front end's Play sends on a tick
    assert widget.position == 1 and "step 1 of 2" in view.children[1].value


def test_repr_and_picture_are_deterministic_and_displayed_with_the_view():
    a, b = RingAllReduce(world_size=3, numel=5), RingAllReduce(world_size=3, numel=5)
    a.go_to(4), b.go_to(4)
    assert repr(a) == repr(b) == "RingAllReduce(3 ranks, 5 elements: step 4 of 4, all-gather, done)"
    assert a.static_svg() == b.static_svg()
    bundle = a._repr_mimebundle_()
    assert bundle["text/plain"] == repr(a) and bundle["image/svg+xml"].startswith("<svg")
    assert "application/vnd.jupyter.widget-view+json" in bundle
