"""The explorer's runs are the real optimizers: the same numbers as writing the loop yourself.

Oracles: the training loop written out by hand with ``learntorch.optim``
(bitwise equal), and ``torch.optim`` on the same formula (close).
"""
import warnings

import numpy as np
import pytest

import learntorch
from oracle import require_torch
from widgets.optimizer_explorer import OPTIMIZERS, OptimizerExplorer
from widgets._surfaces import make_surface


def hand_written_run(surface, name, hyper, steps):
    """The loop a learner writes, recording p after every step."""
    choice = OPTIMIZERS[name]
    p = learntorch.tensor(surface.start, requires_grad=True)
    optimizer = choice.optimizer_class([p], **hyper)
    path = [p.detach().numpy().copy()]
    for _ in range(steps):
        optimizer.zero_grad()
        loss = surface(p)
        loss.backward()
        optimizer.step()
        path.append(p.detach().numpy().copy())
    return np.array(path, dtype=np.float64)


@pytest.mark.parametrize("surface_name", ["rosenbrock", "himmelblau", "quadratic"])
def test_every_trajectory_is_bitwise_the_hand_written_loop(surface_name):
    explorer = OptimizerExplorer(surface_name, optimizers=list(OPTIMIZERS))
    explorer.step(25)
    for name in OPTIMIZERS:
        expected = hand_written_run(explorer.surface, name, explorer.hyper(name), 25)
        np.testing.assert_array_equal(explorer.trajectories[name], expected, err_msg=name)
        # the losses are the surface at those points
        p = learntorch.tensor(expected[-1].astype(np.float32))
        assert explorer.losses[name][-1] == explorer.surface(p).item()


def test_parameters_are_float32_leaves_like_a_learners():
    explorer = OptimizerExplorer("saddle", optimizers=["Adam"])
    run = explorer.runs["Adam"]
    assert run.point.dtype == learntorch.float32 and run.point.is_leaf
    assert type(run.optimizer) is learntorch.optim.Adam
    assert run.optimizer.param_groups[0]["params"][0] is run.point


@pytest.mark.parametrize("name, torch_class, options", [
    ("Adam", "Adam", {"lr": 0.05, "betas": (0.9, 0.999)}),
    ("Momentum", "SGD", {"lr": 5e-4, "momentum": 0.9}),
    ("Nesterov", "SGD", {"lr": 5e-4, "momentum": 0.9, "nesterov": True}),
])
def test_runs_agree_with_torch_optim_on_the_same_surface(name, torch_class, options):
    torch = require_torch()
    explorer = OptimizerExplorer("rosenbrock", optimizers=[name], hyper={name: options})
    explorer.step(60)
    surface = explorer.surface
    p = torch.tensor(surface.start, requires_grad=True)  # float32, as in the explorer
    optimizer = getattr(torch.optim, torch_class)([p], **options)
    path = [p.detach().numpy().copy()]
    for _ in range(60):
        optimizer.zero_grad()
        surface(p).backward()
        optimizer.step()
        path.append(p.detach().numpy().copy())
    np.testing.assert_allclose(explorer.trajectories[name], np.array(path), rtol=2e-5,
                               atol=2e-5)


def test_set_hyper_replays_that_run_with_the_new_values_and_keeps_the_others():
    explorer = OptimizerExplorer("beale", optimizers=["SGD", "Adam"])
    explorer.step(15)
    sgd_before = explorer.trajectories["SGD"]
    explorer.set_hyper("Adam", lr=0.02, betas=(0.8, 0.99))
    assert explorer.hyper("Adam") == {"lr": 0.02, "betas": (0.8, 0.99)}
    expected = hand_written_run(explorer.surface, "Adam", {"lr": 0.02, "betas": (0.8, 0.99)}, 15)
    np.testing.assert_array_equal(explorer.trajectories["Adam"], expected)
    np.testing.assert_array_equal(explorer.trajectories["SGD"], sgd_before)
    assert explorer.step_count == 15


def test_bad_hyperparameters_raise_and_change_nothing():
    explorer = OptimizerExplorer("rosenbrock", optimizers=["SGD"])
    explorer.step(3)
    before = explorer.trajectories["SGD"]
    with pytest.raises(ValueError, match="Invalid learning rate"):
        explorer.set_hyper("SGD", lr=-1.0)
    with pytest.raises(TypeError, match="Adam .*has no hyperparameter 'momentum': choose from "
                                        "lr, betas"):
        explorer.set_hyper("Adam", momentum=0.9)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        explorer.set_hyper("Adam", lr=-1.0)  # checked even while Adam is not shown
    with pytest.raises(ValueError, match="unknown optimizer 'Adamax': choose from SGD, "
                                         "Momentum"):
        explorer.set_hyper("Adamax", lr=0.1)
    assert explorer.hyper("SGD")["lr"] == 1e-3 and explorer.hyper("Adam")["lr"] == 0.1
    np.testing.assert_array_equal(explorer.trajectories["SGD"], before)


def test_selecting_an_optimizer_catches_it_up_and_hiding_removes_it():
    explorer = OptimizerExplorer("himmelblau", optimizers=["SGD"])
    explorer.step(12)
    explorer.select("RMSprop")
    assert explorer.selected == ("SGD", "RMSprop")
    expected = hand_written_run(explorer.surface, "RMSprop", explorer.hyper("RMSprop"), 12)
    np.testing.assert_array_equal(explorer.trajectories["RMSprop"], expected)
    explorer.select("SGD", False)
    assert list(explorer.trajectories) == ["RMSprop"]
    assert repr(explorer) == ("OptimizerExplorer(surface='himmelblau', step 12, runs: RMSprop "
                              f"{explorer.losses['RMSprop'][-1]:.2e})")


