"""The activations a course program reaches for beyond relu/tanh/sigmoid, against torch.

elu, selu, celu, hardtanh, relu6, hardsigmoid, hardswish, mish, logsigmoid, softsign,
tanhshrink, prelu and softmin: forward, gradient (on strided inputs, with values at the
branch points), second derivatives, the graph nodes torch records, in-place forms,
float16, the layers' repr, and torch's errors.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import arrays, assert_close, both_raise, check_against_torch, require_torch

# name -> (call with the library's functional module, kind of node torch records)
CALLS = {
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, alpha=0.3),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, alpha=0.7),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_bounds": lambda F, x: F.hardtanh(x, -0.5, 2.0),
    "relu6": lambda F, x: F.relu6(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "mish": lambda F, x: F.mish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "softmin": lambda F, x: F.softmin(x, dim=-1),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
}
# where the piecewise ones branch: torch's choice at each boundary must be ours
BRANCH_POINTS = [0.0, -3.0, 3.0, -1.0, 1.0, 6.0, -0.5, 2.0, 30.0, -30.0]


def sample(shape, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    x.flat[:len(BRANCH_POINTS)] = BRANCH_POINTS[:x.size]
    return x.astype(dtype)


def torch_functional():
    return require_torch().nn.functional


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_forward_and_gradient_equal_torch_at_branch_points_too(name, dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    check_against_torch(lambda x: CALLS[name](F, x), lambda x: CALLS[name](torch_functional(), x),
                        sample((4, 6), dtype), **tol)


@pytest.mark.parametrize("name", sorted(CALLS))
@given(x=arrays(dtype=np.float64, max_dims=3))
def test_strided_inputs_of_any_shape_equal_torch(name, x):
    check_against_torch(lambda a: CALLS[name](F, a), lambda a: CALLS[name](torch_functional(), a),
                        np.asarray(x * 4), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_node_names_and_second_derivatives_equal_torch(name):
    torch = require_torch()
    x = sample((3, 5), np.float64, seed=1)
    results = []
    for lib, fn in ((learntorch, F), (torch, torch.nn.functional)):
        a = lib.tensor(x, requires_grad=True)
        y = CALLS[name](fn, a)
        g, = lib.autograd.grad((y * y).sum(), a, create_graph=True)
        if name == "hardsigmoid" and lib is torch:  # "derivative ... is not implemented"
            # g = 2 y f' with f' constant on each piece: d(sum g^2)/da = 2 g * 2 f'^2
            sixth = float(np.float32(1) / np.float32(6))  # (torch's 1.0f / 6.0f)
            gg = 4 * g * sixth ** 2 * ((a > -3) & (a < 3))
        else:
            gg, = lib.autograd.grad((g * g).sum(), a, allow_unused=True)
        results.append((y.grad_fn.name(), g.requires_grad, g, gg))
    (name_lt, req_lt, g_lt, gg_lt), (name_th, req_th, g_th, gg_th) = results
    assert name_lt == name_th
    assert req_lt and req_th  # a gradient penalty can differentiate it again
    assert_close(g_lt, g_th, rtol=1e-10, atol=1e-12)
    assert_close(gg_lt, gg_th, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "hardtanh", "relu6", "hardsigmoid",
                                  "hardswish", "mish", "leaky_relu"])
def test_inplace_forms_write_into_the_input_with_torchs_graph(name):
    torch = require_torch()
    x = sample((3, 4), np.float32, seed=2)
    out = []
    for lib in (learntorch, torch):
        a = lib.tensor(x, requires_grad=True)
        b = a * 1
        fn = getattr(lib.nn.functional, name)
        result = fn(b, 0.2, inplace=True) if name == "leaky_relu" else fn(b, inplace=True)
        assert result is b
        result.sum().backward()
        out.append((result.grad_fn.name(), result.detach(), a.grad))
    assert out[0][0] == out[1][0]
    assert_close(out[0][1], out[1][1])
    assert_close(out[0][2], out[1][2])


def test_inplace_elu_with_a_negative_alpha_cannot_backward_like_torch():
    def call(lib):
        b = lib.ones(3, requires_grad=True) * -1
        lib.nn.functional.elu(b, alpha=-1.0, inplace=True).sum().backward()
    assert "negative slope" in both_raise(call)


@pytest.mark.parametrize("name", ["elu", "selu", "mish", "hardswish", "hardsigmoid",
                                  "logsigmoid", "hardtanh"])
def test_float16_is_computed_in_float32_and_rounded_once_like_torch(name):
    torch = require_torch()
    x = sample((50,), np.float16, seed=3)
    fn = CALLS[name]
    mine, theirs = fn(F, learntorch.tensor(x)), fn(torch.nn.functional, torch.tensor(x))
    assert mine.dtype == learntorch.float16
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("weight, shape", [([0.25], (2, 3, 4)), ([0.1, -0.3, 2.0], (2, 3, 4)),
                                           ([0.5, 0.2], (5, 2)), ([0.3], (4,)), ([0.3], ())])
def test_prelu_forward_and_both_gradients_equal_torch(weight, shape):
    torch = require_torch()
    x = np.random.default_rng(4).standard_normal(shape)
    check_against_torch(F.prelu, torch.nn.functional.prelu, x, np.array(weight),
                        rtol=1e-12, atol=1e-12)


def test_prelu_layer_learns_its_slopes_with_torchs_shapes_and_repr():
    torch = require_torch()
    mine, theirs = nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    assert repr(mine) == repr(theirs) == "PReLU(num_parameters=3)"
    assert list(mine.state_dict()) == ["weight"]
    x = np.random.default_rng(5).standard_normal((2, 3, 4)).astype(np.float32)
    ours, ref = mine(learntorch.tensor(x)), theirs(torch.tensor(x))
    ours.sum().backward()
    ref.sum().backward()
    assert_close(ours, ref)
    assert_close(mine.weight.grad, theirs.weight.grad)


@pytest.mark.parametrize("name, args", [("ELU", ()), ("ELU", (0.5, True)), ("SELU", ()),
                                        ("SELU", (True,)), ("CELU", (2.0,)), ("Hardtanh", ()),
                                        ("Hardtanh", (-2.0, 3.0, True)), ("ReLU6", ()),
                                        ("ReLU6", (True,)), ("Hardsigmoid", ()),
                                        ("Hardswish", ()), ("Mish", ()), ("Mish", (True,)),
                                        ("LogSigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()),
                                        ("Softmin", (1,)), ("PReLU", ())])
def test_layers_repr_and_output_equal_torch(name, args):
    torch = require_torch()
    mine, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mine) == repr(theirs)
    x = sample((3, 4), np.float32, seed=6)
    assert_close(mine(learntorch.tensor(x)), theirs(torch.tensor(x)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.celu(lib.ones(2), alpha=0.0),
    lambda lib: lib.nn.functional.hardtanh(lib.ones(2), 2.0, 1.0),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.nn.functional.elu(lib.tensor([1, 2])),
    lambda lib: lib.nn.functional.logsigmoid(lib.tensor([1, 2])),
    lambda lib: lib.nn.functional.hardswish(lib.tensor([1, 2])),
    lambda lib: lib.nn.functional.mish(lib.tensor([1, 2])),
    lambda lib: lib.nn.functional.elu([1.0, 2.0]),
    lambda lib: lib.nn.Hardtanh(1.0, 1.0),
], ids=["celu_alpha_0", "hardtanh_bounds", "prelu_channels", "elu_int", "logsigmoid_int",
        "hardswish_int", "mish_int", "elu_list", "hardtanh_layer_bounds"])
def test_errors_have_torchs_type(call):
    both_raise(call)


def test_hardtanh_and_relu6_of_integers_stay_integers_like_torch():
    torch = require_torch()
    for fn in ("hardtanh", "relu6"):
        mine = getattr(F, fn)(learntorch.tensor([1, 7, -3]))
        theirs = getattr(torch.nn.functional, fn)(torch.tensor([1, 7, -3]))
        assert mine.dtype == learntorch.int64
        assert mine.tolist() == theirs.tolist()


@given(st.sampled_from(sorted(CALLS)))
def test_a_learners_backend_computes_forward_and_backward(name):
    """Every array operation of these activations goes through ``backends.current``."""
    calls = []

    class Spy(learntorch.backends.NumpyBackend):
        pass

    for method in ("leaky_relu", "leaky_relu_backward", "elu", "elu_backward", "hardtanh",
                   "hardtanh_backward", "hardsigmoid", "hardsigmoid_backward", "hardswish",
                   "hardswish_backward", "log_sigmoid", "mish"):
        def spy(self, *args, _method=method):
            calls.append(_method)
            return getattr(learntorch.backends.NumpyBackend, _method)(self, *args)
        setattr(Spy, method, spy)
    x = learntorch.tensor(sample((2, 3), np.float64), requires_grad=True)
    with learntorch.backends.use(Spy()):
        CALLS[name](F, x).sum().backward()
    families = {"elu": "elu", "elu_alpha": "elu", "selu": "elu", "celu": "elu",
                "hardtanh": "hardtanh", "hardtanh_bounds": "hardtanh", "relu6": "hardtanh",
                "hardsigmoid": "hardsigmoid", "hardswish": "hardswish", "leaky_relu": "leaky_relu"}
    if name in families:
        assert calls == [families[name], families[name] + "_backward"]
    elif name in ("mish", "logsigmoid"):
        assert calls[0] == {"mish": "mish", "logsigmoid": "log_sigmoid"}[name]
