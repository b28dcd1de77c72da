"""Adaptive max pooling, the 1-D poolings and the second derivatives of every pooling,
against torch: values, argmax indices (ties, NaN), gradients, node names, errors, modules."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import assert_close, both_raise, check_against_torch, require_torch
from second_order import check_second_order_against_torch
from test_layers_oracle import strided

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def random(shape, dtype=np.float64, seed=0, ties=False):
    x = np.random.default_rng(seed).standard_normal(shape)
    return (np.round(x) if ties else x).astype(dtype)


def both(name, *args, **kwargs):
    torch = require_torch()
    return (lambda x: getattr(F, name)(x, *args, **kwargs),
            lambda x: getattr(torch.nn.functional, name)(x, *args, **kwargs))


def check_with_indices(name, x, *args, **kwargs):
    """Values, int64 indices and the input gradient of a pooling with return_indices."""
    torch = require_torch()
    a, b = learntorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, idx = getattr(F, name)(a, *args, return_indices=True, **kwargs)
    t_out, t_idx = getattr(torch.nn.functional, name)(b, *args, return_indices=True, **kwargs)
    assert_close(out, t_out, **TOL[np.float64], what="values")
    assert idx.dtype == learntorch.int64
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy(), err_msg="indices")
    g = random(tuple(t_out.shape), seed=5)
    out.backward(learntorch.tensor(g))
    t_out.backward(torch.tensor(g))
    assert_close(a.grad, b.grad, **TOL[np.float64], what="gradient")


# ---------------------------------------------------------------- adaptive max pooling
ADAPTIVE_MAX = [((2, 3, 7, 6), (3, 4)), ((2, 3, 7, 6), 1), ((1, 2, 3, 4), (5, 7)),  # overlapping
                ((3, 7, 6), (None, 2)), ((2, 2, 8, 8), 4)]


@pytest.mark.parametrize("shape, size", ADAPTIVE_MAX)
@pytest.mark.parametrize("ties", [False, True])
def test_adaptive_max_pool2d_values_indices_and_gradient_equal_torch(shape, size, ties):
    check_with_indices("adaptive_max_pool2d", random(shape, ties=ties), size)


@given(st.integers(1, 8), st.integers(1, 8), st.integers(1, 8), st.integers(1, 8),
       st.booleans())
def test_adaptive_max_pool2d_equals_torch_for_any_sizes(h, w, out_h, out_w, ties):
    x = strided(random((2, 2, h, w), ties=ties), "transposed")
    check_with_indices("adaptive_max_pool2d", x, (out_h, out_w))


def test_adaptive_max_pool2d_to_an_empty_size_gives_an_empty_result_and_a_zero_gradient():
    # (torch's backward refuses an empty output; the gradient of nothing is zero)
    torch = require_torch()
    x = learntorch.tensor(random((2, 3, 5, 5)), requires_grad=True)
    out = F.adaptive_max_pool2d(x, (0, 2))
    assert out.shape == tuple(torch.nn.functional.adaptive_max_pool2d(
        torch.tensor(random((2, 3, 5, 5))), (0, 2)).shape) == (2, 3, 0, 2)
    out.sum().backward()
    assert x.grad.shape == x.shape and not x.grad.numpy().any()


def test_adaptive_max_pool2d_nan_wins_the_last_nan_and_float32_equals_torch():
    x = random((1, 2, 5, 6), np.float32)
    x[0, 0, 0, 1] = x[0, 0, 1, 0] = np.nan
    torch = require_torch()
    out, idx = F.adaptive_max_pool2d(learntorch.tensor(x), 2, return_indices=True)
    t_out, t_idx = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


# ---------------------------------------------------------------- the 1-D poolings
@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 9), dict(kernel_size=2)),
    ((2, 3, 9), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ((3, 8), dict(kernel_size=(3,), stride=[1])),                                    # unbatched
])
def test_max_pool1d_equals_torch(shape, kwargs):
    check_with_indices("max_pool1d", random(shape, ties=True), **kwargs)
    check_against_torch(*both("max_pool1d", **kwargs), random(shape), **TOL[np.float64])


@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 9), dict(kernel_size=2)),
    ((2, 3, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                     count_include_pad=False)),
    ((3, 8), dict(kernel_size=3, padding=1)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool1d_equals_torch(shape, kwargs, dtype):
    check_against_torch(*both("avg_pool1d", **kwargs), random(shape, dtype), **TOL[dtype])


@pytest.mark.parametrize("shape, size", [((2, 3, 9), 4), ((3, 5), 7), ((2, 2, 6), 1)])
def test_adaptive_1d_poolings_equal_torch(shape, size):
    check_against_torch(*both("adaptive_avg_pool1d", size), random(shape), **TOL[np.float64])
    check_against_torch(*both("adaptive_max_pool1d", size), random(shape), **TOL[np.float64])
    check_with_indices("adaptive_max_pool1d", random(shape, ties=True), size)


def test_node_names_are_torchs():
    x = learntorch.randn(2, 3, 8, requires_grad=True)
    x4 = learntorch.randn(2, 3, 8, 8, requires_grad=True)
    for out in (F.max_pool1d(x, 2), F.avg_pool1d(x, 2), F.adaptive_avg_pool1d(x, 3),
                F.adaptive_max_pool1d(x, 3)):
        assert out.grad_fn.name() == "SqueezeBackward1"
    assert F.adaptive_max_pool2d(x4, 3).grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    for pool, name in ((lambda t: F.max_pool2d(t, 2), "MaxPool2DWithIndicesBackwardBackward0"),
                       (lambda t: F.avg_pool2d(t, 2), "AvgPool2DBackwardBackward0"),
                       (lambda t: F.adaptive_avg_pool2d(t, 3),
                        "AdaptiveAvgPool2DBackwardBackward0"),
                       (lambda t: F.adaptive_max_pool2d(t, 3),
                        "AdaptiveMaxPool2DBackwardBackward0")):
        y = pool(x4)
        gx, = learntorch.autograd.grad((y * y).sum(), x4, create_graph=True)
        assert gx.grad_fn.name() == name


# ---------------------------------------------------------------- second derivatives
@pytest.mark.parametrize("name, args, kwargs", [
    ("max_pool2d", (3,), dict(stride=2, padding=1)),
    ("max_pool2d", (2,), dict(stride=1, dilation=2, ceil_mode=True)),
    ("avg_pool2d", (3,), dict(stride=2, padding=1, count_include_pad=False, ceil_mode=True)),
    ("adaptive_avg_pool2d", ((3, 5),), {}),
    ("adaptive_max_pool2d", ((3, 4),), {}),
    ("max_pool1d", (3,), dict(stride=2, padding=1)),
])
def test_second_derivatives_equal_torch(name, args, kwargs):
    # x * x before the pooling: its second derivative is not zero
    ours, theirs = both(name, *args, **kwargs)
    shape = (2, 3, 7) if name.endswith("1d") else (2, 3, 7, 6)
    check_second_order_against_torch(lambda x: ours(x * x), lambda x: theirs(x * x),
                                     random(shape))


# ---------------------------------------------------------------- errors and modules
@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3, 7, 6), (3, 4, 5)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(7, 6), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3, 0, 4), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3, 4, 4, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(7), 3),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 3, 7), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 3, 7), (3, 2)),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(7), 3),
    lambda lib: lib.nn.functional.avg_pool1d(lib.ones(2, 3, 7), 3, padding=2),
])
def test_bad_arguments_raise_torchs_exception(call):
    assert both_raise(call)


@pytest.mark.parametrize("cls, args, kwargs, shape", [
    ("MaxPool1d", (3, 2, 1, 2, False, True), {}, (2, 3, 9)),
    ("AvgPool1d", (3, 2, 1, True, False), {}, (2, 3, 9)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool1d", (4,), {}, (3, 9)),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 3, 7, 6)),
    ("AdaptiveMaxPool2d", ((None, 2),), {}, (3, 7, 6)),
])
def test_modules_print_and_compute_like_torch(cls, args, kwargs, shape):
    torch = require_torch()
    ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    check_against_torch(ours, theirs, random(shape), **TOL[np.float64])


def test_modules_return_indices_like_torch():
    torch = require_torch()
    x = random((2, 3, 7, 6), ties=True)
    for cls in ("AdaptiveMaxPool2d",):
        out, idx = getattr(nn, cls)(3, return_indices=True)(learntorch.tensor(x))
        t_out, t_idx = getattr(torch.nn, cls)(3, return_indices=True)(torch.tensor(x))
        np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
        np.testing.assert_allclose(out.numpy(), t_out.numpy())
    out, idx = nn.MaxPool1d(2, return_indices=True)(learntorch.tensor(x[0]))
    t_out, t_idx = torch.nn.MaxPool1d(2, return_indices=True)(torch.tensor(x[0]))
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
