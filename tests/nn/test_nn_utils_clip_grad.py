"""clip_grad_norm_ / clip_grad_value_ (and get_total_norm, clip_grads_with_norm_) against torch.

The same gradients go to both libraries; the returned total norm and the
clipped gradients must agree (float64 to 1e-12, float32 to a few ulps: each
library rounds its per-tensor norms once), for every norm type, below and above
``max_norm``, with mixed dtypes, skipped ``None`` gradients and non-finite ones.
"""
import inspect
import warnings

import numpy as np
import pytest

import learntorch
from oracle import require_torch

SHAPES = [(5, 4), (3,), (), (2, 3, 2)]
RTOL = {"float32": 3e-7, "float64": 1e-12}


def with_grads(lib, dtypes, seed=0, none_at=(), scale=1.0, special=None):
    rng = np.random.default_rng(seed)
    params = []
    for i, (shape, dtype) in enumerate(zip(SHAPES, dtypes)):
        p = lib.nn.Parameter(lib.zeros(shape, dtype=getattr(lib, dtype)))
        if i not in none_at:
            g = np.array(rng.standard_normal(shape) * scale, dtype=dtype)
            if special is not None and i == 0:
                g.reshape(-1)[0] = special
            p.grad = lib.from_numpy(g)
        params.append(p)
    return params


def grads_of(params):
    return [None if p.grad is None else p.grad.numpy().copy() for p in params]


def assert_same(mine, theirs, rtol):
    for a, b in zip(mine, theirs):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtypes", [("float32",) * 4, ("float64",) * 4,
                                    ("float32", "float64", "float32", "float64")])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), float("-inf"), 0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(dtypes, norm_type, max_norm):
    torch = require_torch()
    rtol = RTOL["float32" if "float32" in dtypes else "float64"]
    results = []
    for lib in (learntorch, torch):
        params = with_grads(lib, dtypes, none_at=(1,))
        kept = params[0].grad
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
        assert params[0].grad is kept  # in place
        results.append((total, grads_of(params)))
    (lt_total, lt_grads), (th_total, th_grads) = results
    assert isinstance(lt_total, learntorch.Tensor) and lt_total.shape == ()
    assert lt_total.dtype.name == str(th_total.dtype).split(".")[-1]
    np.testing.assert_allclose(lt_total.item(), th_total.item(), rtol=rtol)
    assert_same(lt_grads, th_grads, rtol * 4)


def test_a_single_tensor_and_a_generator_are_accepted():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        params = with_grads(lib, ("float64",) * 4, scale=10)
        one = lib.nn.utils.clip_grad_norm_(params[0], 1.0)
        rest = lib.nn.utils.clip_grad_norm_((p for p in params[1:]), 2.0, norm_type=1)
        results.append(([one.item(), rest.item()], grads_of(params)))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    assert_same(results[0][1], results[1][1], 1e-12)


def test_no_gradients_give_a_zero_norm_and_an_empty_generator_warns():
    torch = require_torch()
    for lib in (learntorch, torch):
        params = with_grads(lib, ("float64",) * 4, none_at=(0, 1, 2, 3))
        total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        assert total.item() == 0.0 and str(total.dtype).endswith("float32")
        with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
            lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)


@pytest.mark.parametrize("special", [np.inf, np.nan])
def test_non_finite_norms_raise_on_request_and_otherwise_spread_like_torch(special):
    torch = require_torch()
    messages, results = [], []
    for lib in (learntorch, torch):
        params = with_grads(lib, ("float32",) * 4, special=special)
        with pytest.raises(RuntimeError) as info:
            lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
        messages.append(str(info.value))
        assert "non-finite" in messages[-1]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # neither library warns
            total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        results.append((total.item(), grads_of(params)))
    assert messages[0] == messages[1]
    np.testing.assert_equal(results[0][0], results[1][0])
    assert_same(results[0][1], results[1][1], 0)


def test_get_total_norm_and_clip_grads_with_norm_are_the_two_halves():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        params = with_grads(lib, ("float64",) * 4)
        total = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type=3.0)
        lib.nn.utils.clip_grads_with_norm_(params, 0.25, total)
        results.append((total.item(), grads_of(params)))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    assert_same(results[0][1], results[1][1], 1e-12)


def test_clip_grad_norm_without_underscore_is_deprecated_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        params = with_grads(lib, ("float64",) * 4)
        with pytest.warns(FutureWarning, match="deprecated in favor of"):
            lib.nn.utils.clip_grad_norm(params, 1.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("clip_value", [0.3, 5, 0.0])
def test_clip_grad_value_matches_torch(dtype, clip_value):
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        params = with_grads(lib, (dtype,) * 4, none_at=(2,), special=np.nan)
        kept = params[0].grad
        assert lib.nn.utils.clip_grad_value_(params, clip_value) is None
        assert params[0].grad is kept
        results.append(grads_of(params))
    assert_same(results[0], results[1], 0)
    assert np.abs(np.nan_to_num(results[0][0])).max() <= clip_value


def test_clipping_bumps_the_gradients_version_like_an_in_place_op():
    for clip in (lambda ps: learntorch.nn.utils.clip_grad_norm_(ps, 0.1),
                 lambda ps: learntorch.nn.utils.clip_grad_value_(ps, 0.1)):
        params = with_grads(learntorch, ("float32",) * 4)
        before = params[0].grad._version
        clip(params)
        assert params[0].grad._version > before


@pytest.mark.parametrize("name", ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_",
                                  "get_total_norm", "clip_grads_with_norm_",
                                  "parameters_to_vector", "vector_to_parameters"])
def test_parameters_are_torchs(name):
    torch = require_torch()
    mine, theirs = [[(p.name, p.kind, p.default) for p in
                     inspect.signature(getattr(lib.nn.utils, name)).parameters.values()]
                    for lib in (learntorch, torch)]
    assert mine == theirs
