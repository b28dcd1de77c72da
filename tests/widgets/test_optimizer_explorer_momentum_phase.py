"""The momentum phase diagram agrees with the theory of heavy-ball momentum.

Oracle: for a 1-D quadratic with curvature h, SGD with momentum beta converges
iff 0 <= beta < 1 and 0 < lr*h < 2(1 + beta); it swings back and forth (the
error changes sign again and again) iff the recurrence
e[t+1] = (1 + beta - lr*h) e[t] - beta e[t-1] has complex or negative roots.
The test points sit clearly on either side of those boundaries.
"""
import numpy as np
import pytest

import learntorch
from widgets._momentum_phase import (CONVERGES, DIVERGES, OSCILLATES, classify_runs,
                                     momentum_phase_diagram)
from widgets.optimizer_explorer import OptimizerExplorer


def theory(lr_times_h, beta):
    if not (0 <= beta < 1 and 0 < lr_times_h < 2 * (1 + beta)):
        return DIVERGES
    roots = np.roots([1.0, -(1 + beta - lr_times_h), beta])
    swings = np.iscomplexobj(roots) and np.abs(roots.imag).max() > 0 or (roots.real < 0).any()
    return OSCILLATES if swings else CONVERGES


# (lr * h as a fraction of the divergence boundary 2(1 + beta), beta): both sides of it
BOUNDARY_POINTS = [(f, beta) for beta in (0.0, 0.3, 0.6, 0.9) for f in (0.8, 1.2)]


@pytest.mark.parametrize("fraction, beta", BOUNDARY_POINTS)
def test_divergence_boundary_in_one_dimension(fraction, beta):
    # condition number 1: both axes have curvature h = 1, the 1-D case
    lr = fraction * 2 * (1 + beta)
    diagram = momentum_phase_diagram(1.0, lrs=[lr], momentums=[beta], steps=300)
    assert diagram.classes[0, 0] == theory(lr, beta)
    assert (diagram.classes[0, 0] == DIVERGES) == (fraction > 1)


def test_swinging_or_not_matches_the_roots():
    # lr*h = 0.5: beta = 0.01 has two positive real roots, beta = 0.5 complex ones;
    # beta = 0 with lr*h = 1.5 overshoots every step (a negative root).  With beta = 0.5
    # the error lands exactly on 0 now and then (0.5, 0, -0.25, ...): still swinging
    diagram = momentum_phase_diagram(1.0, lrs=[0.5, 1.5], momentums=[0.0, 0.01, 0.5], steps=200)
    expected = [[theory(lr, beta) for lr in (0.5, 1.5)] for beta in (0.0, 0.01, 0.5)]
    assert expected == [[CONVERGES, OSCILLATES], [CONVERGES, OSCILLATES],
                        [OSCILLATES, OSCILLATES]]
    assert diagram.classes.tolist() == expected


def test_the_steep_axis_sets_the_limit_for_an_ill_conditioned_bowl():
    kappa = 20.0
    momentums = [0.0, 0.5, 0.9]
    lrs = [f * 2 * (1 + beta) / kappa for beta in momentums for f in (0.7, 1.3)]
    diagram = momentum_phase_diagram(kappa, lrs=lrs, momentums=momentums, steps=400)
    for i, beta in enumerate(momentums):
        for j, lr in enumerate(lrs):
            # both axes must settle: the run diverges if either does, swings if either does
            steep, flat = theory(lr * kappa, beta), theory(lr, beta)
            assert diagram.classes[i, j] == max(steep, flat), (lr, beta)


def test_momentum_of_one_or_more_never_converges():
    diagram = momentum_phase_diagram(1.0, lrs=[0.1, 0.5], momentums=[1.05, 1.2], steps=300)
    assert (diagram.classes == DIVERGES).all()


def test_a_grid_cell_is_the_run_of_a_plain_sgd_with_that_lr_and_momentum():
    """The grid runs at lr = 1 on curvatures scaled by lr: the same run, checked here."""
    lr, beta, kappa, steps = 0.07, 0.8, 10.0, 60
    diagram = momentum_phase_diagram(kappa, lrs=[0.01, lr], momentums=[0.3, beta], steps=steps)
    p = learntorch.ones(2, dtype=learntorch.float64, requires_grad=True)
    optimizer = learntorch.optim.SGD([p], lr=lr, momentum=beta)
    curvature = learntorch.tensor([1.0, kappa], dtype=learntorch.float64)
    for _ in range(steps):
        optimizer.zero_grad()
        (0.5 * (curvature * p * p)).sum().backward()
        optimizer.step()
    assert diagram.final_errors[1, 1] == pytest.approx(np.linalg.norm(p.detach().numpy()),
                                                      rel=1e-9)


def test_classify_runs_on_hand_made_errors():
    steps = np.arange(41)[:, None, None]
    errors = np.concatenate([0.9 ** steps,                    # shrinks steadily
                             (-0.9) ** steps,                 # shrinks, flipping sign
                             1.1 ** steps,                    # grows
                             np.where(steps > 20, np.inf, 1.0),  # overflows
                             # +, 0, -, 0, +, ...: swings through exact zeros
                             0.9 ** steps * np.rint(np.cos(np.pi / 2 * steps))], axis=1)
    assert classify_runs(np.repeat(errors, 2, axis=2)).tolist() == \
        [CONVERGES, OSCILLATES, DIVERGES, DIVERGES, OSCILLATES]


def test_default_grid_counts_repr_and_picture():
    diagram = momentum_phase_diagram(10.0)
    assert diagram.classes.shape == (50, 60)
    counts = diagram.counts()
    assert sum(counts.values()) == 3000 and all(n > 100 for n in counts.values())
    assert repr(diagram) == repr(momentum_phase_diagram(10.0))
    assert repr(diagram).startswith("MomentumPhaseDiagram(condition_number=10, 50 momentums x "
                                    "60 lrs, 200 steps: ")
    svg = diagram.static_svg()
    for words in ("converges", "oscillates", "diverges", "learning rate", "momentum"):
        assert words in svg


def test_explorer_computes_it_for_its_quadratic_only():
    explorer = OptimizerExplorer("quadratic", optimizers=[], condition_number=4)
    diagram = explorer.momentum_phase(lrs=[0.1, 2.0], momentums=[0.0], steps=100)
    assert diagram.condition_number == 4.0
    assert diagram.names() == [["converges", "diverges"]]  # lr * kappa: 0.4 and 8
    explorer.set_surface("himmelblau")
    with pytest.raises(ValueError, match="computed for the 'quadratic' surface.*himmelblau"):
        explorer.momentum_phase()


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="condition_number must be >= 1"):
        momentum_phase_diagram(0.0)
    with pytest.raises(ValueError, match="steps must be at least 8"):
        momentum_phase_diagram(2.0, steps=3)
