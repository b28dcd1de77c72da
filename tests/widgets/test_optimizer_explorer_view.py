"""The explorer's controls drive its state, and its pictures show that state.

Driven headless: controls are set with ``.value = ...`` / ``.click()`` as a
browser would, then the state, the plotted line data and the images are checked.
"""
import re

import numpy as np
import pytest

from widgets.optimizer_explorer import OPTIMIZERS, OptimizerExplorer

ipywidgets = pytest.importorskip("ipywidgets", reason="the live view needs ipywidgets 8")


@pytest.fixture
def explorer():
    explorer = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Adam"])
    explorer.view()
    return explorer


def plotted_paths(explorer):
    return {name: line.get_xydata() for name, line in explorer.contour_plot.lines.items()}


def test_step_and_reset_buttons(explorer):
    c = explorer.controls
    first_contours, first_paths = c.contour_image.value, c.contour_paths.value
    c.step.click()
    c.step.click()
    assert explorer.step_count == 2 and c.play.value == 2 and c.scrub.value == 2
    assert "step 2" in c.status.value
    assert c.contour_paths.value != first_paths  # the paths moved...
    assert c.contour_image.value == first_contours  # ...over the same contours: nothing resent
    c.reset.click()
    assert explorer.step_count == 0 and c.play.value == 0
    assert all(len(path) == 1 for path in explorer.trajectories.values())


def test_play_frames_and_the_step_slider_move_the_runs(explorer):
    c = explorer.controls
    loss_lines = c.loss_lines.value
    c.play.value = 15  # a Play frame
    assert explorer.step_count == 15 and c.scrub.value == 15
    assert c.loss_lines.value != loss_lines
    c.scrub.value = 5  # scrubbing back replays from the start
    assert explorer.step_count == 5 and c.play.value == 5
    assert all(len(path) == 6 for path in explorer.trajectories.values())


def test_line_data_is_the_trajectories(explorer):
    explorer.controls.play.value = 20
    paths = plotted_paths(explorer)
    assert list(paths) == ["SGD", "Adam"]
    for name, path in explorer.trajectories.items():
        np.testing.assert_array_equal(paths[name], path)
        np.testing.assert_array_equal(explorer.contour_plot.heads[name].get_xydata(), path[-1:])
        x, y = explorer.loss_plot.lines[name].get_data()
        np.testing.assert_array_equal(x, np.arange(21))
        np.testing.assert_array_equal(y, explorer.losses[name])  # loss - min, min being 0


def test_contours_are_computed_once_and_steps_only_redraw_the_paths():
    grid_calls = []

    def counted(p):
        if p.dim() == 3:  # a (2, rows, cols) grid: the contour background
            grid_calls.append(p.shape)
        return (p[0] - 1) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2

    explorer = OptimizerExplorer(counted, optimizers=["SGD", "Adam"])
    explorer.view()
    grid = explorer.contour_grid()
    for _ in range(5):
        explorer.controls.step.click()
    explorer.controls.play.value = 30
    explorer.static_svg()
    assert len(grid_calls) == 1
    assert explorer.contour_grid() is grid
    assert explorer.contour_plot.full_draws == 1  # contours rendered once, paths blitted on top


def test_lr_slider_sets_the_hyperparameter_and_replays(explorer):
    c = explorer.controls
    c.play.value = 10
    before = explorer.trajectories["Adam"]
    c.lr["Adam"].value = 0.02
    assert explorer.hyper("Adam")["lr"] == 0.02
    assert explorer.step_count == 10
    assert not np.array_equal(explorer.trajectories["Adam"], before)
    np.testing.assert_array_equal(plotted_paths(explorer)["Adam"], explorer.trajectories["Adam"])


def test_momentum_and_beta_sliders(explorer):
    c = explorer.controls
    assert set(c.knob) == {"Momentum", "Nesterov", "RMSprop", "Adam", "AdamW"}
    assert c.knob["Adam"].description == "beta1" and c.knob["RMSprop"].description == "alpha"
    c.knob["Adam"].value = 0.5
    assert explorer.hyper("Adam")["betas"] == (0.5, 0.999)
    c.knob["Momentum"].value = 0.7
    assert explorer.hyper("Momentum")["momentum"] == 0.7
    c.knob["RMSprop"].value = 0.9
    assert explorer.hyper("RMSprop")["alpha"] == 0.9


