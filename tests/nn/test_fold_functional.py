"""F.unfold / F.fold and nn.Unfold / nn.Fold against torch: values, gradients (each is the
other's backward), second derivatives, repr and torch's errors."""
import numpy as np
import pytest
from hypothesis import assume, given

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import both_raise, check_against_torch, require_torch
from second_order import check_second_order_against_torch
from test_layers_oracle import strided
from window_geometries import window_geometries

TOL = dict(rtol=1e-12, atol=1e-12)


def random(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pair(name, *args, **kwargs):
    torch = require_torch()
    return (lambda x: getattr(F, name)(x, *args, **kwargs),
            lambda x: getattr(torch.nn.functional, name)(x, *args, **kwargs))


UNFOLD_CASES = [
    ((2, 3, 5, 5), dict(kernel_size=2)),
    ((2, 3, 7, 6), dict(kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))),
    ((3, 6, 5), dict(kernel_size=3, padding=1)),                      # unbatched
    ((1, 2, 4, 4), dict(kernel_size=4)),                              # one window
    ((0, 2, 4, 4), dict(kernel_size=2)),                              # empty batch
]


@pytest.mark.parametrize("shape, kwargs", UNFOLD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unfold_values_and_gradient_equal_torch(shape, kwargs, dtype):
    ours, theirs = pair("unfold", **kwargs)
    check_against_torch(ours, theirs, random(shape, dtype), rtol=1e-6, atol=1e-6)


FOLD_CASES = [
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2)),
    ((2, 12, 9), dict(output_size=(6, 5), kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0),
                      stride=(2, 1))),
    ((12, 16), dict(output_size=5, kernel_size=2)),                   # unbatched
    ((1, 8, 4), dict(output_size=(4, 4), kernel_size=2, stride=2)),  # windows side by side
]


@pytest.mark.parametrize("shape, kwargs", FOLD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fold_values_and_gradient_equal_torch(shape, kwargs, dtype):
    ours, theirs = pair("fold", **kwargs)
    check_against_torch(ours, theirs, random(shape, dtype), rtol=1e-6, atol=1e-6)


@given(window_geometries())
def test_unfold_then_fold_equal_torch_on_random_geometries(case):
    g, planes = case  # (torch pads both sides by g.pad: the windows may differ from g.out)
    assume(all(n + 2 * p >= d * (k - 1) + 1
               for n, p, d, k in zip(g.size, g.pad, g.dilation, g.kernel)))
    kwargs = dict(kernel_size=g.kernel, dilation=g.dilation, padding=g.pad, stride=g.stride)
    ours, theirs = pair("unfold", **kwargs)
    out = check_against_torch(ours, theirs, strided(random(planes + g.size), "transposed"), **TOL)
    ours, theirs = pair("fold", g.size, **kwargs)
    check_against_torch(ours, theirs, random(tuple(out.shape), seed=1), **TOL)


def test_second_derivatives_equal_torch():
    torch = require_torch()
    kwargs = dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    check_second_order_against_torch(lambda x: F.unfold(x, **kwargs) ** 2,
                                     lambda x: torch.nn.functional.unfold(x, **kwargs) ** 2,
                                     random((2, 2, 5, 6)))
    check_second_order_against_torch(lambda c: F.fold(c, (4, 5), 2) ** 2,
                                     lambda c: torch.nn.functional.fold(c, (4, 5), 2) ** 2,
                                     random((2, 8, 12)))


def test_a_convolution_is_unfold_then_one_matrix_product():
    x, w = random((2, 3, 6, 5)), random((4, 3, 3, 3), seed=1)
    cols = F.unfold(learntorch.tensor(x), 3, padding=1)                       # (N, 27, L)
    out = (learntorch.tensor(w).reshape(4, -1) @ cols).reshape(2, 4, 6, 5)
    expected = F.conv2d(learntorch.tensor(x), learntorch.tensor(w), padding=1)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_node_names_are_torchs():
    x = learntorch.randn(1, 2, 4, 4, requires_grad=True)
    cols = F.unfold(x, 2)
    assert cols.grad_fn.name() == "Im2ColBackward0"
    assert F.fold(cols, 4, 2).grad_fn.name() == "Col2ImBackward0"


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), 0),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), 2, stride=0),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), 2, dilation=0),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), 2, padding=-1),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), 6),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), (2, 3, 4)),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5), 2.0),
    lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 5, 5), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 0, 5, 5), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 5, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 13, 16), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 15), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 16, 1), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 16), (1, 1), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 16), (5, 5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 16, dtype=lib.int64), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 16), (5, 5), 2, stride=0),
])
def test_bad_arguments_raise_torchs_exception(call):
    assert both_raise(call)


def test_modules_print_and_compute_like_torch():
    torch = require_torch()
    pairs = [(nn.Unfold(2), torch.nn.Unfold(2)),
             (nn.Unfold((2, 3), dilation=2, padding=1, stride=2),
              torch.nn.Unfold((2, 3), dilation=2, padding=1, stride=2)),
             (nn.Fold((4, 5), 2), torch.nn.Fold((4, 5), 2)),
             (nn.Fold(4, (2, 2), 1, 0, 1), torch.nn.Fold(4, (2, 2), 1, 0, 1))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
    x = random((2, 3, 4, 5))
    cols = nn.Unfold(2)(learntorch.tensor(x))
    np.testing.assert_allclose(cols.numpy(), torch.nn.Unfold(2)(torch.tensor(x)).numpy())
    back = nn.Fold((4, 5), 2)(cols)
    np.testing.assert_allclose(back.numpy(),
                               torch.nn.Fold((4, 5), 2)(torch.nn.Unfold(2)(torch.tensor(x)))
                               .numpy(), rtol=1e-12)
