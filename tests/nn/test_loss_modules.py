"""Loss modules and the functional signatures, specified against torch.

A loss module is its options plus a call to nn.functional: same constructor
signature as torch's, same repr (torch's losses have no extra_repr), class
weights as buffers (state_dict interchangeable with torch's), the deprecated
size_average/reduce flags mapped with torch's warning, and the same result.
"""
import inspect
import warnings

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import assert_close, lt_tensor, require_torch, torch_tensor

MODULES = ["L1Loss", "MSELoss", "HuberLoss", "SmoothL1Loss", "NLLLoss", "CrossEntropyLoss",
           "BCELoss", "BCEWithLogitsLoss"]
FUNCTIONS = ["l1_loss", "mse_loss", "huber_loss", "smooth_l1_loss", "nll_loss", "cross_entropy",
             "binary_cross_entropy", "binary_cross_entropy_with_logits"]


def parameters(fn):
    return [(p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", MODULES)
def test_constructor_signature_is_torchs(name):
    torch = require_torch()
    assert parameters(getattr(nn, name).__init__) == \
        parameters(getattr(torch.nn, name).__init__)
    assert parameters(getattr(nn, name).forward) == parameters(getattr(torch.nn, name).forward)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_signature_is_torchs(name):
    torch = require_torch()
    assert parameters(getattr(F, name)) == parameters(getattr(torch.nn.functional, name))


def build(lib, name, make):
    """Each module with non-default options, built the same way in both libraries."""
    w5 = make(np.linspace(0.5, 2.0, 5).astype(np.float32))
    options = {
        "L1Loss": {"reduction": "sum"}, "MSELoss": {"reduction": "none"},
        "HuberLoss": {"delta": 0.3}, "SmoothL1Loss": {"beta": 0.4, "reduction": "sum"},
        "NLLLoss": {"weight": w5, "ignore_index": 1},
        "CrossEntropyLoss": {"weight": w5, "ignore_index": 2, "label_smoothing": 0.1},
        "BCELoss": {"weight": w5, "reduction": "none"},
        "BCEWithLogitsLoss": {"weight": w5, "pos_weight": make(np.full(5, 2.0, np.float32))},
    }[name]
    return getattr(lib.nn, name)(**options)


def inputs(name, make, requires_grad=True):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    if name == "BCELoss":
        x = 1 / (1 + np.exp(-x))
    if name in ("NLLLoss", "CrossEntropyLoss"):
        y = np.array([0, 2, 4, 1])
    elif name.startswith("BCE"):
        y = rng.random((4, 5)).astype(np.float32)
    else:
        y = rng.standard_normal((4, 5)).astype(np.float32)
    return make(x, requires_grad), make(y)


@pytest.mark.parametrize("name", MODULES)
def test_module_computes_what_torchs_computes(name):
    torch = require_torch()
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        module = build(lib, name, make)
        x, y = inputs(name, make)
        out = module(x, y)
        out.sum().backward()
        results.append((out, x.grad))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs)


@pytest.mark.parametrize("name", MODULES)
def test_repr_buffers_and_state_dict_match_torchs(name):
    torch = require_torch()
    mine, theirs = build(learntorch, name, lt_tensor), build(torch, name, torch_tensor)
    assert repr(mine) == repr(theirs)
    assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
    assert [k for k, _ in mine.named_buffers()] == [k for k, _ in theirs.named_buffers()]
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert list(mine.parameters()) == []  # weights are buffers: no optimizer trains them
    mine.load_state_dict({k: learntorch.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    for attr in ("reduction", "ignore_index", "label_smoothing", "delta", "beta"):
        assert getattr(mine, attr, None) == getattr(theirs, attr, None), attr


def test_a_weight_buffer_follows_the_module_to_another_dtype():
    loss = nn.CrossEntropyLoss(weight=learntorch.ones(3))
    loss.double()
    assert loss.weight.dtype is learntorch.float64
    x = learntorch.randn(2, 3, dtype=learntorch.float64, requires_grad=True)
    loss(x, learntorch.tensor([0, 2])).backward()
    assert x.grad.dtype is learntorch.float64


@pytest.mark.parametrize("size_average,reduce,expected", [(False, None, "sum"),
                                                          (None, False, "none"),
                                                          (True, None, "mean"),
                                                          (False, False, "none")])
def test_legacy_flags_set_torchs_reduction_with_its_warning(size_average, reduce, expected):
    torch = require_torch()
    for name in MODULES:
        if name == "HuberLoss":  # torch's HuberLoss never had the legacy flags
            continue
        with pytest.warns(UserWarning, match=f"please use reduction='{expected}' instead"):
            mine = getattr(nn, name)(size_average=size_average, reduce=reduce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = getattr(torch.nn, name)(size_average=size_average, reduce=reduce)
        assert mine.reduction == theirs.reduction == expected


def test_reduction_is_checked_when_the_loss_is_computed_like_torch():
    loss = nn.MSELoss(reduction="avg")  # accepted here, as in torch
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        loss(learntorch.zeros(2), learntorch.zeros(2))
    with pytest.warns(UserWarning, match="elementwise_mean' is deprecated"):
        out = nn.L1Loss(reduction="elementwise_mean")(learntorch.ones(2), learntorch.zeros(2))
    assert out.item() == 1.0


def test_constructor_errors_match_torch():
    with pytest.raises(TypeError, match="delta must be a float or int, got: <class 'str'>"):
        nn.HuberLoss(delta="1")
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'weight'"):
        nn.CrossEntropyLoss(weight=[1.0, 2.0])


def test_a_classifier_trained_with_the_module_follows_torchs_loss_curve():
    """Sixty plain gradient steps through CrossEntropyLoss: the same losses as torch's."""
    torch = require_torch()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = x[:, :3].argmax(axis=1)
    curves = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        w = make(np.zeros((4, 3), np.float32), True)
        criterion = lib.nn.CrossEntropyLoss(label_smoothing=0.05)
        curve = []
        for _ in range(60):
            loss = criterion(make(x) @ w, make(y))
            curve.append(loss.item())
            w.grad = None
            loss.backward()
            with lib.no_grad():
                w -= 0.5 * w.grad
        curves.append(curve)
    np.testing.assert_allclose(curves[0], curves[1], rtol=1e-4)
    assert curves[0][-1] < 0.5 * curves[0][0]
