"""``amp.GradScaler`` against torch 2.13's: the same sequence of scales, growth counts and
skipped steps on the same sequence of finite, infinite and nan gradients; unscale_, the
state dict, and the stage errors."""
import math

import numpy as np
import pytest

import learntorch
from tests.oracle import require_torch, torch

# what each iteration's loss multiplies the weight by: finite, inf, nan, or so large that the
# scaled gradient overflows float32 only while the scale is big
SEQUENCE = [1.0, 1.0, 1.0, float("inf"), 1.0, 1.0, 1.0, 1.0, float("nan"), 3e34, 3e34, 3e34,
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, float("-inf"), 1.0, 1.0, 1.0, 1e-3]


def _run(lib, sequence, explicit_unscale=False, **scaler_kwargs):
    """(scale, growth tracker, stepped?, weight) after each iteration of the usual loop."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    trace = []
    for c in sequence:
        opt.zero_grad()
        before = w.detach().clone()
        loss = (w * c).sum()
        scaler.scale(loss).backward()
        if explicit_unscale:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_([w], 1e6)
        scaler.step(opt)
        scaler.update()
        stepped = not bool((w.detach() == before).all())
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), stepped,
                      w.detach().tolist()))
    return trace, scaler


@pytest.mark.parametrize("kwargs", [
    dict(init_scale=2.0 ** 16, growth_interval=3),
    dict(init_scale=1024.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=2),
    dict(init_scale=3.0, growth_factor=1.5, backoff_factor=0.3, growth_interval=1),
    dict(),  # torch's defaults: 2**16, x2, x0.5, every 2000 steps
])
def test_sequence_of_scales_and_skipped_steps_equals_torchs(kwargs):
    require_torch()
    got, _ = _run(learntorch, SEQUENCE, **kwargs)
    want, _ = _run(torch, SEQUENCE, **kwargs)
    assert [step[:3] for step in got] == [step[:3] for step in want]
    np.testing.assert_allclose([s[3] for s in got], [s[3] for s in want], rtol=1e-6)
    assert not all(step[2] for step in got) and any(step[2] for step in got)


def test_explicit_unscale_before_clipping_gives_torchs_sequence():
    require_torch()
    got, _ = _run(learntorch, SEQUENCE, explicit_unscale=True, growth_interval=2)
    want, _ = _run(torch, SEQUENCE, explicit_unscale=True, growth_interval=2)
    assert [step[:3] for step in got] == [step[:3] for step in want]


def test_a_scale_that_would_grow_to_inf_stays_as_torchs():
    require_torch()
    kwargs = dict(init_scale=2.0 ** 126, growth_factor=4.0, growth_interval=1)
    got, _ = _run(learntorch, [1e-30] * 4, **kwargs)
    want, _ = _run(torch, [1e-30] * 4, **kwargs)
    assert [s[:3] for s in got] == [s[:3] for s in want]
    assert all(math.isfinite(s[0]) for s in got)


def test_unscale_divides_gradients_by_the_scale():
    w = learntorch.nn.Parameter(learntorch.tensor([1.0, 2.0]))
    opt = learntorch.optim.SGD([w], lr=0.1)
    scaler = learntorch.amp.GradScaler("cpu", init_scale=1024.0)
    scaled = scaler.scale((w * learntorch.tensor([3.0, -0.5])).sum())
    assert scaled.item() == pytest.approx(1024.0 * 2.0)
    scaled.backward()
    assert w.grad.tolist() == [3072.0, -512.0]
    scaler.unscale_(opt)
    assert w.grad.tolist() == [3.0, -0.5]


def test_state_dict_matches_torchs_and_round_trips():
    require_torch()
    _, ours = _run(learntorch, SEQUENCE[:6], growth_interval=4)
    _, theirs = _run(torch, SEQUENCE[:6], growth_interval=4)
    assert ours.state_dict() == theirs.state_dict()
    fresh = learntorch.amp.GradScaler("cpu")
    fresh.load_state_dict(ours.state_dict())
    assert fresh.state_dict() == ours.state_dict()
    assert fresh.get_scale() == ours.get_scale()
    with pytest.raises(RuntimeError, match="state dict is empty"):
        fresh.load_state_dict({})


def test_scale_of_a_list_scales_each_tensor():
    scaler = learntorch.amp.GradScaler("cpu", init_scale=8.0)
    a, b = scaler.scale([learntorch.tensor(1.0), learntorch.tensor(2.0)])
    assert (a.item(), b.item()) == (8.0, 16.0)
    with pytest.raises(ValueError, match="outputs must be a Tensor"):
        scaler.scale(3.0)


@pytest.mark.parametrize("misuse, error, message", [
    ("unscale twice", RuntimeError, "unscale_\\(\\) has already been called"),
    ("unscale after step", RuntimeError, "unscale_\\(\\) is being called after step"),
    ("step twice", RuntimeError, "step\\(\\) has already been called"),
    ("step before scale", AssertionError, "Attempted step but _scale is None"),
    ("float16 gradients", ValueError, "Attempting to unscale FP16 gradients"),
])
def test_misuse_raises_torchs_errors(misuse, error, message):
    require_torch()
    for lib in (learntorch, torch):
        dtype = lib.float16 if misuse == "float16 gradients" else lib.float32
        w = lib.nn.Parameter(lib.ones(2, dtype=dtype))
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(error, match=message):
            if misuse != "step before scale":
                scaler.scale(w.sum()).backward()
            if misuse == "unscale twice":
                scaler.unscale_(opt)
                scaler.unscale_(opt)
            elif misuse == "unscale after step":
                scaler.step(opt)
                scaler.unscale_(opt)
            elif misuse in ("step twice",):
                scaler.step(opt)
                scaler.step(opt)
            else:
                scaler.step(opt)


def test_a_disabled_scaler_passes_everything_through():
    w = learntorch.nn.Parameter(learntorch.ones(2))
    opt = learntorch.optim.SGD([w], lr=0.5)
    scaler = learntorch.amp.GradScaler("cpu", enabled=False)
    loss = w.sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [0.5, 0.5] and scaler.state_dict() == {} and not scaler.is_enabled()


def test_cuda_scaler_without_cuda_warns_and_disables_as_torch():
    require_torch()
    if learntorch.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a cuda device is present: this tests the machine without one")
    for lib in (learntorch, torch):
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not "
                                             "available.  Disabling."):
            assert not lib.amp.GradScaler().is_enabled()


def test_growth_and_backoff_factors_are_checked():
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        learntorch.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        learntorch.amp.GradScaler("cpu", backoff_factor=1.0)


def test_update_with_a_new_scale_sets_it():
    w = learntorch.nn.Parameter(learntorch.ones(2))
    scaler = learntorch.amp.GradScaler("cpu")
    scaler.scale(w.sum()).backward()
    scaler.update(new_scale=128.0)
    assert scaler.get_scale() == 128.0
    scaler.update(new_scale=learntorch.tensor(4.0))
    assert scaler.get_scale() == 4.0
