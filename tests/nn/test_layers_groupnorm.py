"""GroupNorm and F.group_norm against torch (values, gradients, second derivatives, errors,
module), and the second derivatives of all three normalisations through every input."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import both_raise, check_against_torch, require_torch
from second_order import check_second_order_against_torch
from test_layers_oracle import compare_with_torch, strided

F32 = dict(rtol=1e-5, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-12)


def random(shape, dtype=np.float64, seed=0, scale=1.0, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(dtype)


def group_norm_pair(groups, **kwargs):
    torch = require_torch()
    return (lambda *a: F.group_norm(a[0], groups, *a[1:], **kwargs),
            lambda *a: torch.nn.functional.group_norm(a[0], groups, *a[1:], **kwargs))


CASES = [((4, 6, 5, 5), 3), ((2, 6, 7), 2), ((3, 4), 2), ((2, 8, 2, 3, 2), 1), ((2, 6, 3, 3), 6)]


@pytest.mark.parametrize("shape, groups", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_group_norm_values_and_gradients_equal_torch(shape, groups, dtype):
    c = shape[1]
    x = strided(random(shape, dtype, scale=2.0, shift=1.0), "transposed")
    check_against_torch(*group_norm_pair(groups), x, random(c, dtype, 1, 0.3, 1.0),
                        random(c, dtype, 2), **(F32 if dtype == np.float32 else F64))
    check_against_torch(*group_norm_pair(groups, eps=1e-3), x,
                        **(F32 if dtype == np.float32 else F64))


def test_group_norm_of_half_precision_equals_torch():
    torch = require_torch()
    x = random((2, 4, 3, 3), np.float16)
    out = F.group_norm(learntorch.tensor(x), 2)
    expected = torch.nn.functional.group_norm(torch.tensor(x), 2)
    assert out.dtype == learntorch.float16
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-2, atol=1e-2)


def test_group_norm_of_an_empty_batch_is_empty():
    x = learntorch.zeros(0, 6, 3, requires_grad=True)
    out = F.group_norm(x, 3)
    assert out.shape == (0, 6, 3)
    out.sum().backward()
    assert x.grad.shape == (0, 6, 3)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 4, 4), 4),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 4, 4), 3, lib.ones(5)),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 4, 4), 3, lib.ones(6), lib.ones(5)),
    lambda lib: lib.nn.functional.group_norm(lib.ones(4), 2),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 4, 4, dtype=lib.int64), 3),
    lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 4, 4), 3.0),
    lambda lib: lib.nn.GroupNorm(4, 6),
])
def test_bad_arguments_raise_torchs_exception(call):
    assert both_raise(call)


@pytest.mark.parametrize("kwargs", [{}, dict(affine=False), dict(eps=1e-3), dict(bias=False)])
def test_module_prints_keeps_parameters_and_computes_like_torch(kwargs):
    torch = require_torch()
    ours, theirs = nn.GroupNorm(3, 6, **kwargs), torch.nn.GroupNorm(3, 6, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    compare_with_torch(ours, theirs, random((2, 6, 4, 3), np.float32), **F32)
    ours.eval(), theirs.eval()  # no running state: the same in eval mode
    compare_with_torch(ours, theirs, random((2, 6, 4, 3), np.float32, seed=1), copy=False, **F32)


def test_node_names_are_torchs():
    x = learntorch.randn(2, 6, 3, requires_grad=True)
    y = F.group_norm(x, 3, learntorch.ones(6, requires_grad=True))
    assert y.grad_fn.name() == "NativeGroupNormBackward0"
    gx, = learntorch.autograd.grad((y * y * y).sum(), x, create_graph=True)
    assert "NativeGroupNormBackwardBackward0" in _names_below(gx.grad_fn)
    y = F.batch_norm(x, None, None, training=True)
    gx, = learntorch.autograd.grad((y * y * y).sum(), x, create_graph=True)
    assert "NativeBatchNormBackwardBackward0" in _names_below(gx.grad_fn)


def _names_below(node, depth=4):
    names = {node.name()}
    if depth:
        for child, _ in node.next_functions:
            if child is not None:
                names |= _names_below(child, depth - 1)
    return names


# ---------------------------------------------------------------- second derivatives
def test_group_norm_second_derivatives_through_every_input_equal_torch():
    check_second_order_against_torch(*group_norm_pair(3), random((2, 6, 4), scale=2.0),
                                     random(6, seed=1, shift=1.0), random(6, seed=2))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_second_derivatives_through_every_input_equal_torch(training):
    torch = require_torch()
    m, v = random(3, seed=3), np.abs(random(3, seed=4)) + 0.5

    def ours(x, w, b):
        return F.batch_norm(x, learntorch.tensor(m), learntorch.tensor(v), w, b, training)

    def theirs(x, w, b):
        return torch.nn.functional.batch_norm(x, torch.tensor(m), torch.tensor(v), w, b,
                                              training)
    check_second_order_against_torch(ours, theirs, random((4, 3, 5), scale=2.0),
                                     random(3, seed=1, shift=1.0), random(3, seed=2))


def test_layer_norm_second_derivatives_through_every_input_equal_torch():
    torch = require_torch()
    check_second_order_against_torch(
        lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
        lambda x, w, b: torch.nn.functional.layer_norm(x, (3, 4), w, b),
        random((2, 3, 4), scale=2.0), random((3, 4), seed=1, shift=1.0), random((3, 4), seed=2))
