"""Scheduler bookkeeping against torch: state_dict contents, save/load round trips, errors.

A checkpoint must let training resume exactly: a scheduler rebuilt from a
saved ``state_dict()`` (through ``learntorch.save``/``load``, which never runs
code) continues with the very same learning rates as one that never stopped.
"""
import numpy as np
import pytest

import learntorch
from oracle import require_torch


def optimizer(lib, kind="SGD"):
    a = lib.nn.Parameter(lib.zeros(2))
    b = lib.nn.Parameter(lib.zeros(3))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.3}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return getattr(lib.optim, kind)(groups, lr=0.1)


class WarmUp:
    """A callable object: LambdaLR saves its ``__dict__`` (a plain function is not saved)."""

    def __init__(self, epochs):
        self.epochs = epochs

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.epochs)


MAKERS = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 6, 6], gamma=0.5),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
    "LambdaLR": lambda s, o: s.LambdaLR(o, [WarmUp(4), lambda e: 0.5 ** e]),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=20, three_phase=True),
    "ReduceLROnPlateau": lambda s, o: s.ReduceLROnPlateau(o, patience=1, cooldown=1),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, [WarmUp(3), lambda e: 0.9]),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=3),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.2, total_iters=4),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=10, power=0.5),
    "CyclicLR": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2"),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, 3, T_mult=2),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, 0.1, total_iters=3), s.CosineAnnealingLR(o, T_max=6)], milestones=[3]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.5, total_iters=2),
                                                         s.ExponentialLR(o, 0.9)]),
}
METRICS = [3.0, 2.0, 2.5, 2.5, 2.5, 1.0, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 0.5, 0.7, 0.7, 0.7]


def advance(opt, sched, epochs, start=0):
    lrs = []
    for epoch in range(start, start + epochs):
        opt.step()
        if isinstance(sched, learntorch.optim.lr_scheduler.ReduceLROnPlateau):
            sched.step(METRICS[epoch])
        else:
            sched.step()
        lrs.append(sched.get_last_lr())
    return lrs


