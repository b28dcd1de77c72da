"""kl_div / nn.KLDivLoss, cosine_similarity, pairwise_distance and normalize against torch.

Forward and gradients of both arguments (strided and broadcast inputs, zeros in the
target where xlogy decides), every reduction including 'batchmean' and the legacy
flags with torch's warnings, second derivatives, the graph torch records, the layers'
repr, and torch's errors.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import (arrays, assert_close, both_raise, broadcastable_pair, check_against_torch,
                    require_torch)


def torch_f():
    return require_torch().nn.functional


def quiet(fn):
    """``fn`` with the 'mean' reduction warning of kl_div silenced (tested on its own)."""
    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return call


def distributions(rng, shape, zeros=True):
    p = rng.random(shape)
    if zeros:
        p[rng.random(shape) < 0.2] = 0.0  # impossible classes: xlogy(0, 0) = 0
    return p / np.maximum(p.sum(-1, keepdims=True), 1e-3)


# ---------------------------------------------------------------- kl_div
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_and_both_gradients_equal_torch(reduction, log_target, dtype):
    rng = np.random.default_rng(0)
    logq = np.log(distributions(rng, (4, 5), zeros=False)).astype(dtype)
    p = distributions(rng, (4, 5), zeros=not log_target)
    target = (np.log(p) if log_target else p).astype(dtype)
    # the target's gradient is NaN where p == 0 in torch too (xlogy's d/dy = x / y = 0 / 0)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    out = check_against_torch(
        quiet(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=log_target)),
        quiet(lambda a, b: torch_f().kl_div(a, b, reduction=reduction, log_target=log_target)),
        logq, target, **tol)
    assert out.shape == ((4, 5) if reduction == "none" else ())


@given(data=st.data())
def test_kl_div_broadcasts_strided_inputs_like_torch(data):
    a, b = data.draw(broadcastable_pair(elements=st.floats(0, 1, width=32)))
    log_target = data.draw(st.booleans())
    reduction = data.draw(st.sampled_from(["none", "sum", "batchmean"]))
    check_against_torch(
        lambda x, y: F.kl_div(x - 1, y, reduction=reduction, log_target=log_target),
        lambda x, y: torch_f().kl_div(x - 1, y, reduction=reduction, log_target=log_target),
        np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def test_kl_div_graph_and_second_derivatives_match_torch():
    torch = require_torch()
    rng = np.random.default_rng(1)
    x, p = rng.standard_normal((3, 4)), distributions(rng, (3, 4), zeros=False)
    results = []
    for lib in (learntorch, torch):
        logits = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.kl_div(logits.log_softmax(1), lib.tensor(p),
                                        reduction="batchmean")
        g, = lib.autograd.grad(loss, logits, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), logits)
        results.append((loss.grad_fn.name(), loss, g, gg))
    assert results[0][0] == results[1][0] == "DivBackward0"
    for mine, theirs in zip(results[0][1:], results[1][1:]):
        assert_close(mine, theirs, rtol=1e-10, atol=1e-12)


def test_kl_div_mean_warns_and_legacy_flags_resolve_like_torch():
    torch = require_torch()
    x, y = np.log(np.full((2, 3), 1 / 3)), np.full((2, 3), 1 / 3)
    for lib in (learntorch, torch):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            lib.nn.functional.kl_div(lib.tensor(x), lib.tensor(y))
        with pytest.warns(UserWarning, match="reduction='sum'"):
            out = lib.nn.functional.kl_div(lib.tensor(x), lib.tensor(y), size_average=False)
        assert out.shape == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 'batchmean' and 'sum' do not warn
        F.kl_div(learntorch.tensor(x), learntorch.tensor(y), reduction="batchmean")


@pytest.mark.parametrize("reduction, log_target", [("batchmean", False), ("sum", True),
                                                   ("none", False)])
def test_kl_div_loss_module_equals_torch(reduction, log_target):
    torch = require_torch()
    mine, theirs = (nn.KLDivLoss(reduction=reduction, log_target=log_target),
                    torch.nn.KLDivLoss(reduction=reduction, log_target=log_target))
    assert repr(mine) == repr(theirs) == "KLDivLoss()"
    rng = np.random.default_rng(2)
    logq, p = np.log(distributions(rng, (3, 4), zeros=False)), distributions(rng, (3, 4))
    target = np.log(p + 1e-3) if log_target else p
    check_against_torch(mine, theirs, logq, target, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.kl_div(lib.ones(2), lib.ones(2), reduction="batch"),
    lambda lib: lib.nn.functional.kl_div(lib.ones(2), [1.0, 1.0], reduction="sum"),
    lambda lib: lib.nn.functional.kl_div(lib.ones(2, 3), lib.ones(4, 3), reduction="sum"),
], ids=["bad_reduction", "list_target", "shapes"])
def test_kl_div_errors_have_torchs_type(call):
    both_raise(call)


# ---------------------------------------------------------------- distances
@st.composite
def broadcast_vectors(draw, dtype=np.float64):
    """Two arrays (often strided) whose shapes broadcast, with at least one dim."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                    max_side=4))
    return tuple(draw(arrays(shape=s, dtype=dtype)) for s in shapes.input_shapes)


