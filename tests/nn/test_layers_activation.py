"""Activation layers and their nn.functional forms, against torch."""
import warnings

import numpy as np
import pytest
from hypothesis import given

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import (both_raise, arrays, assert_close, check_against_finite_differences, check_against_torch,
                    require_torch)
from test_layers_oracle import compare_with_torch, strided

# (class name, constructor arguments): every activation layer, with non-default options too
LAYERS = [("ReLU", ()), ("ReLU", (True,)), ("LeakyReLU", ()), ("LeakyReLU", (0.2,)),
          ("LeakyReLU", (-0.5,)), ("LeakyReLU", (0.1, True)), ("GELU", ()), ("GELU", ("tanh",)),
          ("SiLU", ()), ("SiLU", (True,)), ("Softplus", ()), ("Softplus", (2, 10.0)),
          ("Tanh", ()), ("Sigmoid", ()), ("Softmax", (1,)), ("Softmax", (-1,)),
          ("LogSoftmax", (0,)), ("LogSoftmax", (1,))]


def sample(shape, dtype, seed=0):
    """Normal values with exact zeros among them (where the derivative rules branch)."""
    x = np.random.default_rng(seed).standard_normal(shape) * 2
    x.flat[::5] = 0.0
    return x.astype(dtype)


def pair(name, args):
    torch = require_torch()
    return getattr(nn, name)(*args), getattr(torch.nn, name)(*args)


@pytest.mark.parametrize("name, args", LAYERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_layer_forward_and_gradient_equal_torch(name, args, dtype):
    lt, t = pair(name, args)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    x = sample((4, 6), dtype)
    if name in ("ReLU", "LeakyReLU", "SiLU") and args and args[-1] is True:
        return _compare_inplace(lt, t, x)
    compare_with_torch(lt, t, strided(x, "transposed"), **tol)


def _compare_inplace(lt, t, x):
    """An in-place layer on a non-leaf: same values, same tensor returned, same gradients."""
    torch = require_torch()
    a, b = learntorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a1, b1 = a * 1, b * 1
    out, expected = lt(a1), t(b1)
    assert out is a1 and expected is b1
    assert out.grad_fn.name() == expected.grad_fn.name()
    assert_close(out, expected)
    g = np.random.default_rng(0).standard_normal(x.shape).astype(x.dtype)
    out.backward(learntorch.tensor(g))
    expected.backward(torch.tensor(g))
    assert_close(a.grad, b.grad)


@pytest.mark.parametrize("name, args", LAYERS)
def test_activation_layer_repr_and_empty_state_dict_match_torch(name, args):
    lt, t = pair(name, args)
    assert repr(lt) == repr(t)
    assert list(lt.state_dict()) == list(t.state_dict()) == []


@pytest.mark.parametrize("name", ["Tanh", "Sigmoid"])
def test_layers_without_options_refuse_arguments_like_torch(name):
    torch = require_torch()
    with pytest.raises(TypeError):
        getattr(torch.nn, name)(3)
    with pytest.raises(TypeError):
        getattr(nn, name)(3)


# ---------------------------------------------------------------- leaky_relu, the new Function
@given(arrays(dtype=np.float64, max_dims=3))
def test_f_leaky_relu_equals_torch_on_strided_inputs(x):
    torch = require_torch()
    for slope in (0.01, 0.3, -1.5):
        check_against_torch(lambda t: F.leaky_relu(t, slope),
                            lambda t: torch.nn.functional.leaky_relu(t, slope), x,
                            rtol=1e-12, atol=1e-12)


def test_f_leaky_relu_gradient_at_zero_is_the_slope_like_torch():
    x = learntorch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    F.leaky_relu(x, 0.1).sum().backward()
    assert np.allclose(x.grad.numpy(), [0.1, 0.1, 1.0])


def test_f_leaky_relu_gradient_equals_finite_differences():
    x = np.array([[-2.0, -0.3, 0.4], [1.5, -1e-3, 2e-3]])
    check_against_finite_differences(lambda t: F.leaky_relu(t, 0.2), x)


def test_f_leaky_relu_second_derivative_equals_torch():
    torch = require_torch()
    x = sample((3, 4), np.float64)
    results = []
    for lib in (learntorch, torch):
        t = lib.tensor(x, requires_grad=True)
        y = (lib.nn.functional.leaky_relu(t, 0.2) ** 3).sum()
        g, = lib.autograd.grad(y, t, create_graph=True)
        (g * g).sum().backward()
        results.append(t.grad)
    assert_close(*results, rtol=1e-12, atol=1e-12)


def test_f_leaky_relu_keeps_float16_and_float32_rounding_like_torch():
    torch = require_torch()
    for dtype in (np.float16, np.float32):
        x = sample((50,), dtype)
        check_against_torch(lambda t: F.leaky_relu(t, 0.01),
                            lambda t: torch.nn.functional.leaky_relu(t, 0.01), x, grad=False,
                            rtol=0, atol=0)


def test_f_leaky_relu_node_names_match_torch():
    x = learntorch.randn(3, requires_grad=True)
    assert F.leaky_relu(x).grad_fn.name() == "LeakyReluBackward0"
    assert F.leaky_relu(x * 1, inplace=True).grad_fn.name() == "LeakyReluBackward1"


# ---------------------------------------------------------------- in place and errors

@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.relu(lib.randn(3, requires_grad=True), inplace=True),
    lambda lib: lib.nn.functional.leaky_relu(lib.randn(3, requires_grad=True), inplace=True),
    lambda lib: lib.nn.functional.silu(lib.randn(3, requires_grad=True), inplace=True),
])
def test_inplace_activation_of_a_leaf_that_requires_grad_is_refused_like_torch(call):
    assert "leaf" in both_raise(call)


