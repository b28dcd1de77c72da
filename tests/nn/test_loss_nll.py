"""nll_loss specified against torch: picks, weights, ignore_index, reductions, errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, require_torch, torch_tensor)

REDUCTIONS = ["none", "mean", "sum"]


def compare(x, target, weight=None, **kw):
    torch = require_torch()
    lw = None if weight is None else lt_tensor(weight)
    tw = None if weight is None else torch_tensor(weight)
    return check_against_torch(
        lambda a: F.nll_loss(a, lt_tensor(target), weight=lw, **kw),
        lambda a: torch.nn.functional.nll_loss(a, torch_tensor(target), weight=tw, **kw), x)


def targets(rng, shape, n_classes, ignore_index, ignored):
    t = rng.integers(0, n_classes, shape)
    t[rng.random(shape) < ignored] = ignore_index
    return t


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(6, 4), (2, 4, 3), (2, 4, 2, 3), (4,)])
@pytest.mark.parametrize("weighted,ignore_index,ignored", [(False, -100, 0.0), (True, -100, 0.3),
                                                           (True, 2, 0.3), (False, 0, 0.5)])
def test_nll_loss_matches_torch(weighted, ignore_index, ignored, shape, reduction, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    c = shape[0] if len(shape) == 1 else shape[1]
    t = targets(rng, () if len(shape) == 1 else shape[:1] + shape[2:], c, ignore_index, ignored)
    w = rng.random(c).astype(dtype) + 0.1 if weighted else None
    compare(x, t, w, ignore_index=ignore_index, reduction=reduction)


@given(st.data())
def test_random_shapes_and_strided_inputs_match_torch(data):
    n, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 5))
    spatial = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    x = data.draw(arrays(shape=(n, c) + spatial, dtype=np.float64))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    w = rng.random(c) if data.draw(st.booleans()) else None
    compare(x, targets(rng, (n,) + spatial, c, -100, 0.2), w,
            reduction=data.draw(st.sampled_from(REDUCTIONS)))


def test_nll_of_log_softmax_is_cross_entropy():
    rng = np.random.default_rng(1)
    x = learntorch.tensor(rng.standard_normal((5, 4)))
    t = learntorch.tensor([0, 3, -100, 1, 2])
    w = learntorch.tensor(rng.random(4))
    for reduction in REDUCTIONS:
        assert_close(F.nll_loss(F.log_softmax(x, dim=1), t, weight=w, reduction=reduction),
                     F.cross_entropy(x, t, weight=w, reduction=reduction), rtol=1e-12)


def test_second_derivatives_through_log_softmax_match_torch():
    torch = require_torch()
    rng = np.random.default_rng(2)
    x, t, w = rng.standard_normal((4, 3)), np.array([0, 2, -100, 1]), rng.random(3)
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        a = make(x, True)
        loss = lib.nn.functional.nll_loss(lib.log_softmax(a, dim=1), make(t), weight=make(w))
        ga, = lib.autograd.grad(loss, a, create_graph=True)
        results.append(lib.autograd.grad((ga ** 2).sum() + ga[0, 1], a)[0])
    assert_close(*results)


def test_gradients_agree_with_finite_differences():
    t = learntorch.tensor([[1, 0], [2, -100]])
    w = learntorch.tensor([0.2, 1.0, 3.0], dtype=learntorch.float64)
    check_against_finite_differences(lambda a: F.nll_loss(a, t, weight=w, reduction="none"),
                                     np.random.default_rng(3).standard_normal((2, 3, 2)))


def test_all_ignored_and_zero_weights_give_torchs_nan_and_gradients():
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    for reduction in ("mean", "sum"):
        compare(x, np.array([-100, -100, -100]), reduction=reduction)
        compare(x, np.array([1, 2, 3]), np.zeros(4, np.float32), reduction=reduction)
    compare(np.zeros((0, 4), np.float32), np.zeros(0, np.int64))


def test_create_graph_keeps_ignored_rows_at_zero_when_the_mean_is_0_over_0():
    torch = require_torch()
    grads = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        a = make(np.ones((2, 3)), True)
        loss = lib.nn.functional.nll_loss(a, make(np.array([1, -100])),
                                          weight=make(np.array([1.0, 0.0, 1.0])))
        ga, = lib.autograd.grad(loss, a, create_graph=True)
        grads.append(ga)
    assert_close(*grads)


def test_graph_node_is_torchs():
    x = learntorch.randn(3, 4, requires_grad=True)
    assert F.nll_loss(x, learntorch.tensor([0, 1, 2])).grad_fn.name() == "NllLossBackward0"


def test_errors_have_torchs_types_and_name_shapes_dtypes_and_the_fix():
    x, t = learntorch.randn(3, 5), learntorch.tensor([1, 2, 3])
    with pytest.raises(IndexError, match=r"Target 5 is out of bounds\."):
        F.nll_loss(x, learntorch.tensor([1, 5, 2]))
    with pytest.raises(RuntimeError, match=r"Long or Byte, but got Float.*\.long\(\)"):
        F.nll_loss(x, t.float())
    with pytest.raises(ValueError, match=r"Expected 1 or more dimensions \(got 0\)"):
        F.nll_loss(learntorch.tensor(1.0), learntorch.tensor(0))
    with pytest.raises(NotImplementedError, match=r"Long.*\.float\(\)"):
        F.nll_loss(x.long(), t)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.nll_loss(x, t, weight=learntorch.ones(5, dtype=learntorch.float64))
    with pytest.raises(RuntimeError, match="'nll_loss_forward' is not differentiable with "
                                           "respect to argument 'weight'"):
        F.nll_loss(x, t, weight=learntorch.ones(5, requires_grad=True))
    with pytest.raises(ValueError, match=r"batch_size \(3\) to match target batch_size \(2\)"):
        F.nll_loss(x, t[:2])
