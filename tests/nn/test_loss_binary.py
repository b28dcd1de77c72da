"""binary_cross_entropy and binary_cross_entropy_with_logits specified against torch.

Values and gradients of input *and* target for every reduction, with weights
and pos_weight broadcast, in float32 and float64; torch's clamps at p = 0 and
1; finite results for logits of +-1000; second derivatives; dtypes; errors.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, require_torch, torch_tensor)

REDUCTIONS = ["none", "mean", "sum"]


def optional(make, a):
    return None if a is None else make(a)


def compare_bce(p, y, weight=None, rtol=1e-5, atol=1e-6, **kw):
    torch = require_torch()
    return check_against_torch(
        lambda a, b: F.binary_cross_entropy(a, b, weight=optional(lt_tensor, weight), **kw),
        lambda a, b: torch.nn.functional.binary_cross_entropy(
            a, b, weight=optional(torch_tensor, weight), **kw), p, y, rtol=rtol, atol=atol)


def compare_logits(x, y, weight=None, pos_weight=None, rtol=1e-5, atol=1e-6, **kw):
    torch = require_torch()
    return check_against_torch(
        lambda a, b: F.binary_cross_entropy_with_logits(
            a, b, weight=optional(lt_tensor, weight), pos_weight=optional(lt_tensor, pos_weight),
            **kw),
        lambda a, b: torch.nn.functional.binary_cross_entropy_with_logits(
            a, b, weight=optional(torch_tensor, weight),
            pos_weight=optional(torch_tensor, pos_weight), **kw), x, y, rtol=rtol, atol=atol)


WEIGHT_SHAPES = [None, (3,), (4, 1), (4, 3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight_shape", WEIGHT_SHAPES)
def test_bce_and_gradients_of_input_and_target_match_torch(weight_shape, reduction, dtype):
    rng = np.random.default_rng(0)
    p = rng.uniform(0.02, 0.98, (4, 3)).astype(dtype)
    y = rng.random((4, 3)).astype(dtype)
    w = None if weight_shape is None else rng.random(weight_shape).astype(dtype)
    compare_bce(p, y, w, reduction=reduction)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_clamps_the_log_at_minus_100_and_the_gradient_like_torch(dtype):
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 1e-30], dtype=dtype)
    y = np.array([1.0, 0.0, 0.0, 1.0, 0.5, 1.0], dtype=dtype)
    out = compare_bce(p, y, reduction="none", rtol=1e-5)
    assert np.isfinite(out.detach().numpy()).all()
    assert out.detach().numpy()[0] == 100.0  # -log(0) clamped


@given(st.data())
def test_bce_random_shapes_and_strided_views_match_torch(data):
    p = data.draw(arrays(dtype=np.float64, max_dims=3, elements=st.floats(0.01, 0.99)))
    y = data.draw(arrays(shape=p.shape, dtype=np.float64, elements=st.floats(0, 1, width=32)))
    compare_bce(p, y, reduction=data.draw(st.sampled_from(REDUCTIONS)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight_shape,pos_weight_shape", [(None, None), ((3,), None),
                                                           (None, (3,)), ((4, 3), (3,)),
                                                           ((4, 1), (4, 3)), (None, ())])
def test_bce_with_logits_and_gradients_of_input_and_target_match_torch(
        weight_shape, pos_weight_shape, reduction, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 3)) * 3).astype(dtype)
    y = rng.random((4, 3)).astype(dtype)
    w = None if weight_shape is None else rng.random(weight_shape).astype(dtype)
    pw = None if pos_weight_shape is None else \
        np.asarray(rng.random(pos_weight_shape) * 3).astype(dtype)
    compare_logits(x, y, w, pw, reduction=reduction)


@given(st.data())
def test_bce_with_logits_random_shapes_and_strided_views_match_torch(data):
    x = data.draw(arrays(dtype=np.float64, min_dims=1, max_dims=3,
                         elements=st.floats(-30, 30, width=32)))
    y = data.draw(arrays(shape=x.shape, dtype=np.float64, elements=st.floats(0, 1, width=32)))
    pw = data.draw(st.none() | arrays(shape=x.shape[-1:], dtype=np.float64,
                                      elements=st.floats(0, 4, width=32)))
    compare_logits(x, y, pos_weight=pw, reduction=data.draw(st.sampled_from(REDUCTIONS)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_logits_of_plus_minus_1000_give_finite_float32_results_equal_to_torchs(reduction):
    x = np.array([[-1000.0, 1000.0, -1000.0], [1000.0, 0.0, -30.0]], dtype=np.float32)
    y = np.array([[1.0, 0.0, 0.0], [1.0, 0.5, 1.0]], dtype=np.float32)
    pw = np.array([3.0, 0.5, 2.0], dtype=np.float32)
    for pos_weight in (None, pw):
        out = compare_logits(x, y, pos_weight=pos_weight, reduction=reduction, atol=1e-3)
        assert np.isfinite(out.detach().numpy()).all()


@pytest.mark.parametrize("pos_weighted", [False, True])
def test_bce_with_logits_second_derivatives_match_torch(pos_weighted):
    torch = require_torch()
    rng = np.random.default_rng(2)
    x, y, pw = rng.standard_normal((3, 2)), rng.random((3, 2)), np.array([2.0, 0.3])
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        a, b = make(x, True), make(y, True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(
            a, b, weight=make(np.array([0.5, 1.5])), pos_weight=make(pw) if pos_weighted else None)
        ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
        results.append(lib.autograd.grad((ga ** 2).sum() + (ga * gb).sum(), (a, b)))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs)


def test_bce_second_derivatives_match_torch():
    torch = require_torch()
    rng = np.random.default_rng(3)
    p, y = rng.uniform(0.1, 0.9, (3, 2)), rng.random((3, 2))
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        a, b = make(p, True), make(y, True)
        loss = lib.nn.functional.binary_cross_entropy(a, b, reduction="sum")
        ga, = lib.autograd.grad(loss, a, create_graph=True)
        results.append(lib.autograd.grad((ga * ga).sum(), (a, b)))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs)


def test_gradients_agree_with_finite_differences():
    rng = np.random.default_rng(4)
    check_against_finite_differences(
        lambda a, b: F.binary_cross_entropy_with_logits(
            a, b, pos_weight=learntorch.tensor([2.0, 0.5], dtype=learntorch.float64),
            reduction="none"), rng.standard_normal((3, 2)), rng.random((3, 2)))
    check_against_finite_differences(
        lambda a, b: F.binary_cross_entropy(a, b, reduction="none"),
        rng.uniform(0.1, 0.9, (3, 2)), rng.random((3, 2)))


def test_graph_nodes_have_torchs_names():
    x = learntorch.rand(3, requires_grad=True)
    y = learntorch.rand(3)
    assert F.binary_cross_entropy(x, y).grad_fn.name() == "BinaryCrossEntropyBackward0"
    assert F.binary_cross_entropy_with_logits(x, y).grad_fn.name() == \
        "BinaryCrossEntropyWithLogitsBackward0"


def test_result_dtypes_follow_torch():
    torch = require_torch()
    names = ["float32", "float64", "float16", "int64"]
    for a in names:
        for b in names:
            for fn in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
                outcomes = []
                for lib in (learntorch, torch):
                    x = lib.full((3,), 0.5, dtype=getattr(lib, a)) if a != "int64" \
                        else lib.zeros(3, dtype=lib.int64)
                    y = lib.full((3,), 0.5, dtype=getattr(lib, b)) if b != "int64" \
                        else lib.ones(3, dtype=lib.int64)
                    try:
                        outcomes.append(str(getattr(lib.nn.functional, fn)(x, y).dtype)
                                        .split(".")[-1])
                    except (RuntimeError, NotImplementedError) as e:
                        outcomes.append(type(e).__name__)
                assert outcomes[0] == outcomes[1], (fn, a, b, outcomes)


def test_a_float64_weight_is_cast_to_the_computation_dtype_like_torch():
    rng = np.random.default_rng(5)
    x, y = rng.random((2, 3)).astype(np.float32), rng.random((2, 3)).astype(np.float32)
    w = rng.random(3)
    out = compare_bce(x, y, w)
    assert out.dtype is learntorch.float32
    out = compare_logits(x, y, w, w * 2)
    assert out.dtype is learntorch.float32


def test_errors_have_torchs_types_and_say_what_is_wrong():
    p, y = learntorch.rand(3, 2), learntorch.rand(3, 2)
    with pytest.raises(ValueError, match=r"target size .*\[3, 2, 1\].* different to the input "
                                         r"size .*\[3, 2\]"):
        F.binary_cross_entropy(p, y.unsqueeze(-1))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1.*"
                                           "with_logits"):
        F.binary_cross_entropy(p + 1, y)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(learntorch.tensor([float("nan")]), learntorch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(p, y * 3)
    with pytest.raises(RuntimeError, match=r"Found dtype Double but expected Float.*\.to"):
        F.binary_cross_entropy(p, y.double())
    with pytest.raises(RuntimeError, match=r"weight of shape \[3\].*\[3, 2\]"):
        F.binary_cross_entropy(p, y, weight=learntorch.rand(3))
    with pytest.raises(RuntimeError, match=r"weight of shape \[4, 3, 2\].*\[3, 2\]"):
        F.binary_cross_entropy(p, y, weight=learntorch.rand(4, 3, 2))
    with pytest.raises(RuntimeError, match="'binary_cross_entropy' is not differentiable with "
                                           "respect to argument 'weight'"):
        F.binary_cross_entropy(p, y, weight=learntorch.rand(2, requires_grad=True))
    with pytest.raises(ValueError, match=r"Target size .*\[3\].* must be the same as input "
                                         r"size .*\[3, 2\]"):
        F.binary_cross_entropy_with_logits(p, learntorch.rand(3))
    with pytest.raises(RuntimeError, match=r"pos_weight of shape \[3\].*\[3, 2\].*last dim"):
        F.binary_cross_entropy_with_logits(p, y, pos_weight=learntorch.rand(3))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                           "'pos_weight'"):
        F.binary_cross_entropy_with_logits(p, y, pos_weight=learntorch.rand(2, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"target\.float\(\)"):
        F.binary_cross_entropy_with_logits(p, y.long())
    with pytest.raises(TypeError, match=r"argument 'target' \(position 2\) must be Tensor"):
        F.binary_cross_entropy_with_logits(p, [[1.0, 0.0]] * 3)


def test_each_error_type_is_the_one_torch_raises():
    torch = require_torch()
    cases = [("binary_cross_entropy", (3,), (3, 1), {}),
             ("binary_cross_entropy_with_logits", (3,), (3, 1), {}),
             ("binary_cross_entropy", (3, 2), (3, 2), {"weight": (3,)}),
             ("binary_cross_entropy_with_logits", (3, 2), (3, 2), {"pos_weight": (3,)}),
             ("binary_cross_entropy_with_logits", (3, 2), (3, 2), {"weight": (4, 3, 2)})]
    for fn, xs, ys, kw in cases:
        kinds = []
        for lib in (learntorch, torch):
            args = {k: lib.ones(v) for k, v in kw.items()}
            try:
                getattr(lib.nn.functional, fn)(lib.full(xs, 0.5), lib.full(ys, 0.5), **args)
                kinds.append(None)
            except Exception as e:  # noqa: BLE001 - the type is what is compared
                kinds.append(type(e))
        assert kinds[0] is kinds[1] and kinds[0] is not None, (fn, xs, ys, kw, kinds)
