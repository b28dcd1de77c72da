"""TrainingDashboard in a notebook: gradient norms, the live view, the curves it plots,
the static picture, and how it decides between a widget and a text line."""
import io
import math
import types
import xml.etree.ElementTree as ET

import ipywidgets as w
import numpy as np
import pytest

import learntorch as torch
from learntorch import nn
import learntorch.nn.functional as F
import widgets.training_dashboard as dashboard_module
from widgets.training_dashboard import TrainingDashboard, in_notebook, layer_grad_norms, smoothed


SVG = "{http://www.w3.org/2000/svg}"


def _model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3, bias=False))


def _one_step(model, opt):
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def test_grad_norms_per_layer_equal_the_norms_of_the_parameters_gradients():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dash = TrainingDashboard(model=model, grad_norms=True, mode="text", stream=io.StringIO(),
                             clock=lambda: 0.0)
    for _ in range(3):
        loss = _one_step(model, opt)
        dash.step(loss=loss.item())
        expected = {
            "0": math.sqrt(model[0].weight.grad.norm().item() ** 2 + model[0].bias.grad.norm().item() ** 2),
            "2": model[2].weight.grad.norm().item(),
        }
        assert dash.history["grad_norms"][-1] == pytest.approx(expected, rel=1e-5)
    assert len(dash.history["grad_norms"]) == 3


def test_a_parameter_without_gradient_counts_as_zero():
    model = _model()
    assert layer_grad_norms(model) == {"0": 0.0, "2": 0.0}


def _widget_dashboard(now, **kw):
    return TrainingDashboard(epochs=2, steps_per_epoch=5, mode="widget", display=False,
                             clock=lambda: now[0], redraw_every=0.25, **kw)


def test_live_view_progress_bar_status_and_image_follow_training():
    now, model = [0.0], _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dash = _widget_dashboard(now, model=model, grad_norms=True)
    box = dash.view()
    (bar, status), image, smoothing = box.children[0].children, box.children[1], box.children[2]
    assert isinstance(bar, w.IntProgress) and isinstance(image, w.HTML) and isinstance(smoothing, w.FloatSlider)
    assert (bar.value, bar.max) == (0, 10)
    first_picture = image.value
    assert first_picture.startswith("<svg") and 'width="100%"' in first_picture   # fits the output
    for _ in range(3):
        now[0] += 0.5
        dash.step(loss=_one_step(model, opt).item(), batch_size=16)
    assert bar.value == 3
    # 7 steps left at 0.5 s each: 3.5 s, shown rounded
    assert "step 3/5" in status.value and "ETA 0:04" in status.value
    assert image.value != first_picture and dash.plot_redraws == 3


def test_smoothing_slider_redraws_the_smoothed_curve():
    now = [0.0]
    dash = _widget_dashboard(now)
    box = dash.view()
    image, slider = box.children[1], box.children[2]
    losses = [1.0, 3.0, 2.0, 0.5, 0.25]
    for loss in losses:
        dash.step(loss=loss)
    before = image.value
    slider.value = 0.5
    assert dash.smoothing == 0.5 and image.value != before
    x, y = dash.curve_data("loss_smooth")
    np.testing.assert_allclose(y, smoothed(losses, 0.5))
    np.testing.assert_allclose(x, np.arange(1, 6) / 5)       # x in epochs: step / steps_per_epoch
    slider.value = 0.0
    np.testing.assert_allclose(dash.curve_data("loss_smooth")[1], losses)


def test_curves_plot_the_history():
    now = [0.0]
    dash = _widget_dashboard(now)
    for e in range(2):
        for k in range(5):
            dash.step(loss=1.0 / (1 + k + 5 * e), accuracy=None if k == 0 else 0.1 * k, batch_size=2)
        dash.epoch_end(val_loss=0.5 - 0.1 * e, val_accuracy=0.6 + 0.1 * e)
    x, y = dash.curve_data("loss")
    np.testing.assert_allclose(y, dash.history["loss"])
    x, y = dash.curve_data("accuracy")                      # steps without accuracy are left out
    assert len(y) == 8 and x[0] == pytest.approx(0.4)
    np.testing.assert_allclose(dash.curve_data("val_loss")[0], [1.0, 2.0])   # at each epoch's end
    np.testing.assert_allclose(dash.curve_data("val_loss")[1], [0.5, 0.4])
    np.testing.assert_allclose(dash.curve_data("epoch_loss")[1], dash.history["epoch_loss"])