def test_step_reset_and_goto():
    explorer = OptimizerExplorer("saddle", optimizers=["SGD", "Nesterov"])
    explorer.step(30)
    at_30 = explorer.trajectories
    explorer.goto(10)  # going back replays from the start
    assert explorer.step_count == 10
    for name, path in explorer.trajectories.items():
        np.testing.assert_array_equal(path, at_30[name][:11])
    explorer.goto(30)
    for name, path in explorer.trajectories.items():
        np.testing.assert_array_equal(path, at_30[name])
    explorer.reset()
    assert explorer.step_count == 0
    for path in explorer.trajectories.values():
        np.testing.assert_array_equal(path, [[np.float32(-1.8), np.float32(0.001)]])
    with pytest.raises(ValueError, match="step must be >= 0"):
        explorer.goto(-1)


def test_a_diverging_run_stops_is_marked_and_warns_nothing():
    explorer = OptimizerExplorer("quadratic", optimizers=["SGD", "Adam"], condition_number=10,
                                 hyper={"SGD": {"lr": 0.5}})  # lr * kappa = 5 > 2: diverges
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any numpy overflow warning would fail the test
        explorer.step(200)
        svg = explorer.static_svg()
    run = explorer.runs["SGD"]
    assert run.diverged_at is not None and run.diverged_at < 200
    path = explorer.trajectories["SGD"]
    assert len(path) == run.diverged_at  # steps 0 .. diverged_at - 1 were finite
    assert np.isfinite(path).all() and np.isfinite(explorer.losses["SGD"]).all()
    # the legend and the repr say so; the healthy run went on
    assert f"SGD (diverged at step {run.diverged_at})" in svg
    assert f"SGD diverged at step {run.diverged_at}" in repr(explorer)
    assert explorer.runs["Adam"].diverged_at is None and len(explorer.trajectories["Adam"]) == 201
    # stepping further changes nothing for the stopped run
    explorer.step(5)
    np.testing.assert_array_equal(explorer.trajectories["SGD"], path)


def test_repr_is_deterministic_and_names_surface_step_and_losses():
    first = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Adam"])
    second = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Adam"])
    first.step(10)
    second.step(10)
    assert repr(first) == repr(second) == \
        "OptimizerExplorer(surface='rosenbrock', step 10, runs: SGD 5.91e+00, Adam 7.09e+00)"
    quad = OptimizerExplorer("quadratic", optimizers=[], condition_number=4)
    assert repr(quad) == \
        "OptimizerExplorer(surface='quadratic(condition_number=4)', step 0, runs: none)"


def test_your_own_function_is_descended_by_the_real_optimizers():
    def valley(p):
        return (p[0] - 1) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2

    explorer = OptimizerExplorer(valley, optimizers=["Adam"], start=(-1.0, 1.5))
    explorer.step(8)
    surface = make_surface(valley, start=(-1.0, 1.5))
    np.testing.assert_array_equal(explorer.trajectories["Adam"],
                                  hand_written_run(surface, "Adam", explorer.hyper("Adam"), 8))
    assert repr(explorer).startswith("OptimizerExplorer(surface='valley', step 8")


def test_a_function_that_does_not_return_a_scalar_is_explained():
    with pytest.raises(RuntimeError, match=r"must return a scalar tensor.*returned \(2,\).*"
                                           r"\.sum\(\)"):
        OptimizerExplorer(lambda p: p * p, optimizers=["SGD"])


def test_surface_and_condition_number_changes_replay_to_the_current_step():
    explorer = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Momentum"])
    explorer.set_hyper("Momentum", momentum=0.5)
    explorer.step(7)
    explorer.set_surface("quadratic", condition_number=4)
    assert explorer.surface.label == "quadratic(condition_number=4)"
    # learning rates take the new surface's defaults, other hyperparameters stay
    assert explorer.hyper("Momentum") == {"momentum": 0.5, "lr": explorer.surface.learning_rates[
        "Momentum"]}
    assert explorer.step_count == 7
    np.testing.assert_array_equal(
        explorer.trajectories["Momentum"],
        hand_written_run(explorer.surface, "Momentum", explorer.hyper("Momentum"), 7))
    explorer.set_condition_number(50)
    assert explorer.surface.options == {"condition_number": 50.0}
    np.testing.assert_array_equal(
        explorer.trajectories["SGD"],
        hand_written_run(explorer.surface, "SGD", explorer.hyper("SGD"), 7))
    explorer.set_surface("beale")
    with pytest.raises(ValueError, match="condition_number only applies to the 'quadratic'"):
        explorer.set_condition_number(3)


def test_a_surface_that_fails_changes_nothing():
    explorer = OptimizerExplorer("saddle", optimizers=["SGD"])
    explorer.step(4)
    before = (repr(explorer), explorer.trajectories["SGD"], explorer.hyper("SGD"))
    with pytest.raises(RuntimeError, match="must return a scalar tensor"):
        explorer.set_surface(lambda p: p[0] * p)
    assert (repr(explorer), explorer.hyper("SGD")) == (before[0], before[2])
    np.testing.assert_array_equal(explorer.trajectories["SGD"], before[1])
