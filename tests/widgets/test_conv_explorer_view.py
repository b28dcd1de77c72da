"""ConvExplorer's live view: the position slider moves the highlighted window, output pixel and
im2col row; the padding/stride/dilation sliders change the convolution; the picture follows."""
import re

import ipywidgets as w

import learntorch as torch
from widgets.conv_explorer import ConvExplorer


def _controls(explorer):
    (play, position), settings, picture, text = [c.children if isinstance(c, w.HBox) else c
                                                 for c in explorer.view().children]
    return play, position, {s.description: s for s in settings}, picture, text


def _red(picture):
    # the tooltips of the cells outlined in red: the window's taps, the output pixel, the im2col row
    return re.findall(r"<title>([^<]*)</title><rect[^>]*stroke='#d62728'", picture.value)


def test_the_position_slider_moves_window_output_pixel_and_im2col_row():
    explorer = ConvExplorer(torch.arange(16.).reshape(4, 4), torch.ones(2, 2))
    play, position, settings, picture, text = _controls(explorer)
    assert isinstance(play, w.Play) and position.description == "position"
    assert (play.max, position.max) == (8, 8)
    position.value = 4                                        # output pixel (1, 1)
    assert explorer.out_index == (1, 1)
    red = _red(picture)
    assert red[:4] == ["pixel (1, 1) = 5", "pixel (1, 2) = 6", "pixel (2, 1) = 9", "pixel (2, 2) = 10"]
    assert "output (1, 1) = 30" in red
    assert [t for t in red if t.startswith("row 4,")] == [f"row 4, tap {t}" for t in
                                                          [(0, 0), (0, 1), (1, 0), (1, 1)]]
    assert "output (1, 1) = 5·1 + 6·1 + 9·1 + 10·1 = 30" in text.value


def test_padding_stride_and_dilation_sliders_change_the_convolution():
    explorer = ConvExplorer(torch.zeros(6, 6), torch.ones(3, 3))
    play, position, settings, picture, text = _controls(explorer)
    assert sorted(settings) == ["dilation", "padding", "stride"]
    settings["padding"].value = 1
    assert explorer.output_shape == (6, 6) and position.max == 35
    assert "padding: 0" in picture.value                      # the border cells are drawn
    settings["stride"].value = 2
    assert explorer.output_shape == (3, 3) and play.max == 8
    settings["dilation"].value = 2
    assert explorer.output_shape == (2, 2)
    assert "Ho = (6 + 2·1 - 2·(3 - 1) - 1) // 2 + 1 = 2" in text.value


def test_a_refused_setting_puts_the_slider_back_and_says_why():
    explorer = ConvExplorer(torch.zeros(4, 4), torch.ones(3, 3))
    play, position, settings, picture, text = _controls(explorer)
    settings["dilation"].value = 3
    assert explorer.dilation == 1 and settings["dilation"].value == 1
    assert "more than the padded image" in text.value


def test_code_that_changes_the_state_moves_the_controls():
    explorer = ConvExplorer(torch.zeros(5, 5), torch.ones(3, 3))
    play, position, settings, picture, text = _controls(explorer)
    explorer.set(padding=2)
    explorer.select(30)
    assert settings["padding"].value == 2 and position.value == 30 and position.max == 48
