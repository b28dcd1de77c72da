"""Every optimizer follows torch's trajectory step for step, for every option that matters.

One harness for all five algorithms: the same small MLP (two param groups with
different learning rates, one parameter that never gets a gradient, and one
that gets none every third step) is trained for 25 steps in learntorch and in
torch, from the same initial values and on the same batches; after every step
the parameters and the whole optimizer state must agree -- float64 to 1e-10
relative, float32 to 1e-5.  torch runs its single-tensor path
(``foreach=False``), whose formulas the numpy updates copy.

Each configuration runs on the numpy update in both dtypes and on the fused
Numba kernel (a Numba backend whose kernels serve every size) in float32, so both paths are
held to torch; test_optim_fused.py checks that the kernel equals the numpy
update bit for bit in float64 too.
"""
import numpy as np
import pytest

import learntorch
from learntorch.backends import NumbaBackend, NumpyBackend
from oracle import require_torch

STEPS = 25
# relative tolerance; the absolute one is that times the array's largest element, because an
# element that is a small difference of large numbers (a momentum buffer whose sign flips) has
# the rounding error of the large ones -- torch's float32 and ours each sit ~1e-7 of the
# scale away from a float64 run, in different directions (torch fuses multiply-adds)
RTOL = {np.float64: 1e-10, np.float32: 1e-5}

CONFIGS = {
    "SGD": [
        dict(lr=0.1),
        dict(lr=0.1, momentum=0.9),
        dict(lr=0.05, momentum=0.9, nesterov=True),
        dict(lr=0.05, momentum=0.5, dampening=0.3),
        dict(lr=0.1, momentum=0.9, weight_decay=0.01),
        dict(lr=0.05, weight_decay=0.1, maximize=True),
        dict(lr=0.02, momentum=0.8, nesterov=True, weight_decay=0.05, maximize=True),
    ],
    "Adam": [
        dict(),
        dict(lr=0.01, amsgrad=True),
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, maximize=True),
        dict(lr=0.02, betas=(0.5, 0.9)),    # lerp weight 0.5: torch's second lerp formula
        dict(lr=0.02, betas=(0.2, 0.6), eps=1e-3),
        dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    ],
    "AdamW": [
        dict(),
        dict(lr=0.01, weight_decay=0.1, amsgrad=True),
        dict(lr=0.01, maximize=True, betas=(0.3, 0.99)),
    ],
    "RMSprop": [
        dict(),
        dict(lr=0.01, centered=True),
        dict(lr=0.01, momentum=0.9),
        dict(lr=0.005, centered=True, momentum=0.5, weight_decay=0.1),
        dict(lr=0.01, alpha=0.3, centered=True),  # lerp weight 0.7: the second lerp formula
        dict(lr=0.01, maximize=True, eps=1e-4),
    ],
    "Adagrad": [
        dict(),
        dict(lr=0.1, lr_decay=0.1),
        dict(lr=0.1, initial_accumulator_value=0.5),
        dict(lr=0.1, weight_decay=0.1, maximize=True),
        dict(lr=0.05, eps=1e-3, lr_decay=0.01),
    ],
}
CASES = [(name, cfg) for name, cfgs in CONFIGS.items() for cfg in cfgs]


def case_id(case):
    name, cfg = case
    return name + "(" + ",".join(f"{k}={v}" for k, v in cfg.items()) + ")"


def use_path(path):
    """Send every parameter to the numpy update, or every one to the fused kernel."""
    if path == "numpy":
        return learntorch.backends.use(NumpyBackend())
    backend = NumbaBackend()
    backend.layer_min_sizes = dict(backend.layer_min_sizes, sgd=0, adam=0, rmsprop=0, adagrad=0)
    return learntorch.backends.use(backend)


def initial_params(dtype):
    rng = np.random.default_rng(1)
    shapes = [(4, 6), (6,), (6, 3), (3,), (2, 2)]  # the last one is never used by the loss
    return [(rng.standard_normal(s) * 0.5).astype(dtype) for s in shapes]