def test_the_svg_draws_each_curve_where_its_data_is():
    # the picture is hand-written SVG: each line is a group data-series=NAME; its points
    # must be the curve's data mapped by one affine map per panel (x and y separately)
    now = [0.0]
    dash = _widget_dashboard(now)
    for e in range(2):
        for k in range(5):
            dash.step(loss=1.0 / (1 + k + 5 * e) + 0.1 * (k % 2), accuracy=0.1 * k, batch_size=2)
        dash.epoch_end(val_loss=0.5 - 0.1 * e)
    root = ET.fromstring(dash.static_svg())
    panels = {g.find(f"{SVG}text").text: g for g in root.findall(f"{SVG}g")}
    assert set(panels) == {"loss", "accuracy"}
    for metric, panel in panels.items():
        for name in (metric, metric + "_smooth"):
            x, y = dash.curve_data(name)
            line = panel.find(f".//{SVG}g[@data-series='{name}']/{SVG}polyline")
            points = np.array([p.split(",") for p in line.get("points").split()], dtype=float)
            assert len(points) == len(x)
            for data, pixels in ((x, points[:, 0]), (y, points[:, 1])):
                scale, offset = np.polyfit(data, pixels, 1)
                np.testing.assert_allclose(pixels, scale * data + offset, atol=0.1)  # 0.1: rounding
                assert (scale < 0) == (data is y)                # SVG's y axis points down
        texts = {t.text for t in panel.iter(f"{SVG}text")}
        assert "epoch" in texts                                  # the x axis label
    markers = panels["loss"].findall(f".//{SVG}g[@data-series='val_loss']/{SVG}rect")
    assert len(markers) == 2                                     # one square per validation
    legend = {t.text for t in panels["loss"].iter(f"{SVG}text")}
    assert {"train (step)", "train (smoothed)", "train (epoch)", "validation"} <= legend


def test_a_long_run_is_drawn_with_a_bounded_number_of_points():
    now = [0.0]
    dash = _widget_dashboard(now)
    losses = np.abs(np.sin(np.arange(20_000) / 50.0))
    losses[12_345] = 5.0                                          # a spike must stay visible
    for loss in losses:
        dash.step(loss=float(loss))
    root = ET.fromstring(dash.static_svg())
    line = root.find(f".//{SVG}g[@data-series='loss']/{SVG}polyline")
    points = np.array([p.split(",") for p in line.get("points").split()], dtype=float)
    assert len(points) <= 2 * 400                                # about 2 per pixel of width
    # y pixels grow downward; the losses go from 0 to 1, the spike to 5: drawn five times
    # as far above the lowest point as the highest of the others
    heights = np.sort(points[:, 1].max() - points[:, 1])
    assert heights[-1] / heights[-2] == pytest.approx(5.0, rel=0.01)


def test_gradient_bars_show_the_latest_norms():
    now, model = [0.0], _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dash = _widget_dashboard(now, model=model, grad_norms=True)
    dash.step(loss=_one_step(model, opt).item())
    svg = dash.static_svg()
    latest = dash.history["grad_norms"][-1]
    bars = ET.fromstring(svg).findall(f".//{SVG}g[@data-series='bars']/{SVG}rect")
    assert [float(bar.get("data-value")) for bar in bars] == [latest["0"], latest["2"]]
    widths = [float(bar.get("width")) for bar in bars]      # drawn to scale from 0
    assert widths[0] / widths[1] == pytest.approx(latest["0"] / latest["2"], rel=0.02)
    assert "0 (Linear)" in svg and "2 (Linear)" in svg and "gradient norm per layer (step 1)" in svg


def test_static_picture_is_deterministic():
    def run():
        dash = TrainingDashboard(epochs=1, steps_per_epoch=3, mode="text", stream=io.StringIO(),
                                 clock=lambda: 0.0)
        for loss in (1.0, 0.5, 0.25):
            dash.step(loss=loss, accuracy=0.5)
        dash.epoch_end(val_loss=0.4)
        return dash.static_svg()
    first = run()
    assert first.startswith("<svg") and first == run()
    ET.fromstring(first)                                     # well-formed XML, on its own


