"""The BackpropStepper's controls, driven headless: buttons, slider and Play move the state
object, and the picture and the panel follow; bad input gets a clear error."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F

from widgets import BackpropStepper
from widgets._base import WIDGET_VIEW_MIME
from widgets._stepper_view import StepperView


def affine():
    x = learntorch.ones(4, 3)
    w = learntorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = learntorch.tensor([0.5], requires_grad=True)
    return (x * w + b).sum(), {"w": w, "b": b}


@pytest.fixture
def view():
    loss, params = affine()
    return StepperView(BackpropStepper(loss, params=params))


def test_the_view_starts_before_backward(view):
    assert view.slider.value == 0 and view.slider.max == view.stepper.n_steps == 5
    assert view.play.max == 5
    assert view.previous_button.disabled and not view.next_button.disabled
    assert "Step 0 of 5: nothing has run yet" in view.panel.value
    assert "<svg" in view.picture.value


def test_next_runs_one_node_and_redraws(view):
    before_picture, before_panel = view.picture.value, view.panel.value
    view.next_button.click()
    assert view.stepper.position == 1 and view.slider.value == 1
    assert "Step 1 of 5: SumBackward0 (node 0)" in view.panel.value
    assert view.picture.value != before_picture and view.panel.value != before_panel
    # the node that just ran is the highlighted one in the picture
    assert 'n0 [label="Sum"' in view.stepper.dot_source()
    assert 'fillcolor="gold"' in next(line for line in view.stepper.dot_source().splitlines()
                                      if line.strip().startswith("n0 ["))


def test_slider_shows_step_k_running_the_engine_as_needed(view):
    view.slider.value = 4
    assert view.stepper.position == 4 and len(view.stepper.history) == 4
    assert "Step 4 of 5: MulBackward0 (node 3)" in view.panel.value
    assert "summed over dims (0,) to match input shape (3,)" in view.panel.value
    view.slider.value = 2  # back: recorded, nothing runs
    assert len(view.stepper.history) == 4
    assert "Step 2 of 5: AddBackward0" in view.panel.value
    assert "summed over dims (0, 1) to match input shape (1,)" in view.panel.value


def test_play_moves_the_slider_and_the_stepper(view):
    view.play.value = 3
    assert view.slider.value == 3 and view.stepper.position == 3
    assert "b.grad was None, so b.grad = g: b.grad = [12.]" in view.panel.value


def test_previous_shows_the_recorded_step_before(view):
    view.slider.value = 5
    view.previous_button.click()
    assert view.slider.value == 4 and view.stepper.position == 4
    assert "w (3,): .grad = None" in view.panel.value   # as it was at step 4
    assert view.stepper.leaves[1].grad is None   # the leaf too: it follows the step shown
    view.next_button.click()
    assert view.stepper.leaves[1].grad.tolist() == [4.0, 4.0, 4.0]  # replayed, not run again


def test_next_until_the_end_then_next_is_disabled_and_grads_are_backward_s(view):
    for _ in range(5):
        view.next_button.click()
    assert view.next_button.disabled and view.stepper.finished
    loss, params = affine()
    loss.backward()
    for leaf, label in zip(view.stepper.leaves, view.stepper.leaf_labels):
        np.testing.assert_array_equal(leaf.grad.numpy(), params[label].grad.numpy())
    assert "w (3,): .grad = [4., 4., 4.]" in view.panel.value
    assert 'v4 [label="w\\n(3,) | data [1, 2, 3] | grad [4., 4., 4.]"' in \
        view.stepper.dot_source()


def test_reset_button_restores_grads_and_the_slider(view):
    view.slider.value = 5
    view.play.playing = True
    view.reset_button.click()
    assert not view.play.playing and view.play.value == 0
    assert view.slider.value == 0 and view.stepper.position == 0
    assert all(leaf.grad is None for leaf in view.stepper.leaves)
    assert "Step 0 of 5" in view.panel.value
    view.next_button.click()
    assert "Step 1 of 5: SumBackward0" in view.panel.value


def test_each_position_has_its_own_picture_drawn_once(view):
    pictures = []
    for k in range(6):
        view.slider.value = k
        pictures.append(view.picture.value)
    assert len(set(pictures)) == 6
    view.slider.value = 2
    assert view.picture.value == pictures[2]


def test_an_error_from_the_engine_is_shown_in_the_panel():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).exp().sum()
    loss.backward()  # frees what ExpBackward0 saved
    view = StepperView(BackpropStepper(loss, params={"x": x}))
    view.next_button.click()  # SumBackward0 saved nothing: it runs
    view.next_button.click()
    assert view.stepper.position == 1 and view.slider.value == 1
    assert "RuntimeError: Trying to backward through the graph a second time" in view.panel.value


def test_mimebundle_has_the_text_the_picture_and_the_live_view():
    loss, params = affine()
    stepper = BackpropStepper(loss, params=params)
    stepper.go_to(2)
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"] == "BackpropStepper(step 2 of 5: AddBackward0)"
    assert bundle["image/svg+xml"].startswith("<svg")
    assert WIDGET_VIEW_MIME in bundle
    assert stepper.view() is stepper.view()  # built once


def test_a_model_s_parameters_name_the_leaves_in_the_picture():
    learntorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    loss = F.mse_loss(model(learntorch.randn(4, 3)), learntorch.zeros(4, 1))
    stepper = BackpropStepper(loss, params=dict(model.named_parameters()))
    assert sorted(stepper.leaf_labels) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    dot = stepper.dot_source()
    for label in stepper.leaf_labels:
        # the record's first cell; laid out left to right the cells are wrapped in { }
        assert f'label="{label}\\n' in dot or f'label="{{{label}\\n' in dot


def test_bad_input_gets_torch_s_exception_types_and_a_fix():
    with pytest.raises(TypeError, match="needs a learntorch Tensor, got list"):
        BackpropStepper([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        BackpropStepper(learntorch.ones(3).sum())
    x = learntorch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"only for scalar outputs; this output has shape \[3\]"):
        BackpropStepper(x * 2)
    with pytest.raises(TypeError, match="dict\\(model.named_parameters\\(\\)\\)"):
        BackpropStepper((x * 2).sum(), params=nn.Linear(3, 1))
    with pytest.raises(TypeError, match="got int"):
        BackpropStepper((x * 2).sum(), params=3)


def test_the_slider_shrinks_when_backward_takes_fewer_steps_than_nodes():
    class BlockGradient(learntorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    view = StepperView(BackpropStepper((BlockGradient.apply(x * 2) + x).sum(), params={"x": x}))
    assert view.slider.max == 5
    view.slider.value = 5
    assert view.slider.max == view.play.max == 4 and view.slider.value == 4
    assert "Step 4 of 4: AccumulateGrad" in view.panel.value
    assert view.next_button.disabled
