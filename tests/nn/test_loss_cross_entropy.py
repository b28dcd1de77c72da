"""cross_entropy (and nn.CrossEntropyLoss's work) specified against torch.

Class-index targets -- (N, C) with (N,), K-dimensional (N, C, d1, ...) with
(N, d1, ...), unbatched (C,) -- and class-probability targets, each with every
reduction, class weights, ignore_index and label smoothing, in float32 and
float64: the loss, its dtype and the gradient of the logits (and of
probability targets) equal torch's.  Also: random shapes and strided logits,
logits of +-1000, second derivatives, the graph it records, and its errors.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from learntorch.backends import NumbaBackend
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, noncontiguous, require_torch, torch_tensor)

REDUCTIONS = ["none", "mean", "sum"]


def class_targets(rng, shape, n_classes, ignore_index=-100, ignored=0.0):
    t = rng.integers(0, n_classes, shape)
    t[rng.random(shape) < ignored] = ignore_index
    return t


def compare(x, target, weight=None, prob=False, rtol=1e-5, atol=1e-6, **kw):
    """check_against_torch on cross_entropy; a probability target is differentiated too."""
    torch = require_torch()
    lw = None if weight is None else lt_tensor(weight)
    tw = None if weight is None else torch_tensor(weight)
    tol = {"rtol": rtol, "atol": atol}
    if prob:
        return check_against_torch(
            lambda a, b: F.cross_entropy(a, b, weight=lw, **kw),
            lambda a, b: torch.nn.functional.cross_entropy(a, b, weight=tw, **kw), x, target,
            **tol)
    return check_against_torch(
        lambda a: F.cross_entropy(a, lt_tensor(target), weight=lw, **kw),
        lambda a: torch.nn.functional.cross_entropy(a, torch_tensor(target), weight=tw, **kw), x,
        **tol)


OPTIONS = [  # (weighted, ignore_index, fraction of targets ignored, label_smoothing)
    (False, -100, 0.0, 0.0), (True, -100, 0.0, 0.0), (False, -100, 0.3, 0.0),
    (True, 2, 0.3, 0.0), (False, -100, 0.0, 0.25), (True, -100, 0.3, 0.25),
    (True, 1, 0.4, 0.1), (False, 3, 0.3, 1.0),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,ignore_index,ignored,smoothing", OPTIONS)
def test_index_targets_match_torch(weighted, ignore_index, ignored, smoothing, reduction, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 5)).astype(dtype) * 3
    t = class_targets(rng, 7, 5, ignore_index, ignored)
    w = rng.random(5).astype(dtype) + 0.1 if weighted else None
    out = compare(x, t, w, ignore_index=ignore_index, reduction=reduction,
                  label_smoothing=smoothing)
    assert out.shape == ((7,) if reduction == "none" else ())


@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 4, 3, 2), (1, 3, 2, 1, 2)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,ignore_index,ignored,smoothing", OPTIONS[::2] + OPTIONS[5:6])
def test_k_dimensional_index_targets_match_torch(shape, weighted, ignore_index, ignored,
                                                 smoothing, reduction):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    t = class_targets(rng, shape[:1] + shape[2:], shape[1], ignore_index, ignored)
    w = rng.random(shape[1]) + 0.1 if weighted else None
    out = compare(x, t, w, ignore_index=ignore_index, reduction=reduction,
                  label_smoothing=smoothing)
    assert out.shape == ((shape[:1] + shape[2:]) if reduction == "none" else ())


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_an_unbatched_sample_of_shape_C_matches_torch(reduction):
    x = np.random.default_rng(2).standard_normal(6).astype(np.float32)
    for smoothing in (0.0, 0.3):
        out = compare(x, np.array(4), np.linspace(0.5, 2, 6).astype(np.float32),
                      reduction=reduction, label_smoothing=smoothing)
        assert out.shape == ()
    # torch also takes a target of shape [1], but only in forward without label smoothing
    # (its backward fails); learntorch treats it as the shape [] target throughout
    torch = require_torch()
    check_against_torch(lambda a: F.cross_entropy(a, learntorch.tensor([4]), reduction=reduction),
                        lambda a: torch.nn.functional.cross_entropy(a, torch.tensor([4]),
                                                                    reduction=reduction),
                        x, grad=False)
    w = learntorch.linspace(0.5, 2, 6)
    for kw in ({"weight": w}, {"label_smoothing": 0.3}):
        assert_close(F.cross_entropy(lt_tensor(x), learntorch.tensor([4]), **kw),
                     F.cross_entropy(lt_tensor(x), learntorch.tensor(4), **kw))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,smoothing", [(False, 0.0), (True, 0.0), (False, 0.2),
                                                (True, 0.2)])
def test_probability_targets_match_torch_with_gradients_of_both(weighted, smoothing, reduction,
                                                                dtype):
    rng = np.random.default_rng(3)
    for shape in ((6, 4), (2, 4, 3), (4,)):
        x = rng.standard_normal(shape).astype(dtype)
        y = rng.dirichlet(np.ones(4), size=int(np.prod(shape)) // 4).astype(dtype)
        y = np.moveaxis(y.reshape((shape[0],) + shape[2:] + (4,)), -1, 1) if len(shape) > 1 \
            else y.reshape(4)
        w = rng.random(4).astype(dtype) + 0.1 if weighted else None
        compare(x, np.ascontiguousarray(y), w, prob=True, reduction=reduction,
                label_smoothing=smoothing)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_class_weights_of_probability_targets_get_torchs_gradient(reduction):
    torch = require_torch()
    rng = np.random.default_rng(4)
    x, y, w = rng.standard_normal((5, 3)), rng.random((5, 3)), rng.random(3)
    grads = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        weight, logits = make(w, True), make(x, True)
        loss = lib.nn.functional.cross_entropy(logits, make(y), weight=weight,
                                               reduction=reduction, label_smoothing=0.1)
        gw, = lib.autograd.grad(loss.sum(), weight, create_graph=True)
        grads += [gw, lib.autograd.grad((gw ** 2).sum(), logits)[0]]  # and differentiate it
    assert_close(grads[0], grads[2])
    assert_close(grads[1], grads[3])


@given(st.data())
def test_random_shapes_options_and_strided_logits_match_torch(data):
    n = data.draw(st.integers(1, 4))
    c = data.draw(st.integers(1, 5))
    spatial = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    shape = (n, c) + spatial
    x = data.draw(arrays(shape=shape, dtype=np.float64,
                         elements=st.floats(-20, 20, allow_nan=False, width=32)))
    reduction = data.draw(st.sampled_from(REDUCTIONS))
    smoothing = data.draw(st.sampled_from([0.0, 0.15, 0.5]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    w = rng.random(c) + 0.05 if data.draw(st.booleans()) else None
    if data.draw(st.booleans()):  # class probabilities
        y = data.draw(arrays(shape=shape, dtype=np.float64, contiguous=True,
                             elements=st.floats(0, 1, width=32)))
        compare(x, y, w, prob=True, reduction=reduction, label_smoothing=smoothing)
    else:
        ignore_index = data.draw(st.sampled_from([-100, 0]))
        t = class_targets(rng, (n,) + spatial, c, ignore_index, ignored=0.25)
        t = noncontiguous(data.draw, t)
        compare(x, t, w, ignore_index=ignore_index, reduction=reduction,
                label_smoothing=smoothing)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
def test_logits_of_plus_minus_1000_give_finite_float32_losses_and_gradients_equal_to_torchs(
        smoothing, weighted):
    x = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0],
                  [1000.0, 1000.0, -1000.0], [-1000.0, 1000.0, 1000.0]], dtype=np.float32)
    w = np.array([0.5, 2.0, 1.0], dtype=np.float32) if weighted else None
    for reduction in REDUCTIONS:
        out = compare(x, np.array([1, 2, 0, 0]), w, reduction=reduction,
                      label_smoothing=smoothing, rtol=1e-5, atol=1e-3)
        assert np.isfinite(out.detach().numpy()).all()
        y = np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [1.0, 0.0, 0.0]],
                     dtype=np.float32)
        out = compare(x, y, w, prob=True, reduction=reduction, label_smoothing=smoothing,
                      rtol=1e-5, atol=1e-3)
        assert np.isfinite(out.detach().numpy()).all()
    xt = learntorch.tensor(x, requires_grad=True)
    F.cross_entropy(xt, learntorch.tensor([1, 2, 0, 0])).backward()
    assert np.isfinite(xt.grad.numpy()).all()
    assert np.abs(xt.grad.numpy()).max() > 0.1  # the wrong classes really get pushed


def second_derivatives(lib, make, x, target, prob, **kw):
    """d/dx (and d/dtarget) of sum(v * dloss/dx), v fixed: what create_graph=True is for."""
    a = make(x, True)
    b = make(target, prob)
    loss = lib.nn.functional.cross_entropy(a, b, **kw)
    ga, = lib.autograd.grad(loss, a, create_graph=True)
    v = make(np.cos(np.arange(x.size)).reshape(x.shape))
    inputs = (a, b) if prob else (a,)
    return lib.autograd.grad((ga * v).sum() + (ga * ga).sum(), inputs)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2},
                                {"ignore_index": 1, "label_smoothing": 0.1, "weighted": True}])
def test_second_derivatives_of_index_targets_match_torch(kw, reduction):
    torch = require_torch()
    rng = np.random.default_rng(5)
    kw = dict(kw)
    x, t = rng.standard_normal((4, 3)), np.array([0, 1, 2, 1])
    if kw.pop("weighted", False):
        kw["weight"] = np.array([0.3, 1.0, 2.0])
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        args = {k: (make(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        results.append(second_derivatives(lib, make, x, t, False, reduction=reduction, **args))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs)


def test_second_derivatives_of_k_dimensional_and_probability_targets_match_torch():
    torch = require_torch()
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 2))
    cases = [(np.array([[0, 2], [1, -100]]), False, {"reduction": "none"}),
             (rng.random((2, 3, 2)), True, {"label_smoothing": 0.3}),
             (rng.random((2, 3, 2)), True, {"weight": np.array([1.0, 0.5, 2.0])})]
    for target, prob, kw in cases:
        results = []
        for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
            args = {k: (make(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
            if kw.get("reduction") == "none":  # reduce outside, to get a scalar
                a = make(x, True)
                loss = (lib.nn.functional.cross_entropy(a, make(target), **args)
                        * make(np.array([[1.0, 2.0], [3.0, 4.0]]))).sum()
                ga, = lib.autograd.grad(loss, a, create_graph=True)
                results.append(lib.autograd.grad((ga ** 2).sum(), (a,)))
            else:
                results.append(second_derivatives(lib, make, x, target, prob, **args))
        for mine, theirs in zip(*results):
            assert_close(mine, theirs)


def test_gradients_agree_with_finite_differences():
    rng = np.random.default_rng(7)
    t = learntorch.tensor([2, 0, -100])
    w = learntorch.tensor([0.5, 1.5, 1.0], dtype=learntorch.float64)
    check_against_finite_differences(
        lambda a: F.cross_entropy(a, t, weight=w, label_smoothing=0.2, reduction="none"),
        rng.standard_normal((3, 3)))
    check_against_finite_differences(
        lambda a, b: F.cross_entropy(a, b, label_smoothing=0.2, reduction="none"),
        rng.standard_normal((3, 4)), rng.random((3, 4)))


def test_the_whole_loss_is_one_graph_node_on_top_of_the_logits():
    x = learntorch.randn(8, 10, requires_grad=True)
    logits = x * 2
    loss = F.cross_entropy(logits, learntorch.randint(0, 10, (8,)))
    assert loss.grad_fn.name() == "CrossEntropyLossBackward0"
    assert loss.grad_fn.next_functions[0][0] is logits.grad_fn


def test_changing_the_logits_in_place_after_the_loss_keeps_first_order_gradients_like_torch():
    torch = require_torch()
    x = np.random.default_rng(8).standard_normal((3, 4))
    grads = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        leaf = make(x, True)
        logits = leaf * 1.0
        loss = lib.nn.functional.cross_entropy(logits, make(np.array([0, 3, 1])))
        logits.detach().add_(5.0)  # torch's log_softmax saved its output, not the logits
        loss.backward()
        grads.append(leaf.grad)
    assert_close(*grads)


def test_second_derivatives_refuse_logits_changed_in_place_after_the_loss():
    """The first derivative needs only the saved log_softmax (as torch's); the second
    recomputes softmax from the logits, so it refuses logits changed since the loss
    (torch keeps going there, from its saved output: a documented difference)."""
    leaf = learntorch.randn(3, 4, requires_grad=True)
    logits = leaf * 1.0
    loss = F.cross_entropy(logits, learntorch.tensor([0, 3, 1]))
    logits.add_(1.0)
    g, = learntorch.autograd.grad(loss, leaf, create_graph=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*version"):
        (g * g).sum().backward()


def test_backward_twice_without_retain_graph_is_torchs_error():
    x = learntorch.randn(3, 4, requires_grad=True)
    loss = F.cross_entropy(x, learntorch.tensor([0, 3, 1]))
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_all_targets_ignored_or_zero_weight_give_torchs_nan_and_zero_gradients(reduction):
    torch = require_torch()
    x = np.random.default_rng(9).standard_normal((3, 4)).astype(np.float32)
    cases = [({}, [-100, -100, -100]), ({"label_smoothing": 0.1}, [-100, -100, -100]),
             ({"weight": np.zeros(4, np.float32)}, [1, 2, 3]),
             ({"weight": np.array([1.0, 0, 0, 1], np.float32), "label_smoothing": 0.1},
              [1, 2, -100])]
    for kw, t in cases:
        compare(x, np.array(t), kw.pop("weight", None), reduction=reduction, **kw)


def test_empty_batches_match_torch():
    compare(np.zeros((0, 5), np.float32), np.zeros(0, np.int64))
    compare(np.zeros((0, 5), np.float32), np.zeros(0, np.int64), reduction="sum")
    compare(np.zeros((0, 5), np.float32), np.zeros((0, 5), np.float32), prob=True)


def test_uint8_targets_and_negative_label_smoothing_behave_like_torch():
    x = np.random.default_rng(10).standard_normal((4, 3)).astype(np.float32)
    compare(x, np.array([0, 2, 1, 1], dtype=np.uint8))
    compare(x, np.array([0, 2, 1, 1]), label_smoothing=-0.1)  # torch: no smoothing at all
    compare(x, np.random.default_rng(1).random((4, 3)).astype(np.float32), prob=True,
            label_smoothing=-0.1)


def test_mixed_dtypes_of_probability_targets_promote_like_torch():
    torch = require_torch()
    x = np.random.default_rng(11).standard_normal((3, 4)).astype(np.float32)
    y = np.random.default_rng(12).random((3, 4))
    out = compare(x, y, prob=True)  # float32 logits, float64 probabilities
    assert out.dtype is learntorch.float64
    w = np.ones(4)
    mine = F.cross_entropy(lt_tensor(x), lt_tensor(y.astype(np.float32)), weight=lt_tensor(w))
    theirs = torch.nn.functional.cross_entropy(torch_tensor(x), torch_tensor(
        y.astype(np.float32)), weight=torch_tensor(w))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def test_float16_logits_are_computed_accurately_like_torch():
    torch = require_torch()
    x = np.random.default_rng(13).standard_normal((16, 50)).astype(np.float16) * 4
    t = np.random.default_rng(14).integers(0, 50, 16)
    mine = F.cross_entropy(lt_tensor(x), lt_tensor(t), label_smoothing=0.1)
    theirs = torch.nn.functional.cross_entropy(torch_tensor(x), torch_tensor(t),
                                               label_smoothing=0.1)
    assert mine.dtype is learntorch.float16
    assert_close(mine, theirs, rtol=2e-3, atol=1e-3)


def test_both_cpu_backends_give_torchs_result_on_a_large_batch(backend):
    rng = np.random.default_rng(15)
    x = rng.standard_normal((256, 300)).astype(np.float32)
    compare(x, rng.integers(0, 300, 256), label_smoothing=0.05, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- errors
def raises(exc, match, *args, **kw):
    with pytest.raises(exc, match=match):
        F.cross_entropy(*args, **kw)


def test_a_class_number_out_of_range_is_torchs_index_error_naming_it():
    x = learntorch.randn(4, 5)
    raises(IndexError, r"Target 12 is out of bounds\..*\[0, 4\]", x,
           learntorch.tensor([0, 1, 12, 2]))
    raises(IndexError, r"Target -3 is out of bounds\.", x, learntorch.tensor([0, 1, -3, 2]))
    raises(IndexError, r"Target 7 is out of bounds\.", learntorch.randn(2, 3, 4),
           learntorch.full((2, 4), 7))


def test_target_dtypes_are_checked_with_the_fix_in_the_message():
    x = learntorch.randn(4, 5)
    raises(RuntimeError, r"expected target dtype to be Long or Byte, but got Float.*\.long\(\)",
           x, learntorch.tensor([0.0, 1.0, 1.0, 2.0]))
    raises(RuntimeError, "expected target dtype to be Long or Byte, but got Int", x,
           learntorch.tensor([0, 1, 1, 2], dtype=learntorch.int32))
    raises(RuntimeError, "Expected floating point type for target with class probabilities, "
                         "got Long", x, learntorch.zeros(4, 5, dtype=learntorch.int64))


def test_shape_mismatches_name_both_shapes():
    raises(ValueError, r"Expected input batch_size \(4\) to match target batch_size \(3\).*"
                       r"\[4, 5\].*\[3\]", learntorch.randn(4, 5), learntorch.tensor([0, 1, 1]))
    raises(RuntimeError, r"0D or 1D target tensor expected.*\[4, 5\].*\[4, 3\]",
           learntorch.randn(4, 5), learntorch.zeros(4, 3, dtype=learntorch.int64))
    raises(RuntimeError, r"Expected target size \[2, 4, 5\], got \[2, 4, 6\].*\[2, 3, 4, 5\]",
           learntorch.randn(2, 3, 4, 5), learntorch.zeros(2, 4, 6, dtype=learntorch.int64))
    raises(ValueError, r"For 1D input, 1D target must have size 1.*\[5\].*\[2\]",
           learntorch.randn(5), learntorch.tensor([3, 1]))


def test_option_errors_match_torch():
    x, t = learntorch.randn(4, 5), learntorch.tensor([0, 1, 1, 2])
    raises(RuntimeError, r"weight tensor should be defined either for all 5 classes.*\[3\]", x,
           t, weight=learntorch.ones(3))
    raises(RuntimeError, "expected scalar type Float but found Double", x, t,
           weight=learntorch.ones(5, dtype=learntorch.float64))
    raises(RuntimeError, "not differentiable with respect to argument 'weight'", x, t,
           weight=learntorch.ones(5, requires_grad=True))
    raises(RuntimeError, r"label_smoothing must be between 0\.0 and 1\.0\. Got: 1\.5", x, t,
           label_smoothing=1.5)
    raises(RuntimeError, "ignore_index is not supported for floating point target", x,
           learntorch.rand(4, 5), ignore_index=1)
    raises(ValueError, "avg is not a valid value for reduction", x, t, reduction="avg")
    raises(NotImplementedError, "Long", learntorch.zeros(4, 5, dtype=learntorch.int64), t)
    raises(TypeError, r"argument 'input' \(position 1\) must be Tensor, not list", [1.0, 2.0], t)
    raises(TypeError, r"argument 'weight' \(position 3\) must be Tensor, not list", x, t,
           weight=[1.0] * 5)


def test_each_error_type_is_the_one_torch_raises():
    torch = require_torch()
    cases = [((4, 5), [0, 1, 12, 2], {}), ((4, 5), [0, 1, 1], {}),
             ((2, 3, 4, 5), np.zeros((2, 4, 6), np.int64), {}),
             ((4, 5), [0, 1, 1, 2], {"label_smoothing": 1.5}),
             ((4, 5), [0, 1, 1, 2], {"reduction": "avg"})]
    for shape, target, kw in cases:
        kinds = []
        for lib in (learntorch, torch):
            try:
                lib.nn.functional.cross_entropy(lib.zeros(shape), lib.tensor(np.array(target)),
                                                **kw)
                kinds.append(None)
            except Exception as e:  # noqa: BLE001 - the type is what is compared
                kinds.append(type(e))
        assert kinds[0] is kinds[1] and kinds[0] is not None, (shape, target, kw, kinds)


# ---- the fused kernels (backends/numba_cpu/cross_entropy.py): a classifier's batch ----------
class CountingNumba(NumbaBackend):
    """The Numba backend, counting the calls its cross-entropy kernels served."""

    served = 0

    def _cross_entropy_kernel_serves(self, *args):
        ok = super()._cross_entropy_kernel_serves(*args)
        self.served += ok
        return ok


def fused_batch(rng, dtype, ignore_index=-100, ignored=0.0, n=160, classes=10):
    x = rng.standard_normal((n, classes)).astype(dtype) * 4
    return x, class_targets(rng, n, classes, ignore_index, ignored)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index,ignored", [(-100, 0.0), (3, 0.3), (-1, 1.0)])
def test_a_batch_large_enough_for_the_fused_kernels_matches_torch(dtype, reduction,
                                                                   ignore_index, ignored):
    rng = np.random.default_rng(11)
    x, t = fused_batch(rng, dtype, ignore_index, ignored)
    assert x.size >= NumbaBackend.layer_min_sizes["cross_entropy"]
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    with learntorch.backends.use(CountingNumba()) as backend:
        compare(x, t, ignore_index=ignore_index, reduction=reduction, **tol)
    assert backend.served >= 2  # the kernels ran, forward and backward


def test_the_fused_kernels_agree_with_the_numpy_reference():
    rng = np.random.default_rng(12)
    x, t = fused_batch(rng, np.float64, ignore_index=2, ignored=0.2)
    x[5, :] = [1000.0, -1000.0] * 5  # stays finite
    results = []
    for backend in (CountingNumba(), learntorch.backends.NumpyBackend()):
        with learntorch.backends.use(backend):
            logits = learntorch.tensor(x, requires_grad=True)
            loss = F.cross_entropy(logits, learntorch.tensor(t), ignore_index=2)
            loss.backward()
            results.append((loss.detach(), logits.grad))
        assert getattr(backend, "served", 2) == 2
    assert np.isfinite(results[0][1].numpy()).all()
    assert_close(results[0][0], results[1][0], rtol=1e-13)
    assert_close(results[0][1], results[1][1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("options", [dict(weight=np.ones(10)), dict(label_smoothing=0.1),
                                     dict(target_dtype=np.uint8), dict(transposed=True)])
def test_what_the_kernels_do_not_take_goes_to_the_numpy_reference(options):
    rng = np.random.default_rng(15)
    x, t = fused_batch(rng, np.float32)
    if options.pop("transposed", False):
        x = np.ascontiguousarray(x.T).T
    t = t.astype(options.pop("target_dtype", np.int64))
    weight = options.pop("weight", None)
    kw = dict(options, weight=None if weight is None else learntorch.tensor(weight,
                                                                              dtype=learntorch.float32))
    with learntorch.backends.use(CountingNumba()) as backend:
        logits = learntorch.tensor(x, requires_grad=True)
        F.cross_entropy(logits, learntorch.tensor(t), **kw).backward()
    assert backend.served == 0
    compare(x, t, None if weight is None else weight.astype(np.float32), **options)


def test_a_fused_batch_with_a_class_number_out_of_range_raises_torchs_index_error():
    rng = np.random.default_rng(13)
    x, t = fused_batch(rng, np.float32)
    t[17] = 10
    with learntorch.backends.use(CountingNumba()) as backend:
        with pytest.raises(IndexError, match="Target 10 is out of bounds"):
            F.cross_entropy(learntorch.tensor(x), learntorch.tensor(t))
    assert backend.served == 1


def test_second_derivatives_through_a_fused_node_match_torch():
    torch = require_torch()
    rng = np.random.default_rng(14)
    x, t = fused_batch(rng, np.float64, ignore_index=4, ignored=0.2)
    results = []
    with learntorch.backends.use(CountingNumba()) as backend:
        for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
            results.append(second_derivatives(lib, make, x, t, False, ignore_index=4))
    assert backend.served >= 2
    for mine, theirs in zip(*results):
        assert_close(mine, theirs)
