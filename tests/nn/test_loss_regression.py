"""Regression losses (mse, l1, huber, smooth_l1) specified against torch.

Every loss x every reduction x float32/float64: the value, its dtype, and the
gradient of both input and target agree with torch's; random shapes and
strided views (hypothesis); broadcasting (torch's warning, gradients summed
back to each operand's shape); element weights; second derivatives; errors.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from oracle import (arrays, assert_close, broadcastable_pair, check_against_torch,
                    check_against_finite_differences, lt_tensor, require_torch, torch_tensor)

REDUCTIONS = ["none", "mean", "sum"]

# name -> (keyword arguments): the same call in both libraries
LOSSES = {
    "mse_loss": {},
    "l1_loss": {},
    "huber_loss": {},
    "huber_loss_delta": {"delta": 0.4},
    "smooth_l1_loss": {},
    "smooth_l1_loss_beta": {"beta": 0.3},
    "smooth_l1_loss_beta0": {"beta": 0.0},
}


def call(lib, name, *args, **kwargs):
    fn = getattr(lib.nn.functional, name.replace("_delta", "").replace("_beta0", "")
                 .replace("_beta", ""))
    return fn(*args, **LOSSES[name], **kwargs)


def pair(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    # errors spread around delta/beta so both pieces of huber and smooth_l1 are used
    return (rng.standard_normal(shape).astype(dtype),
            rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", LOSSES)
def test_value_and_gradients_of_input_and_target_match_torch(name, reduction, dtype):
    torch = require_torch()
    x, y = pair((5, 7), dtype)
    out = check_against_torch(lambda a, b: call(learntorch, name, a, b, reduction=reduction),
                              lambda a, b: call(torch, name, a, b, reduction=reduction), x, y)
    assert out.shape == ((5, 7) if reduction == "none" else ())


@given(st.data())
def test_random_shapes_and_strided_views_match_torch(data):
    torch = require_torch()
    name = data.draw(st.sampled_from(sorted(LOSSES)))
    reduction = data.draw(st.sampled_from(REDUCTIONS))
    x = data.draw(arrays(dtype=np.float64, max_dims=4))
    y = data.draw(arrays(shape=x.shape, dtype=np.float64))
    check_against_torch(lambda a, b: call(learntorch, name, a, b, reduction=reduction),
                        lambda a, b: call(torch, name, a, b, reduction=reduction), x, y)


@given(broadcastable_pair(), st.sampled_from(sorted(LOSSES)), st.sampled_from(REDUCTIONS))
def test_broadcast_shapes_give_torch_values_and_gradients_summed_to_each_shape(
        xy, name, reduction):
    torch = require_torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning itself is specified below
        check_against_torch(lambda a, b: call(learntorch, name, a, b, reduction=reduction),
                            lambda a, b: call(torch, name, a, b, reduction=reduction), *xy)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss"])
def test_different_shapes_warn_like_torch_and_point_at_the_caller(name):
    x, y = learntorch.zeros(3, 1), learntorch.zeros(3)
    with pytest.warns(UserWarning, match=r"Using a target size .*\[3\].* different to the "
                                         r"input size .*\[3, 1\].*broadcasting") as record:
        call(learntorch, name, x, y)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(learntorch, name, x, learntorch.zeros(3, 1))  # same shapes: no warning


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss"])
def test_shapes_that_cannot_broadcast_are_a_runtime_error_naming_both(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match=r"\[3, 2\].*\[3\]"):
            call(learntorch, name, learntorch.zeros(3, 2), learntorch.zeros(3))


DTYPES = ["float32", "float64", "int64", "bool"]


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss"])
def test_result_dtype_or_error_type_of_mixed_dtypes_is_torchs(name):
    torch = require_torch()
    for a in DTYPES:
        for b in DTYPES:
            outcomes = []
            for lib in (learntorch, torch):
                x, y = lib.ones(3, dtype=getattr(lib, a)), lib.ones(3, dtype=getattr(lib, b))
                try:
                    outcomes.append(str(call(lib, name, x, y).dtype).split(".")[-1])
                except (RuntimeError, NotImplementedError) as e:
                    outcomes.append(type(e).__name__)
            assert outcomes[0] == outcomes[1], f"{name}({a}, {b}): {outcomes}"


@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "smooth_l1_loss", "l1_loss"])
def test_mixed_float_dtypes_give_each_operand_a_gradient_of_its_own_dtype(name):
    x = learntorch.randn(4, requires_grad=True)
    y = learntorch.randn(4, dtype=learntorch.float64, requires_grad=True)
    call(learntorch, name, x, y).backward()
    assert x.grad.dtype is learntorch.float32 and y.grad.dtype is learntorch.float64
    np.testing.assert_allclose(x.grad.numpy(), -y.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,kw,edge", [("huber_loss", {"delta": 0.5}, 0.5),
                                          ("smooth_l1_loss", {"beta": 0.5}, 0.5),
                                          ("l1_loss", {}, 0.0), ("mse_loss", {}, 0.0)])
def test_errors_exactly_at_the_kink_match_torch(name, kw, edge):
    torch = require_torch()
    x = np.array([edge, -edge, 0.0, 2.0], dtype=np.float64)
    y = np.zeros(4)
    fn = getattr(F, name)
    check_against_torch(lambda a, b: fn(a, b, reduction="none", **kw),
                        lambda a, b: getattr(torch.nn.functional, name)(a, b, reduction="none",
                                                                         **kw), x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_element_weights_match_torch_including_the_weighted_mean(name, reduction):
    torch = require_torch()
    x, y = pair((4, 3), np.float64)
    w = np.random.default_rng(2).random((4, 3))
    fn = getattr(F, name)
    tfn = getattr(torch.nn.functional, name)
    check_against_torch(lambda a, b: fn(a, b, reduction=reduction, weight=lt_tensor(w)),
                        lambda a, b: tfn(a, b, reduction=reduction, weight=torch_tensor(w)), x, y)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_a_weight_of_another_shape_is_a_value_error(name):
    with pytest.raises(ValueError, match=r"Weights and input must have the same size.*\[1\].*"
                                         r"\[3\]"):
        getattr(F, name)(learntorch.zeros(3), learntorch.zeros(3), weight=learntorch.ones(1))


@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "smooth_l1_loss"])
def test_second_derivatives_match_torch(name):
    """d/dx and d/dy of sum(g * dloss/dx), through create_graph=True."""
    torch = require_torch()
    x, y = pair((3, 4), np.float64, seed=3)
    grads = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        a, b = make(x, True), make(y, True)
        loss = getattr(lib.nn.functional, name)(a, b, reduction="sum")
        ga, = lib.autograd.grad(loss, a, create_graph=True)
        assert ga.requires_grad
        weights = make(np.linspace(-1, 1, 12).reshape(3, 4))
        grads.append(lib.autograd.grad((ga * weights).sum(), (a, b)))
    for mine, theirs in zip(*grads):
        assert_close(mine, theirs)


def test_mse_second_derivative_with_mean_reduction_matches_torch():
    torch = require_torch()
    x, y = pair((2, 5), np.float64, seed=4)
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        a, b = make(x, True), make(y, True)
        g, = lib.autograd.grad(lib.nn.functional.mse_loss(a, b) ** 2, a, create_graph=True)
        results.append(lib.autograd.grad(g.pow(3).sum(), (a, b)))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs)


@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "smooth_l1_loss"])
def test_gradients_agree_with_finite_differences(name):
    x, y = pair((2, 3), np.float64, seed=5)
    check_against_finite_differences(lambda a, b: getattr(F, name)(a, b, reduction="none"), x, y)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss"])
def test_graph_node_has_torchs_name(name):
    torch = require_torch()
    for reduction in REDUCTIONS:
        a = learntorch.randn(3, requires_grad=True)
        b = torch.randn(3, requires_grad=True)
        mine = getattr(F, name)(a, learntorch.randn(3), reduction=reduction).grad_fn.name()
        theirs = getattr(torch.nn.functional, name)(b, torch.randn(3),
                                                    reduction=reduction).grad_fn.name()
        assert mine == theirs


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss"])
def test_mean_of_an_empty_input_is_nan_like_torch(name):
    torch = require_torch()
    mine = getattr(F, name)(learntorch.zeros(0), learntorch.zeros(0))
    theirs = getattr(torch.nn.functional, name)(torch.zeros(0), torch.zeros(0))
    assert np.isnan(mine.item()) and np.isnan(theirs.item())


@pytest.mark.parametrize("size_average,reduce", [(False, None), (None, False), (True, True),
                                                 (False, True)])
def test_legacy_size_average_and_reduce_pick_torchs_reduction_with_its_warning(size_average,
                                                                               reduce):
    torch = require_torch()
    x, y = pair((3, 2), np.float64)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss"):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            mine = getattr(F, name)(lt_tensor(x), lt_tensor(y), size_average=size_average,
                                    reduce=reduce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = getattr(torch.nn.functional, name)(torch_tensor(x), torch_tensor(y),
                                                        size_average=size_average, reduce=reduce)
        assert_close(mine, theirs)


def test_argument_errors_have_torchs_types_and_say_what_to_do():
    x = learntorch.zeros(3)
    with pytest.raises(ValueError, match="avg is not a valid value for reduction.*'sum'"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values "
                                           "for delta"):
        F.huber_loss(x, x, delta=0)
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values "
                                           "for beta"):
        F.smooth_l1_loss(x, x, beta=-1)
    with pytest.raises(TypeError, match=r"argument 'target' .* must be Tensor, not list"):
        F.mse_loss(x, [1.0, 2.0, 3.0])
    with pytest.raises(NotImplementedError, match="Long.*float"):
        F.mse_loss(learntorch.zeros(3, dtype=learntorch.int64),
                   learntorch.zeros(3, dtype=learntorch.int64))