def batches(dtype):
    rng = np.random.default_rng(2)
    return [(rng.standard_normal((8, 4)).astype(dtype), rng.standard_normal((8, 3)).astype(dtype))
            for _ in range(STEPS)]


def loss_fn(lib, params, x, y, step):
    w1, b1, w2, b2, _never_used = params
    out = lib.tanh(x @ w1 + b1) @ w2
    if step % 3 != 2:  # every third step b2 is left out: its .grad stays None
        out = out + b2
    return ((out - y) ** 2).mean()


def make(lib, name, cfg, arrays):
    params = [lib.nn.Parameter(lib.from_numpy(a.copy())) for a in arrays]
    groups = [{"params": params[:2]}, {"params": params[2:], "lr": cfg.get("lr", 0.01) * 0.5}]
    options = dict(cfg)
    if lib is not learntorch:
        options["foreach"] = False
    return params, getattr(lib.optim, name)(groups, **options)


def as_array(t):
    return t.detach().numpy()


def assert_close(mine, theirs, dtype, what):
    mine, theirs = as_array(mine), as_array(theirs)
    rtol = RTOL[dtype]
    scale = float(np.abs(theirs).max()) if theirs.size else 0.0
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=rtol * max(scale, 1e-3),
                               err_msg=what)


def assert_same_state(lt_opt, th_opt, lt_params, th_params, dtype, where):
    for i, (p, q) in enumerate(zip(lt_params, th_params)):
        assert_close(p, q, dtype, f"param {i} {where}")
        lt_state, th_state = lt_opt.state.get(p, {}), th_opt.state.get(q, {})
        assert set(lt_state) == set(th_state), f"state keys of param {i} {where}"
        for key, theirs in th_state.items():
            mine = lt_state[key]
            assert mine.dtype.name == str(theirs.dtype).replace("torch.", ""), (key, where)
            assert_close(mine, theirs, dtype, f"state {key!r} of param {i} {where}")


@pytest.mark.parametrize("path, dtype", [("numpy", np.float64), ("numpy", np.float32),
                                         ("kernel", np.float32)])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_trajectory_matches_torch_step_for_step(case, path, dtype):
    torch = require_torch()
    with use_path(path):
        trajectory_matches_torch(torch, case, dtype)


def trajectory_matches_torch(torch, case, dtype):
    name, cfg = case
    arrays = initial_params(dtype)
    lt_params, lt_opt = make(learntorch, name, cfg, arrays)
    th_params, th_opt = make(torch, name, cfg, arrays)
    for step, (x, y) in enumerate(batches(dtype)):
        for lib, params, opt in ((learntorch, lt_params, lt_opt), (torch, th_params, th_opt)):
            opt.zero_grad()
            loss_fn(lib, params, lib.from_numpy(x), lib.from_numpy(y), step).backward()
            opt.step()
        assert lt_params[4].grad is None and lt_params[4] not in lt_opt.state or \
            name == "Adagrad"  # Adagrad makes every parameter's state up front, as torch
        assert_same_state(lt_opt, th_opt, lt_params, th_params, dtype, f"after step {step + 1}")
    np.testing.assert_array_equal(as_array(lt_params[4]), arrays[4])  # never touched


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adagrad"])
def test_closure_loss_is_returned_and_its_gradients_used(name):
    torch = require_torch()
    cfg = {"lr": 0.05}
    arrays = initial_params(np.float64)
    x, y = batches(np.float64)[0]
    results = []
    for lib in (learntorch, torch):
        params, opt = make(lib, name, cfg, arrays)

        def closure():
            opt.zero_grad()
            loss = loss_fn(lib, params, lib.from_numpy(x), lib.from_numpy(y), 0)
            loss.backward()
            return loss

        with lib.no_grad():  # step must turn gradients back on for the closure
            loss = opt.step(closure)
        results.append((loss.item(), [as_array(p).copy() for p in params]))
    (lt_loss, lt_values), (th_loss, th_values) = results
    assert lt_loss == pytest.approx(th_loss, rel=1e-12)
    for mine, theirs in zip(lt_values, th_values):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