def plain(value):
    """A state_dict value in a form both libraries' values compare equal in."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@pytest.mark.parametrize("name", MAKERS)
def test_state_dict_holds_what_torchs_holds(name):
    torch = require_torch()
    dicts = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = MAKERS[name](lib.optim.lr_scheduler, opt)
        if name == "ReduceLROnPlateau":
            for metric in METRICS[:5]:
                sched.step(metric)
        else:
            advance(opt, sched, 5)
        dicts.append(sched.state_dict())
    mine, theirs = dicts
    assert set(mine) == set(theirs)
    assert plain(mine) == plain(theirs)


@pytest.mark.parametrize("name", MAKERS)
def test_a_scheduler_loaded_from_a_checkpoint_continues_the_same_schedule(name, tmp_path):
    s = learntorch.optim.lr_scheduler
    opt = optimizer(learntorch)
    sched = MAKERS[name](s, opt)
    advance(opt, sched, 6)
    learntorch.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()},
                    tmp_path / "checkpoint.pt")
    expected = advance(opt, sched, 8, start=6)

    checkpoint = learntorch.load(tmp_path / "checkpoint.pt")
    new_opt = optimizer(learntorch)
    new_sched = MAKERS[name](s, new_opt)  # build the scheduler first, then load both (torch's
    new_opt.load_state_dict(checkpoint["optimizer"])  # documented order)
    new_sched.load_state_dict(checkpoint["scheduler"])
    assert advance(new_opt, new_sched, 8, start=6) == expected


def test_lambda_lr_saves_callable_objects_but_not_functions():
    torch = require_torch()
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        state = MAKERS["LambdaLR"](lib.optim.lr_scheduler, opt).state_dict()
        assert state["lr_lambdas"] == [{"epochs": 4}, None]


def test_schedulers_record_initial_lr_and_base_lrs_like_torch():
    torch = require_torch()
    seen = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        seen.append((sched.base_lrs, [g["initial_lr"] for g in opt.param_groups],
                     sched.last_epoch, sched.get_last_lr()))
    assert seen[0] == seen[1] == ([0.1, 0.3], [0.1, 0.3], 0, [0.1, 0.3])


def test_a_tensor_learning_rate_is_updated_in_place():
    torch = require_torch()
    seen = []
    for lib in (learntorch, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        lr = lib.tensor(0.5, dtype=lib.float64)
        opt = lib.optim.SGD([p], lr=lr)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        last = sched.get_last_lr()[0]
        assert last is not lr  # a copy, never an alias
        seen.append((lr.item(), last.item()))
    assert seen[0] == seen[1] == (0.25, 0.25)


# ---------------------------------------------------------------- errors, as torch's
def error_of(build):
    try:
        build()
    except Exception as e:  # noqa: BLE001 -- comparing what is raised
        return type(e), str(e)
    return None, None


ERRORS = {
    "not an optimizer": lambda s, o: s.StepLR("sgd", 3),
    "plateau not an optimizer": lambda s, o: s.ReduceLROnPlateau([1]),
    "resume without initial_lr": lambda s, o: s.StepLR(o, 3, last_epoch=4),
    "lambdas per group": lambda s, o: s.LambdaLR(o, [lambda e: 1.0]),
    "one cycle without length": lambda s, o: s.OneCycleLR(o, max_lr=0.1),
    "one cycle bad total": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "one cycle bad epochs": lambda s, o: s.OneCycleLR(o, 0.1, epochs=2.5, steps_per_epoch=3),
    "one cycle bad steps": lambda s, o: s.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=-1),
    "one cycle pct_start": lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10, pct_start=1.5),
    "one cycle int pct_start": lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10, pct_start=0),
    "one cycle strategy": lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10,
                                                    anneal_strategy="exp"),
    "one cycle max_lr list": lambda s, o: s.OneCycleLR(o, [0.1], total_steps=10),
    "plateau factor": lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    "plateau mode": lambda s, o: s.ReduceLROnPlateau(o, mode="lowest"),
    "plateau threshold mode": lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="pct"),
    "plateau min_lr list": lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]),
    "constant factor": lambda s, o: s.ConstantLR(o, factor=1.5),
    "linear start factor": lambda s, o: s.LinearLR(o, start_factor=0.0),
    "linear end factor": lambda s, o: s.LinearLR(o, end_factor=2.0),
    "multiplicative not callable": lambda s, o: s.MultiplicativeLR(o, 0.9),
    "multiplicative per group": lambda s, o: s.MultiplicativeLR(o, [lambda e: 1.0]),
    "cyclic mode": lambda s, o: s.CyclicLR(o, 0.01, 0.1, mode="sawtooth"),
    "cyclic base_lr list": lambda s, o: s.CyclicLR(o, [0.01], 0.1),
    "warm restarts T_0": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm restarts T_mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, 2, T_mult=1.5),
    "warm restarts eta_min": lambda s, o: s.CosineAnnealingWarmRestarts(o, 2, eta_min="0"),
    "sequential none": lambda s, o: s.SequentialLR(o, [], milestones=[]),
    "sequential milestones": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]),
    "sequential plateau": lambda s, o: s.SequentialLR(
        o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[3]),
    "chained none": lambda s, o: s.ChainedScheduler([]),
    "chained not a scheduler": lambda s, o: s.ChainedScheduler([s.StepLR(o, 2), 3]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_arguments_raise_torchs_errors(name):
    torch = require_torch()
    (lt_type, lt_msg), (th_type, th_msg) = [
        error_of(lambda lib=lib: ERRORS[name](lib.optim.lr_scheduler, optimizer(lib)))
        for lib in (learntorch, torch)]
    assert th_type is not None
    assert (lt_type, lt_msg) == (th_type, th_msg)


def test_one_cycle_needs_momentum_or_betas_to_cycle():
    torch = require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.OneCycleLR(optimizer(lib, "Adagrad"), 0.1, total_steps=10)
        lib.optim.lr_scheduler.OneCycleLR(optimizer(lib, "Adagrad"), 0.1, total_steps=10,
                                          cycle_momentum=False)


def test_plateau_groups_added_later_need_their_own_min_lr():
    torch = require_torch()
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0])
        opt.add_param_group({"params": [lib.nn.Parameter(lib.zeros(1))]})
        sched.step(1.0)
        with pytest.raises(RuntimeError, match="The number of param groups in the `optimizer` "
                                               "\\(3\\) differs"):
            sched.step(2.0)


def test_get_lr_outside_step_warns_to_use_get_last_lr():
    opt = optimizer(learntorch)
    sched = learntorch.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        values = sched.get_lr()
    assert np.allclose(values, [0.1, 0.3])