def test_auto_mode_is_text_outside_a_kernel_and_a_widget_inside(monkeypatch):
    assert in_notebook() is False                       # pytest is no Jupyter kernel
    assert TrainingDashboard(stream=io.StringIO()).mode == "text"
    import IPython
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=object()))
    assert in_notebook() is True
    shown = []

    class Handle:
        def update(self, bundle, raw=False):
            assert raw
            shown.append(("update", bundle))

    def fake_display(bundle, raw=False, display_id=False):
        assert raw and display_id
        shown.append(("display", bundle))
        return Handle()

    import IPython.display
    monkeypatch.setattr(IPython.display, "display", fake_display)
    dash = TrainingDashboard(epochs=1, steps_per_epoch=2, clock=lambda: 0.0)
    assert dash.mode == "widget"
    assert shown[0][0] == "display" and "application/vnd.jupyter.widget-view+json" in shown[0][1]
    dash.step(loss=0.5)
    dash.close()
    # closing re-sends the output, so its static picture shows the finished curves
    assert shown[1][0] == "update" and shown[1][1]["text/plain"] == repr(dash)
    assert shown[1][1]["image/svg+xml"] != shown[0][1]["image/svg+xml"]


def test_curves_catch_up_when_a_notebook_cell_ends(monkeypatch):
    import IPython
    callbacks = {}
    events = types.SimpleNamespace(register=lambda name, f: callbacks.setdefault(name, f),
                                   unregister=lambda name, f: callbacks.pop(name))
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=object(), events=events))
    now = [0.0]
    dash = TrainingDashboard(epochs=1, steps_per_epoch=4, display=False, clock=lambda: now[0])
    image = dash.view().children[1]
    now[0] = 1.0
    dash.step(loss=1.0)                     # redraws: a second since the start
    shown = image.value
    for loss in (0.5, 0.25):
        dash.step(loss=loss)                # too soon after: throttled away
    assert image.value == shown and dash.plot_redraws == 1
    callbacks["post_run_cell"](None)        # the cell that trained has finished
    assert dash.plot_redraws == 2 and image.value != shown
    assert "3/4" in dash.view().children[0].children[1].value
    callbacks["post_run_cell"](None)        # nothing new logged: nothing to draw
    assert dash.plot_redraws == 2
    dash.close()
    assert callbacks == {}                  # a closed dashboard stops listening


def test_a_cell_that_makes_a_dashboard_and_ends_with_it_shows_one(monkeypatch):
    import IPython
    import IPython.display
    shell = types.SimpleNamespace(kernel=object(), execution_count=7)
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    shown = []

    def fake_display(bundle, raw=False, display_id=False):
        shown.append(bundle)
        return types.SimpleNamespace(update=lambda *args, **kwargs: None)

    monkeypatch.setattr(IPython.display, "display", fake_display)
    dash = TrainingDashboard(epochs=1, steps_per_epoch=2, clock=lambda: 0.0)   # shows itself
    dash._ipython_display_()            # the cell ends with `dash`: already on screen
    assert len(shown) == 1
    shell.execution_count = 8           # a later cell shows it again
    dash._ipython_display_()
    assert len(shown) == 2 and "application/vnd.jupyter.widget-view+json" in shown[1]
    quiet = TrainingDashboard(epochs=1, steps_per_epoch=2, display=False, clock=lambda: 0.0)
    quiet._ipython_display_()           # never shown by itself: the cell's last line shows it
    assert len(shown) == 3


def test_the_progress_line_of_the_view_never_breaks():
    dash = _widget_dashboard([1.0])
    for _ in range(3):
        dash.step(loss=0.5, accuracy=0.9, batch_size=8)
    progress, status = dash.view().children[0], dash.view().children[0].children[1]
    assert status.value.startswith("<code style='white-space:nowrap'>")
    assert "[#" not in status.value and "step 3/5" in status.value   # the widget has a bar of its own
    assert progress.layout.flex_flow == "row wrap"   # narrow: the whole line moves under the bar
