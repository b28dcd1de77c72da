"""Every scheduler produces torch's learning-rate (and momentum) sequence, to the last bit.

Each case builds the same optimizer (two param groups with different learning
rates) and scheduler in learntorch and in torch, steps both many times, and
compares ``get_last_lr()`` and every group's ``lr`` / ``momentum`` / ``betas``
after each step with ``==``: the formulas are the same Python float
arithmetic, so nothing less than equality is right.
"""
import math
import warnings

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


def snapshot(opt, sched):
    groups = [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]
    return sched.get_last_lr(), groups, getattr(sched, "last_epoch", None)  # (not all have it)


def sequence(lib, make_sched, epochs, kind="SGD", metrics=None):
    opt = optimizer(lib, kind)
    sched = make_sched(lib.optim.lr_scheduler, opt)
    seen = [snapshot(opt, sched)]
    for epoch in range(epochs):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[epoch])
        seen.append(snapshot(opt, sched))
    return seen


SCHEDULES = {
    "StepLR(3, 0.5)": (lambda s, o: s.StepLR(o, step_size=3, gamma=0.5), 20),
    "StepLR(1, 0.9)": (lambda s, o: s.StepLR(o, 1, 0.9), 30),
    "MultiStepLR": (lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3), 15),
    "ExponentialLR": (lambda s, o: s.ExponentialLR(o, gamma=0.95), 60),
    # three periods of the cosine (each 2 * T_max epochs), the recursive formula throughout
    "CosineAnnealingLR(10)": (lambda s, o: s.CosineAnnealingLR(o, T_max=10), 65),
    "CosineAnnealingLR(7, eta_min)": (lambda s, o: s.CosineAnnealingLR(o, 7, eta_min=0.001), 45),
    "LambdaLR": (lambda s, o: s.LambdaLR(o, lambda e: 0.9 ** e), 20),
    "LambdaLR per group": (lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1),
                                                       lambda e: max(0.0, 1 - e / 10)]), 15),
    "OneCycleLR cos": (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=50), 50),
    "OneCycleLR linear per group": (
        lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=40, pct_start=0.25,
                                  anneal_strategy="linear", base_momentum=[0.8, 0.7],
                                  max_momentum=0.99, div_factor=10.0, final_div_factor=100.0),
        40),
    "OneCycleLR three_phase": (
        lambda s, o: s.OneCycleLR(o, max_lr=0.5, epochs=5, steps_per_epoch=7, three_phase=True),
        35),
    "OneCycleLR no momentum": (
        lambda s, o: s.OneCycleLR(o, max_lr=0.5, total_steps=20, cycle_momentum=False), 20),
    "MultiplicativeLR": (lambda s, o: s.MultiplicativeLR(o, lambda e: 0.95 if e % 2 else 1.01),
                         20),
    "ConstantLR": (lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=4), 10),
    "ConstantLR default": (lambda s, o: s.ConstantLR(o), 8),
    "LinearLR warm-up": (lambda s, o: s.LinearLR(o, start_factor=0.1, total_iters=6), 12),
    "LinearLR decay": (lambda s, o: s.LinearLR(o, 1.0, end_factor=0.05, total_iters=9), 15),
    "PolynomialLR": (lambda s, o: s.PolynomialLR(o, total_iters=8, power=2.0), 12),
    "PolynomialLR linear": (lambda s, o: s.PolynomialLR(o), 8),
    "CyclicLR triangular": (lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4), 30),
    "CyclicLR triangular2 per group": (
        lambda s, o: s.CyclicLR(o, [0.01, 0.02], [0.1, 0.5], step_size_up=3, step_size_down=5,
                                mode="triangular2", base_momentum=[0.8, 0.7]), 40),
    "CyclicLR exp_range": (lambda s, o: s.CyclicLR(o, 0.001, 0.1, 5, mode="exp_range",
                                                   gamma=0.97), 40),
    "CyclicLR scale_fn": (lambda s, o: s.CyclicLR(o, 0.001, 0.1, 4, scale_fn=lambda x: 0.5 ** x,
                                                  scale_mode="iterations",
                                                  cycle_momentum=False), 25),
    "CosineAnnealingWarmRestarts": (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5), 23),
    "CosineAnnealingWarmRestarts T_mult": (
        lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), 40),
    "SequentialLR warm-up then cosine": (
        lambda s, o: s.SequentialLR(o, [s.LinearLR(o, 0.1, total_iters=3),
                                        s.CosineAnnealingLR(o, T_max=10)], milestones=[3]), 25),
    "SequentialLR three": (
        lambda s, o: s.SequentialLR(o, [s.ConstantLR(o, 0.5, total_iters=2),
                                        s.ExponentialLR(o, 0.9), s.StepLR(o, 2, 0.5)],
                                    milestones=[4, 9]), 20),
    "ChainedScheduler": (
        lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.5, total_iters=4),
                                         s.ExponentialLR(o, 0.9)]), 12),
    "ChainedScheduler of a SequentialLR": (
        lambda s, o: s.ChainedScheduler([s.SequentialLR(o, [s.LinearLR(o, 0.5, total_iters=2),
                                                            s.ExponentialLR(o, 0.8)], [2]),
                                         s.MultiplicativeLR(o, lambda e: 0.99)]), 10),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_learning_rates_match_torch_every_step(name):
    torch = require_torch()
    make, epochs = SCHEDULES[name]
    assert sequence(learntorch, make, epochs) == sequence(torch, make, epochs)