def test_checkboxes_select_optimizers(explorer):
    c = explorer.controls
    c.play.value = 4
    c.selected["Nesterov"].value = True
    assert explorer.selected == ("SGD", "Nesterov", "Adam")
    assert len(explorer.trajectories["Nesterov"]) == 5
    assert "Nesterov" in explorer.contour_plot.lines
    c.selected["SGD"].value = False
    assert "SGD" not in explorer.trajectories and "SGD" not in explorer.contour_plot.lines
    assert explorer.contour_plot.legend_labels == ("Nesterov", "Adam")


def test_surface_dropdown_and_condition_number_slider(explorer):
    c = explorer.controls
    assert c.condition_number.layout.display == "none"  # only the quadratic has one
    c.play.value = 3
    c.surface.value = "quadratic"
    assert explorer.surface.label == "quadratic(condition_number=10)"
    assert c.condition_number.layout.display is None
    assert c.lr["SGD"].value == pytest.approx(explorer.surface.learning_rates["SGD"])
    c.condition_number.value = 100.0
    assert explorer.surface.options["condition_number"] == 100.0
    assert explorer.step_count == 3
    assert explorer.contour_plot.surface_key == explorer.surface.key
    c.surface.value = "himmelblau"
    assert explorer.surface.name == "himmelblau"
    np.testing.assert_array_equal(plotted_paths(explorer)["SGD"][0], np.float32([-0.3, -0.9]))


def test_your_own_function_stays_in_the_dropdown():
    explorer = OptimizerExplorer(lambda p: p[0] ** 2 + 3 * p[1] ** 2, optimizers=["SGD"])
    explorer.view()
    c = explorer.controls
    assert c.surface.options[-1] == "custom" and c.surface.value == "custom"
    c.surface.value = "beale"
    c.surface.value = "custom"
    assert explorer.surface.name == "custom"
    assert explorer.losses["SGD"][0] == pytest.approx(1.5 ** 2 + 3 * 1.5 ** 2)


def test_divergence_shows_in_the_legend_and_status():
    explorer = OptimizerExplorer("quadratic", optimizers=["SGD"], condition_number=10)
    explorer.view()
    explorer.controls.lr["SGD"].value = 0.5
    explorer.controls.play.value = 150
    run = explorer.runs["SGD"]
    assert run.diverged_at is not None
    assert explorer.contour_plot.legend_labels == (f"SGD (diverged at step {run.diverged_at})",)
    assert "diverged: SGD" in explorer.controls.status.value
    # the loss axis stops at 10^4 x the starting loss (x2 margin): the others stay readable
    assert explorer.loss_plot.ax.get_ylim()[1] <= 2e4 * explorer.losses["SGD"][0]


def images_in(widget):
    """Every ipywidgets Image inside ``widget`` (what the page will show as <img>)."""
    import ipywidgets
    if isinstance(widget, ipywidgets.Image):
        return [widget]
    return [image for child in getattr(widget, "children", ()) for image in images_in(child)]


def test_phase_button_draws_the_diagram_for_the_quadratic(explorer):
    c = explorer.controls
    view = explorer.view()
    assert c.phase_image not in images_in(view)   # nothing drawn yet: no empty image in the page
    c.phase_button.click()  # not the quadratic: says what to do, draws nothing
    assert c.phase_image not in images_in(view) and "quadratic" in c.phase_button.description
    c.surface.value = "quadratic"
    c.phase_button.click()
    assert bytes(c.phase_image.value).startswith(b"\x89PNG") and c.phase_image in images_in(view)


def test_no_image_in_the_view_is_ever_empty(explorer):
    # an <img> without bytes is a failed load to the browser, shown or not
    c = explorer.controls
    for action in (lambda: None, c.step.click, c.phase_button.click):
        action()
        assert all(len(image.value) > 0 for image in images_in(explorer.view()))


