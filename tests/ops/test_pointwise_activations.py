"""Activations (tanh, sigmoid, relu, gelu, silu, softplus) and clamp against torch.

Every activation's backward has two paths (``learntorch/ops/activations.py``):
a fused backend kernel when no graph of the gradient is recorded, and a
composite of differentiable ops under ``create_graph=True``.  Both are
compared with torch's gradient, with each backend (numba and the numpy
reference).  Values of +-1000 in float32 must give finite, correct values and
gradients, with no numpy warning.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, require_torch, torch_tensor)

AWAY_FROM_ZERO = st.floats(0.125, 3, width=32) | st.floats(-3, -0.125, width=32)


def activations():
    """name: (learntorch function, torch function, domain avoiding kinks)."""
    torch = require_torch()
    F = torch.nn.functional
    any_ = st.floats(-4, 4, allow_nan=False, width=32)
    return {
        "tanh": (learntorch.tanh, torch.tanh, any_),
        "sigmoid": (learntorch.sigmoid, torch.sigmoid, any_),
        "relu": (learntorch.relu, torch.relu, AWAY_FROM_ZERO),
        "gelu": (learntorch.gelu, F.gelu, any_),
        "gelu_tanh": (lambda x: learntorch.gelu(x, approximate="tanh"),
                      lambda x: F.gelu(x, approximate="tanh"), any_),
        "silu": (learntorch.silu, F.silu, any_),
        "softplus": (learntorch.softplus, F.softplus, any_),
        "softplus_beta2_threshold1": (lambda x: learntorch.softplus(x, beta=2, threshold=1),
                                      lambda x: F.softplus(x, beta=2, threshold=1),
                                      any_.filter(lambda v: abs(v - 0.5) > 1e-3)),
        "softplus_beta_negative": (lambda x: learntorch.softplus(x, beta=-0.5, threshold=3),
                                   lambda x: F.softplus(x, beta=-0.5, threshold=3), any_),
    }


# the backend fixture only selects a backend: sharing it across hypothesis examples is safe
with_backend = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

NAMES = ["tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "softplus",
         "softplus_beta2_threshold1", "softplus_beta_negative"]


def composite_gradient(fn, lib, x_array, g_array, requires_grad_view=False):
    """d(fn(x))/dx applied to g, computed with create_graph=True (the composite path)."""
    x = (lt_tensor if lib is learntorch else torch_tensor)(x_array, requires_grad=True)
    g = (lt_tensor if lib is learntorch else torch_tensor)(g_array)
    y = fn(x)
    grad, = lib.autograd.grad(y, x, grad_outputs=g, create_graph=True)
    return grad


# ---------------------------------------------------------------- forward and both backward paths
@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
@with_backend
def test_activation_forward_and_fused_gradient_match_torch(name, data, backend):
    lt_fn, torch_fn, domain = activations()[name]
    a = data.draw(arrays(elements=domain))
    check_against_torch(lt_fn, torch_fn, a)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_activation_composite_gradient_under_create_graph_matches_torch(name, data):
    torch = require_torch()
    lt_fn, torch_fn, domain = activations()[name]
    a = data.draw(arrays(elements=domain))
    g = np.random.default_rng(0).standard_normal(a.shape)
    assert_close(composite_gradient(lt_fn, learntorch, a, g),
                 composite_gradient(torch_fn, torch, a, g), what="create_graph gradient")


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_activation_of_float32_matches_torch(name, data):
    lt_fn, torch_fn, domain = activations()[name]
    a = data.draw(arrays(dtype=np.float32, elements=domain))
    # atol 1e-5: torch's float32 gelu (both forms) loses digits to cancellation in the left
    # tail, where learntorch computes without it; elsewhere float32 agrees to ~1e-7
    check_against_torch(lt_fn, torch_fn, a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_activation_gradient_matches_finite_differences(name, data):
    lt_fn, _, domain = activations()[name]
    check_against_finite_differences(lt_fn, data.draw(arrays(min_dims=1, elements=domain)))


@pytest.mark.parametrize("name", NAMES)
def test_activation_of_large_array_matches_torch(name, backend):
    """Big enough for the compiled kernels of the numba backend to take over.

    atol 1e-5: in float32 torch computes exact gelu as 0.5 x (1 + erf(x / sqrt 2)), which
    cancels in the left tail (learntorch's erf runs in float64), so the two differ there by
    a few 1e-6 in absolute terms."""
    lt_fn, torch_fn, _ = activations()[name]
    a = np.random.default_rng(3).standard_normal((300, 400)).astype(np.float32) * 4
    check_against_torch(lt_fn, torch_fn, a, rtol=1e-5, atol=1e-5)
    check_against_torch(lt_fn, torch_fn, a[::2, ::3].T, rtol=1e-5, atol=1e-5)


def test_relu_gradient_at_zero_is_zero_like_torch(backend):
    torch = require_torch()
    a = np.array([-1.0, 0.0, -0.0, 2.0])
    check_against_torch(learntorch.relu, torch.relu, a)
    g = np.ones(4)
    assert_close(composite_gradient(learntorch.relu, learntorch, a, g),
                 composite_gradient(torch.relu, torch, a, g))


# ---------------------------------------------------------------- numerical safety
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("create_graph", [False, True], ids=["fused", "composite"])
def test_extreme_inputs_give_finite_values_and_gradients_like_torch(name, create_graph, backend):
    torch = require_torch()
    lt_fn, torch_fn, _ = activations()[name]
    a = np.array([-1000.0, -100.0, -20.0, 0.5, 20.0, 100.0, 1000.0], dtype=np.float32)
    g = np.ones_like(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaking numpy RuntimeWarning fails the test
        x = lt_tensor(a, requires_grad=True)
        y = lt_fn(x)
        grad, = learntorch.autograd.grad(y, x, lt_tensor(g), create_graph=create_graph)
    t = torch_tensor(a, requires_grad=True)
    ty = torch_fn(t)
    tgrad, = torch.autograd.grad(ty, t, torch_tensor(g))
    assert np.isfinite(y.detach().numpy()).all() and np.isfinite(grad.detach().numpy()).all()
    assert_close(y, ty, rtol=1e-5, atol=1e-6, what="forward")
    assert_close(grad, tgrad, rtol=1e-5, atol=1e-6, what="gradient")


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_activation_keeps_half_and_double_dtypes_like_torch(name, dtype):
    lt_fn, torch_fn, _ = activations()[name]
    a = np.array([-1000.0, -300.0, -3.0, -0.5, 0.25, 2.0, 300.0, 1000.0], dtype=dtype)
    check_against_torch(lt_fn, torch_fn, a, rtol=2e-3 if dtype == np.float16 else 1e-7,
                        atol=2e-3 if dtype == np.float16 else 1e-9)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_activation_of_integer_or_bool_tensor_matches_torch_or_its_error(name, dtype):
    torch = require_torch()
    lt_fn, torch_fn, _ = activations()[name]
    a = np.array([-2, 0, 1, 3]).astype(dtype)
    try:
        torch_fn(torch.from_numpy(a.copy()))
    except RuntimeError as e:  # NotImplementedError is a RuntimeError
        with pytest.raises(type(e)):
            lt_fn(lt_tensor(a))
        return
    check_against_torch(lt_fn, torch_fn, a)


def test_gelu_rejects_unknown_approximation_like_torch():
    torch = require_torch()
    with pytest.raises(RuntimeError):
        torch.nn.functional.gelu(torch.ones(2), approximate="erf")
    with pytest.raises(RuntimeError, match="none or tanh"):
        learntorch.gelu(learntorch.ones(2), approximate="erf")


@pytest.mark.parametrize("fn", ["tanh", "sigmoid", "relu", "gelu", "silu", "softplus", "clamp"])
def test_activations_reject_non_tensors_with_type_error(fn):
    with pytest.raises(TypeError, match="Tensor"):
        getattr(learntorch, fn)([1.0, -1.0])


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "relu", "gelu", "silu", "softplus"])
def test_grad_fn_is_named_like_torch(name):
    torch = require_torch()
    lt_fn, torch_fn, _ = activations()[name]
    x = learntorch.tensor([0.5, -1.5], requires_grad=True)
    t = torch.tensor([0.5, -1.5], requires_grad=True)
    assert lt_fn(x).grad_fn.name() == torch_fn(t).grad_fn.name()


# ---------------------------------------------------------------- clamp
BOUNDS = st.sampled_from([(-1.0, 1.0), (0, None), (None, 0.5), (-0.5, -0.5), (1.0, -1.0), (-2, 2)])


@given(a=arrays(elements=st.floats(-3, 3, width=32).filter(lambda v: v not in (-1, 0, 0.5, 1, -0.5, 2, -2))),
       bounds=BOUNDS)
def test_clamp_with_number_bounds_matches_torch(a, bounds):
    torch = require_torch()
    lo, hi = bounds
    check_against_torch(lambda x: learntorch.clamp(x, lo, hi), lambda x: torch.clamp(x, lo, hi), a)
    check_against_torch(lambda x: x.clamp(min=lo, max=hi), lambda x: x.clamp(min=lo, max=hi), a)
    check_against_torch(lambda x: learntorch.clip(x, lo, hi), lambda x: torch.clip(x, lo, hi), a)


def test_clamp_gradient_at_the_bounds_goes_to_the_input_like_torch():
    torch = require_torch()
    a = np.array([-1.0, 0.0, 1.0, 2.0, -3.0])
    for lo, hi in [(-1.0, 1.0), (0.0, None), (None, 1.0), (1.0, -1.0), (0.0, 0.0)]:
        check_against_torch(lambda x: learntorch.clamp(x, lo, hi),
                            lambda x: torch.clamp(x, lo, hi), a)


@st.composite
def clamp_tensors(draw):
    """x, min and max on a coarse grid (ties are common); the bounds broadcast to x's shape.

    (x itself is never the smaller operand: torch 2.13's backward fails on that case.)"""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    grid = st.integers(-2, 2).map(float)
    x = draw(arrays(shape=shapes.result_shape, elements=grid))
    return (x, *(draw(arrays(shape=s, elements=grid)) for s in shapes.input_shapes))


@given(xlh=clamp_tensors(), which=st.sampled_from(["both", "min", "max"]))
def test_clamp_with_tensor_bounds_matches_torch_including_bound_gradients(xlh, which):
    torch = require_torch()
    x, lo, hi = xlh
    if which == "both":
        check_against_torch(learntorch.clamp, torch.clamp, x, lo, hi)
    elif which == "min":
        check_against_torch(lambda x, lo: learntorch.clamp(x, min=lo),
                            lambda x, lo: torch.clamp(x, min=lo), x, lo)
    else:
        check_against_torch(lambda x, hi: learntorch.clamp(x, max=hi),
                            lambda x, hi: torch.clamp(x, max=hi), x, hi)


@given(xlh=clamp_tensors())
def test_clamp_with_tensor_bounds_gradient_matches_finite_differences(xlh):
    x, lo, hi = xlh
    x = x + 0.25  # off the grid of the bounds: no ties, so the derivative exists
    check_against_finite_differences(learntorch.clamp, x, lo, hi - 0.5)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.float16])