@pytest.mark.parametrize("name", ["CyclicLR triangular", "CyclicLR exp_range"])
def test_cyclic_lr_cycles_adams_beta1(name):
    torch = require_torch()
    make, epochs = SCHEDULES[name]
    assert sequence(learntorch, make, epochs, "Adam") == sequence(torch, make, epochs, "Adam")


@pytest.mark.parametrize("epochs", [[0.5, 1.2, 3.9, 4.0, 7.25, 11.0, 20.5, 0.0],
                                    [6, 13, 2, 45, 1]])
@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_follow_fractional_and_jumping_epochs_like_torch(epochs, T_mult):
    torch = require_torch()
    seen = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=T_mult)
        lrs = []
        for epoch in epochs:
            opt.step()
            sched.step(epoch)
            lrs.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        seen.append(lrs)
    assert seen[0] == seen[1]


def test_one_cycle_cycles_adams_beta1():
    torch = require_torch()

    def make(s, o):
        return s.OneCycleLR(o, max_lr=0.01, total_steps=30, three_phase=True)
    mine, theirs = (sequence(lib, make, 30, kind="Adam") for lib in (learntorch, torch))
    assert mine == theirs
    assert mine[10][1][0][2][0] != 0.95  # beta1 really moved


def test_one_cycle_refuses_to_step_past_total_steps():
    torch = require_torch()
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=5)
        for _ in range(5):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 6 times. The specified number of "
                                             "total steps is 5"):
            sched.step()


def test_chained_schedulers_combine_like_torchs():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        s = lib.optim.lr_scheduler
        first, second = s.StepLR(opt, 4, 0.5), s.ExponentialLR(opt, 0.9)
        lrs = []
        for _ in range(15):
            opt.step()
            first.step()
            second.step()
            lrs.append((first.get_last_lr(), second.get_last_lr()))
        results.append(lrs)
    assert results[0] == results[1]


@pytest.mark.parametrize("make", [lambda s, o: s.StepLR(o, 3, 0.5),
                                  lambda s, o: s.MultiStepLR(o, [2, 4, 4], 0.5),
                                  lambda s, o: s.ExponentialLR(o, 0.8),
                                  lambda s, o: s.CosineAnnealingLR(o, 6, 0.01)])
def test_stepping_to_an_explicit_epoch_uses_the_closed_form_with_torchs_warning(make):
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = make(lib.optim.lr_scheduler, opt)
        lrs = []
        for epoch in (3, 7, 5, 12):
            opt.step()
            with pytest.warns(UserWarning, match="The epoch parameter"):
                sched.step(epoch)
            lrs.append(sched.get_last_lr())
        sched.step()  # the recursive formula again, from there
        lrs.append(sched.get_last_lr())
        results.append(lrs)
    assert results[0] == results[1]


def test_cosine_annealing_resumed_at_a_later_epoch_starts_from_the_closed_form():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
        lrs = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        results.append(lrs)
    assert results[0] == results[1]


PLATEAU_METRICS = [5.0, 4.0, 4.0, 3.9996, 4.1, 4.0, 4.2, 3.0, 3.0, 3.0, 3.0, 3.0, 2.9999,
                   3.1, 3.2, 3.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
PLATEAU_CASES = {
    "defaults, patience 2": dict(patience=2),
    "patience 0": dict(patience=0, factor=0.5),
    "max mode": dict(mode="max", patience=1, factor=0.5),
    "abs threshold": dict(patience=1, threshold=0.05, threshold_mode="abs"),
    "max abs": dict(mode="max", patience=1, threshold=0.5, threshold_mode="abs"),
    "cooldown": dict(patience=1, cooldown=3, factor=0.5),
    "min_lr per group": dict(patience=0, factor=0.1, min_lr=[0.002, 0.0003]),
    "eps": dict(patience=0, factor=0.9, min_lr=0.05, eps=0.01),
}


@pytest.mark.parametrize("name", PLATEAU_CASES)
def test_reduce_on_plateau_matches_torch_epoch_by_epoch(name):
    torch = require_torch()
    options = PLATEAU_CASES[name]

    def make(s, o):
        return s.ReduceLROnPlateau(o, **options)

    def trace(lib):
        opt = optimizer(lib)
        sched = make(lib.optim.lr_scheduler, opt)
        seen = []
        for metric in PLATEAU_METRICS:
            sched.step(lib.tensor(metric) if metric == 3.0 else metric)  # 0-dim tensors too
            seen.append((snapshot(opt, sched), sched.best, sched.num_bad_epochs,
                         sched.cooldown_counter, sched.in_cooldown))
        return seen
    mine, theirs = trace(learntorch), trace(torch)
    assert mine == theirs
    assert mine[-1][0][0] != [0.1, 0.3]  # the lr was reduced at least once


def test_a_nan_metric_is_never_an_improvement():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
        for metric in (1.0, math.nan, math.nan, math.nan):
            sched.step(metric)
        results.append((sched.get_last_lr(), sched.num_bad_epochs))
    assert results[0] == results[1]


def test_the_first_scheduler_step_before_the_optimizers_warns_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before "
                                             "`optimizer.step\\(\\)`"):
            sched.step()
        opt = optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sched.step()
