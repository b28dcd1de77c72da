"""nn.Linear, F.linear, nn.Identity, nn.Flatten, nn.Unflatten, and a small MLP, against torch."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import (both_raise, arrays, assert_close, check_against_finite_differences, check_against_torch,
                    require_torch)
from test_layers_oracle import compare_with_torch, copy_from_torch, strided

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def random(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- Linear against torch
@pytest.mark.parametrize("batch", [(), (5,), (2, 5), (2, 1, 3)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_forward_and_gradients_equal_torch(batch, bias, dtype):
    torch = require_torch()
    t = torch.nn.Linear(3, 4, bias=bias)
    lt = nn.Linear(3, 4, bias=bias)
    if dtype == np.float64:
        t, lt = t.double(), lt.double()
    compare_with_torch(lt, t, random(batch + (3,), dtype), **TOL[dtype])


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_linear_on_non_contiguous_input_equals_torch(layout):
    torch = require_torch()
    x = strided(random((6, 5)), layout)
    compare_with_torch(nn.Linear(5, 3), torch.nn.Linear(5, 3), x)


def test_linear_on_empty_batch_and_zero_features_equals_torch():
    torch = require_torch()
    compare_with_torch(nn.Linear(3, 2), torch.nn.Linear(3, 2), random((0, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn that initialising a (2, 0) weight is a no-op
        lt, t = nn.Linear(0, 2), torch.nn.Linear(0, 2)
    # nothing to copy: the weight is empty and both biases are U(-0, 0) = 0
    compare_with_torch(lt, t, random((4, 0)), copy=False)


def test_linear_runs_on_both_backends(backend):
    torch = require_torch()
    compare_with_torch(nn.Linear(4, 3), torch.nn.Linear(4, 3), random((2, 6, 4)))


@given(arrays(dtype=np.float64, min_dims=1, max_dims=3), st.integers(1, 3), st.booleans())
def test_f_linear_equals_torch_on_any_batch_shape(x, out_features, with_bias):
    torch = require_torch()
    rng = np.random.default_rng(x.size)
    w = rng.standard_normal((out_features, x.shape[-1]))
    b = rng.standard_normal(out_features)
    if with_bias:
        check_against_torch(F.linear, torch.nn.functional.linear, x, w, b, rtol=1e-12, atol=1e-12)
    else:
        check_against_torch(F.linear, torch.nn.functional.linear, x, w, rtol=1e-12, atol=1e-12)


def test_f_linear_gradients_equal_finite_differences():
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    check_against_finite_differences(F.linear, x, w, b)


def test_f_linear_broadcasts_a_bias_of_the_output_shape_and_a_weight_vector_like_torch():
    torch = require_torch()
    x, w = random((2, 3)), random((4, 3), seed=1)
    check_against_torch(F.linear, torch.nn.functional.linear, x, w, random((2, 4), seed=2))
    check_against_torch(F.linear, torch.nn.functional.linear, x, w, random((2, 1), seed=2))
    check_against_torch(F.linear, torch.nn.functional.linear, x, random(3, seed=3))
    check_against_torch(F.linear, torch.nn.functional.linear, random(3), random(3, seed=3))


def test_f_linear_second_derivatives_equal_torch():
    torch = require_torch()
    x, w, b = random((3, 4), np.float64), random((2, 4), np.float64, 1), random(2, np.float64, 2)
    results = []
    for lib in (learntorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = lib.nn.functional.linear(*xs).tanh().sum()
        gx, gw = lib.autograd.grad(y, xs[:2], create_graph=True)
        ((gx ** 2).sum() + (gw ** 3).sum()).backward()
        results.append([t.grad for t in xs])
    for mine, theirs, name in zip(*results, ("x", "weight", "bias")):
        assert_close(mine, theirs, 1e-10, 1e-10, f"second derivative w.r.t. {name}")


def test_f_linear_is_one_graph_node_with_torch_name():
    x = learntorch.randn(2, 3, requires_grad=True)
    layer = nn.Linear(3, 4)
    y = layer(x)
    assert y.grad_fn.name() == "LinearBackward0"
    # its inputs are the three leaves directly: no transpose or add nodes in between
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 3


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(4, 5)), ["2x3", "5x4"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(6, 2, 3), lib.randn(4, 5)), ["12x3"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(4, 3).double()),
     ["float32", "float64"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(4, 3),
                                          lib.randn(4).double()), ["float64", "float32"]),
    (lambda lib: lib.nn.Linear(3, 4)(lib.randint(0, 3, (2, 3))), ["int64", "float32"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(4, 3), lib.randn(5)),
     ["[5]", "[2, 4]"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(()), lib.randn(4, 3)), ["0D"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(2, 4, 3)), ["3D"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(3), lib.randn(())),
     ["matrix"]),
    (lambda lib: lib.nn.functional.linear([1.0, 2.0], lib.randn(4, 2)), ["input", "list"]),
    (lambda lib: lib.nn.functional.linear(lib.randn(2, 3), lib.randn(4, 3), 1.0),
     ["bias", "float"]),
    (lambda lib: lib.nn.Linear(3, 4, dtype=lib.int64), ["floating point"]),
])
def test_linear_errors_have_torch_type_and_name_the_problem(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message


# ---------------------------------------------------------------- the module
def test_linear_repr_state_dict_and_parameter_shapes_match_torch():
    torch = require_torch()
    for kwargs in ({}, {"bias": False}):
        lt, t = nn.Linear(3, 4, **kwargs), torch.nn.Linear(3, 4, **kwargs)
        assert repr(lt) == repr(t)
        assert list(lt.state_dict()) == list(t.state_dict())
        assert [(n, tuple(p.shape)) for n, p in lt.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()]
        assert (lt.in_features, lt.out_features) == (t.in_features, t.out_features)
        assert (lt.bias is None) == (t.bias is None)


def test_linear_dtype_argument_makes_parameters_of_that_dtype():
    layer = nn.Linear(3, 4, dtype=learntorch.float64)
    assert layer.weight.dtype is learntorch.float64 and layer.bias.dtype is learntorch.float64
    assert layer(learntorch.randn(2, 3, dtype=learntorch.float64)).dtype is learntorch.float64


def test_linear_default_init_is_uniform_within_one_over_sqrt_fan_in():
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for p in (layer.weight, layer.bias):
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound  # never outside the bound
    w = layer.weight.detach().numpy()
    assert np.abs(w).max() > 0.999 * bound  # and filling it: 120000 draws reach its edge
    # U(-b, b) has mean 0 and variance b^2 / 3
    assert abs(w.mean()) < 5 * bound / math.sqrt(3 * w.size)
    assert w.var() == pytest.approx(bound ** 2 / 3, rel=0.02)
    assert layer.bias.detach().numpy().std() > 0  # the bias is random too, not zeros


def test_linear_init_is_reproducible_from_the_seed_and_reset_parameters_redraws():
    learntorch.manual_seed(7)
    a = nn.Linear(5, 3)
    learntorch.manual_seed(7)
    b = nn.Linear(5, 3)
    assert np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    assert np.array_equal(a.bias.detach().numpy(), b.bias.detach().numpy())
    before = a.weight.detach().numpy().copy()
    a.reset_parameters()
    assert not np.array_equal(before, a.weight.detach().numpy())
    assert a.weight.is_leaf and a.weight.requires_grad


def test_linear_zero_in_features_warns_like_torch_and_zeros_the_bias():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        layer = nn.Linear(0, 3)
    assert tuple(layer.weight.shape) == (3, 0)
    assert np.array_equal(layer.bias.detach().numpy(), np.zeros(3, np.float32))


# ---------------------------------------------------------------- Identity, Flatten, Unflatten
def test_identity_returns_its_input_and_ignores_arguments():
    torch = require_torch()
    x = learntorch.randn(2, 3)
    layer = nn.Identity(54, unused=0.1)
    assert layer(x) is x
    assert repr(layer) == repr(torch.nn.Identity(54, unused=0.1)) == "Identity()"
    assert list(layer.state_dict()) == []


@pytest.mark.parametrize("args", [(), (0,), (0, 2), (2, 3), (-3, -2)])
def test_flatten_equals_torch(args):
    torch = require_torch()
    lt, t = nn.Flatten(*args), torch.nn.Flatten(*args)
    assert repr(lt) == repr(t)
    compare_with_torch(lt, t, strided(random((2, 3, 4, 5)), "transposed"))


@pytest.mark.parametrize("dim, sizes", [(1, (2, 3)), (-1, [3, -1]), (0, (1, 6)), (1, [6])])
def test_unflatten_equals_torch(dim, sizes):
    torch = require_torch()
    lt, t = nn.Unflatten(dim, sizes), torch.nn.Unflatten(dim, sizes)
    assert repr(lt) == repr(t)
    x = random((6, 6)) if dim == 0 else random((4, 6))
    compare_with_torch(lt, t, x)


@pytest.mark.parametrize("sizes", [(2, 3.0), 6, "23"])
def test_unflatten_refuses_sizes_that_are_not_ints_like_torch(sizes):
    message = both_raise(lambda lib: lib.nn.Unflatten(1, sizes))
    assert "unflattened_size must be" in message


# ---------------------------------------------------------------- an MLP end to end
def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(20, 16), lib.nn.ReLU(), lib.nn.Linear(16, 10),
                             lib.nn.LogSoftmax(dim=1))


def test_mlp_forward_backward_equals_torch_with_copied_weights():
    torch = require_torch()
    lt, t = mlp(learntorch), mlp(torch)
    assert repr(lt) == repr(t)
    assert list(lt.state_dict()) == list(t.state_dict())
    compare_with_torch(lt, t, random((32, 20)), rtol=1e-5, atol=1e-5)


def test_mlp_training_steps_follow_torch():
    """Three plain SGD steps on the same batch: the losses and weights stay equal."""
    torch = require_torch()
    lt, t = mlp(learntorch), mlp(torch)
    copy_from_torch(lt, t)
    x, labels = random((16, 20)), np.random.default_rng(1).integers(0, 10, 16)
    for _ in range(3):
        losses = []
        for lib, model in ((learntorch, lt), (torch, t)):
            out = model(lib.tensor(x))
            loss = -out[lib.arange(16), lib.tensor(labels)].mean()
            model.zero_grad()
            loss.backward()
            with lib.no_grad():
                for p in model.parameters():
                    p -= 0.5 * p.grad
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    for (name, p), q in zip(lt.named_parameters(), t.parameters()):
        assert_close(p, q, 1e-5, 1e-5, name)


@pytest.mark.parametrize("changed", ["input", "weight"])
def test_an_operand_whose_gradient_is_not_needed_may_change_in_place_after_like_torch(changed):
    """Linear saves the input only for the weight's gradient and the weight only for the
    input's: changing the other in place before backward is no error (torch's rule)."""
    torch = require_torch()
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(2)
    grads = []
    for lib in (learntorch, torch):
        # the changed operand is read only by the gradient of the other, which needs none
        xt = lib.tensor(x, requires_grad=changed == "input")
        wt = lib.tensor(w, requires_grad=changed == "weight")
        bt = lib.tensor(b, requires_grad=True)
        out = lib.nn.functional.linear(xt, wt, bt)
        with lib.no_grad():
            (xt if changed == "input" else wt).add_(1.0)
        out.sum().backward()
        grads.append([t.grad.numpy() for t in (xt, wt, bt) if t.requires_grad])
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_an_operand_whose_gradient_is_needed_is_checked_for_in_place_changes():
    x = learntorch.randn(3, 4, requires_grad=True)
    w = learntorch.randn(2, 4, requires_grad=True)
    out = learntorch.nn.functional.linear(x, w)
    with learntorch.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