def test_static_svg_and_mimebundle(explorer):
    explorer.controls.play.value = 12
    svg = explorer.static_svg()
    assert svg == explorer.static_svg()  # deterministic
    assert svg.startswith("<?xml") and "loss per step" in svg and "rosenbrock" in svg
    assert re.search(r">\s*SGD\s*<", svg) and re.search(r">\s*Adam\s*<", svg)
    bundle = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == repr(explorer)
    assert bundle["image/svg+xml"] == svg
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_every_control_has_a_description_or_tooltip(explorer):
    c = explorer.controls
    controls = [c.surface, c.condition_number, c.play, c.scrub, c.step, c.reset,
                c.phase_button, *c.selected.values(), *c.lr.values(), *c.knob.values()]
    for control in controls:
        assert control.description, control
        assert control.tooltip, control
    assert len(c.selected) == len(OPTIMIZERS)


def test_a_refused_value_is_explained_and_the_control_set_back(explorer):
    c = explorer.controls
    c.selected["Nesterov"].value = True
    c.knob["Nesterov"].value = 0.0  # torch's rule: Nesterov needs a momentum
    assert "Nesterov momentum requires a momentum" in c.status.value
    assert explorer.hyper("Nesterov")["momentum"] == 0.9 and c.knob["Nesterov"].value == 0.9
    c.step.click()  # the next action clears the message
    assert "requires" not in c.status.value


def test_a_surface_undefined_in_part_of_its_window_is_drawn_where_it_is_defined():
    import warnings

    explorer = OptimizerExplorer(lambda p: (p[0] + 1).sqrt() + p[1] ** 2, optimizers=["SGD"],
                                 start=(1.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explorer.view()
        svg = explorer.static_svg()
    values = explorer.contour_grid().values
    assert np.isnan(values).any() and np.isfinite(values).any()
    assert "<path" in svg


def test_play_redraws_the_loss_axes_only_when_their_limits_move(explorer):
    # the axes are most of a render: while the limits hold, a frame draws only the lines
    c, plot = explorer.controls, explorer.loss_plot
    overlays, backgrounds, limits = [], set(), set()
    for frame in range(1, 61):
        c.play.value = frame
        (x_low, x_high), (y_low, y_high) = plot.ax.get_xlim(), plot.ax.get_ylim()
        limits.add((x_high, y_low, y_high))
        assert x_low == 0 and frame <= x_high < max(2 * frame, 11)   # room for every step
        for name, losses in explorer.losses.items():          # every loss in view (min is 0)
            assert y_low <= losses.min() and losses.max() <= y_high
        overlays.append(c.loss_lines.value)
        backgrounds.add(bytes(c.loss_image.value))
    assert plot.full_draws == len(limits) == len(backgrounds) < 20   # not once per frame (60)
    assert len(set(overlays)) == len(overlays)                 # yet every frame shows new lines


def svg_points(svg, element):
    """The points of each ``polyline`` (or the centre of each ``circle``) in an overlay."""
    if element == "polyline":
        return [np.array([p.split(",") for p in points.split()], dtype=float)
                for points in re.findall(r'<polyline points="([^"]*)"', svg)]
    return np.array(re.findall(r'<circle cx="([^"]*)" cy="([^"]*)"', svg), dtype=float)


def test_the_overlays_draw_the_runs_where_the_background_has_their_axes(explorer):
    # the lines are SVG over the PNG background: each point must sit at the pixel where
    # matplotlib would draw it in that PNG (its transData, with y counted from the top)
    c = explorer.controls
    c.play.value = 25
    for plot, overlay, data in ((explorer.contour_plot, c.contour_paths.value, explorer.trajectories),
                                (explorer.loss_plot, c.loss_lines.value,
                                 {n: np.column_stack([np.arange(26), losses])
                                  for n, losses in explorer.losses.items()})):
        width, height = plot.figure.canvas.get_width_height()
        assert f'width="{width}" height="{height}"' in overlay   # as large as the PNG
        png = bytes(plot.png())
        assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (width, height)
        lines = svg_points(overlay, "polyline")
        assert len(lines) == len(data)
        for drawn, xy in zip(lines, data.values()):
            expected = plot.ax.transData.transform(xy)
            expected[:, 1] = height - expected[:, 1]
            np.testing.assert_allclose(drawn, expected, atol=0.051)   # written to 0.1 px
    heads = svg_points(c.contour_paths.value, "circle")
    expected = explorer.contour_plot.ax.transData.transform(
        np.array([path[-1] for path in explorer.trajectories.values()]))
    np.testing.assert_allclose(heads[:, 0], expected[:, 0], atol=0.051)