@pytest.mark.parametrize("bounds", [(0, 2), (0.5, None), (None, 1.5), (True, None)])
def test_clamp_result_dtype_matches_torch(dtype, bounds):
    torch = require_torch()
    a = np.array([-1, 0, 1, 3]).astype(dtype)
    try:
        torch.clamp(torch_tensor(a), *bounds)
    except RuntimeError as e:  # clamp of a bool tensor by a bool: not implemented in torch
        with pytest.raises(type(e)):
            learntorch.clamp(lt_tensor(a), *bounds)
        return
    check_against_torch(lambda x: learntorch.clamp(x, *bounds), lambda x: torch.clamp(x, *bounds), a)


def test_clamp_with_float64_tensor_bound_promotes_like_torch():
    torch = require_torch()
    x, lo = np.array([-1.0, 0.5, 2.0], dtype=np.float32), np.array([0.0, 0.0, 1.0])
    check_against_torch(lambda x, lo: learntorch.clamp(x, lo), lambda x, lo: torch.clamp(x, lo),
                        x, lo)


def test_clamp_propagates_nan_like_torch():
    torch = require_torch()
    a = np.array([np.nan, -5.0, 5.0])
    check_against_torch(lambda x: learntorch.clamp(x, -1, 1), lambda x: torch.clamp(x, -1, 1), a)
    check_against_torch(lambda x: learntorch.clamp(x, min=float("nan")),
                        lambda x: torch.clamp(x, min=float("nan")), a, grad=False)


def test_clamp_without_bounds_raises_like_torch():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        learntorch.clamp(learntorch.ones(2))


def test_clamp_with_unbroadcastable_bound_names_the_shapes():
    with pytest.raises(RuntimeError, match=r"\[2\].*\[3\]|\[3\].*\[2\]"):
        learntorch.clamp(learntorch.ones(2), min=learntorch.ones(3))


def test_clamp_grad_fn_names_match_torch():
    torch = require_torch()
    x, t = learntorch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    assert x.clamp(0, 1).grad_fn.name() == t.clamp(0, 1).grad_fn.name()
    assert x.clamp(learntorch.zeros(2)).grad_fn.name() == t.clamp(torch.zeros(2)).grad_fn.name()