def test_inplace_leaky_relu_with_negative_slope_cannot_backward_like_torch():
    def call(lib):
        x = lib.randn(3, requires_grad=True)
        lib.nn.functional.leaky_relu(x * 1, -0.1, inplace=True).sum().backward()
    assert "negative slope" in both_raise(call)


def test_inplace_activation_without_autograd_writes_into_the_input():
    for fn in (F.relu, F.silu, lambda t, inplace: F.leaky_relu(t, 0.2, inplace)):
        x = learntorch.tensor([-1.0, 0.5])
        expected = fn(x.clone(), inplace=False).numpy()
        version = x._version
        assert fn(x, inplace=True) is x
        assert np.allclose(x.numpy(), expected) and x._version > version


@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.functional.leaky_relu(lib.tensor([1, -2])), ["leaky_relu", "int64"]),
    (lambda lib: lib.nn.functional.leaky_relu(lib.tensor([True])), ["leaky_relu", "bool"]),
    (lambda lib: lib.nn.functional.relu([1.0]), ["Tensor", "list"]),
    (lambda lib: lib.nn.functional.leaky_relu([1.0]), ["Tensor", "list"]),
    (lambda lib: lib.nn.GELU("foo")(lib.randn(3)), ["none", "tanh"]),
    (lambda lib: lib.nn.Softmax(dim=5)(lib.randn(2, 3, 4)), ["range", "5"]),
])
def test_activation_errors_have_torch_type(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message


def test_f_softmax_of_a_list_is_a_type_error():
    # (torch 2.13 raises AttributeError: 'list' object has no attribute 'softmax')
    for fn in (F.softmax, F.log_softmax):
        with pytest.raises(TypeError, match="must be Tensor, not list"):
            fn([1.0], dim=0)


# ---------------------------------------------------------------- softmax's implicit dim
@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 4), (2, 3, 4, 2)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_without_dim_picks_torchs_dim_and_warns(shape, fn):
    torch = require_torch()
    x = sample(shape, np.float32)
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {fn}") as record:
        mine = getattr(F, fn)(learntorch.tensor(x))
    assert record[0].filename == __file__  # the warning points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn.functional, fn)(torch.tensor(x))
    assert_close(mine, theirs)


def test_softmax_layer_without_dim_warns_at_the_calling_line():
    layer = nn.LogSoftmax()
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax") as record:
        layer(learntorch.randn(2, 3))
    assert record[0].filename == __file__


def test_f_softmax_dtype_argument_equals_torch():
    torch = require_torch()
    x = sample((3, 4), np.float32)
    check_against_torch(lambda t: F.softmax(t, dim=1, dtype=learntorch.float64),
                        lambda t: torch.nn.functional.softmax(t, dim=1, dtype=torch.float64), x)
    check_against_torch(lambda t: F.log_softmax(t, 0, dtype=learntorch.float64),
                        lambda t: torch.nn.functional.log_softmax(t, 0, dtype=torch.float64), x)