@given(pair=broadcast_vectors(), data=st.data())
def test_cosine_similarity_and_gradients_equal_torch(pair, data):
    a, b = pair
    ndim = max(a.ndim, b.ndim)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    check_against_torch(lambda x, y: F.cosine_similarity(x, y, dim=dim),
                        lambda x, y: torch_f().cosine_similarity(x, y, dim=dim), a, b,
                        rtol=1e-9, atol=1e-10)


@given(pair=broadcast_vectors(), data=st.data())
def test_pairwise_distance_and_gradients_equal_torch(pair, data):
    a, b = pair
    p = data.draw(st.sampled_from([1.0, 2.0, 3.0, float("inf")]))
    keepdim = data.draw(st.booleans())
    check_against_torch(lambda x, y: F.pairwise_distance(x, y, p=p, keepdim=keepdim),
                        lambda x, y: torch_f().pairwise_distance(x, y, p=p, keepdim=keepdim),
                        a, b, rtol=1e-9, atol=1e-10)


@given(x=arrays(dtype=np.float64, min_dims=1, max_dims=3), data=st.data())
def test_normalize_and_gradient_equal_torch(x, data):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    p = data.draw(st.sampled_from([1.0, 2.0, 3.0]))
    check_against_torch(lambda a: F.normalize(a, p=p, dim=dim),
                        lambda a: torch_f().normalize(a, p=p, dim=dim), x, rtol=1e-9, atol=1e-10)


def test_distances_of_float32_batches_and_their_second_derivatives_match_torch():
    torch = require_torch()
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((5, 8)).astype(np.float32) for _ in range(2))
    for name in ("cosine_similarity", "pairwise_distance"):
        results = []
        for lib in (learntorch, torch):
            x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            out = getattr(lib.nn.functional, name)(x, y)
            g, = lib.autograd.grad(out.sum(), x, create_graph=True)
            gg, = lib.autograd.grad((g * g).sum(), y)
            results.append((out, g, gg))
        for mine, theirs in zip(*results):
            assert_close(mine, theirs, rtol=2e-4, atol=2e-5)


def test_zero_vectors_give_torchs_finite_values():
    torch = require_torch()
    z = np.zeros((2, 3))
    z[1] = [1.0, 2.0, 2.0]
    check_against_torch(F.cosine_similarity, torch_f().cosine_similarity, z, z[::-1].copy())
    check_against_torch(F.normalize, torch_f().normalize, z)
    check_against_torch(F.pairwise_distance, torch_f().pairwise_distance, z, z)


@pytest.mark.parametrize("name, args", [("CosineSimilarity", ()), ("CosineSimilarity", (0, 1e-4)),
                                        ("PairwiseDistance", ()),
                                        ("PairwiseDistance", (1.0, 1e-3, True))])
def test_distance_layers_equal_torch(name, args):
    torch = require_torch()
    mine, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mine) == repr(theirs)
    rng = np.random.default_rng(4)
    check_against_torch(mine, theirs, rng.standard_normal((3, 4)), rng.standard_normal((3, 4)),
                        rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.cosine_similarity(lib.tensor([1, 2]), lib.tensor([1, 2]), 0),
    lambda lib: lib.nn.functional.cosine_similarity(lib.ones(2, 3), lib.ones(4, 3)),
    lambda lib: lib.nn.functional.pairwise_distance(lib.ones(2, 3), lib.ones(4, 3)),
    lambda lib: lib.nn.functional.normalize([1.0, 2.0]),
    lambda lib: lib.nn.functional.cosine_similarity(lib.ones(2, 3), lib.ones(2, 3), dim=2),
], ids=["integers", "shapes", "pairwise_shapes", "list", "dim"])
def test_distance_errors_have_torchs_type(call):
    both_raise(call)

