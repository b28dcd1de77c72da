"""BatchNorm1d/2d/3d, LayerNorm, F.batch_norm and F.layer_norm against torch."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import both_raise, assert_close, check_against_finite_differences, require_torch
from test_layers_oracle import compare_with_torch, copy_from_torch, strided

F32 = dict(rtol=1e-5, atol=1e-6)
F64 = dict(rtol=1e-10, atol=1e-12)


def random(shape, dtype=np.float32, seed=0, scale=1.0, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(dtype)


def randomize(torch_layer, seed=0):
    """Give a torch layer non-default parameters and running statistics (then copy them)."""
    torch = require_torch()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in torch_layer.parameters():
            p.copy_(torch.rand(p.shape, generator=g) + 0.5)
        if getattr(torch_layer, "running_mean", None) is not None:
            torch_layer.running_mean.normal_(0, 1, generator=g)
            torch_layer.running_var.uniform_(0.5, 2.0, generator=g)
    return torch_layer


BATCH_NORMS = [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)),
               ("BatchNorm2d", (4, 3, 5, 6)), ("BatchNorm3d", (2, 3, 2, 3, 4))]


def bn_pair(name, dtype=np.float32, **kwargs):
    torch = require_torch()
    lt, t = getattr(nn, name)(3, **kwargs), randomize(getattr(torch.nn, name)(3, **kwargs))
    if dtype == np.float64:
        lt, t = lt.double(), t.double()
    return lt, t


# ---------------------------------------------------------------- BatchNorm, training mode
@pytest.mark.parametrize("name, shape", BATCH_NORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batchnorm_training_forward_and_gradients_equal_torch(name, shape, dtype):
    lt, t = bn_pair(name, dtype)
    x = random(shape, dtype, scale=2.0, shift=0.5)
    compare_with_torch(lt, t, x, **(F32 if dtype == np.float32 else F64))
    for key in ("running_mean", "running_var", "num_batches_tracked"):
        assert_close(lt.state_dict()[key], t.state_dict()[key], 1e-6, 1e-7, key)


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("name, shape", BATCH_NORMS[1:3])
def test_batchnorm_running_stats_after_several_steps_then_eval_equal_torch(name, shape,
                                                                           momentum):
    torch = require_torch()
    lt, t = bn_pair(name, momentum=momentum)
    copy_from_torch(lt, t)
    for step in range(4):
        x = random(shape, seed=step, scale=1 + step, shift=step)
        out, expected = lt(learntorch.tensor(x)), t(torch.tensor(x))
        assert_close(out, expected, **F32)
    for key, value in t.state_dict().items():
        assert_close(lt.state_dict()[key], value, 1e-6, 1e-6, key)
    assert lt.num_batches_tracked.dtype is learntorch.int64 and lt.num_batches_tracked.item() == 4
    lt.eval(), t.eval()
    compare_with_torch(lt, t, random(shape, seed=9), copy=False, **F32)
    assert lt.num_batches_tracked.item() == 4  # eval mode leaves the statistics alone


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_batchnorm_on_non_contiguous_input_equals_torch(layout):
    lt, t = bn_pair("BatchNorm2d")
    compare_with_torch(lt, t, strided(random((4, 3, 5, 6), shift=1.0), layout), **F32)
    lt.eval(), t.eval()
    compare_with_torch(lt, t, strided(random((4, 3, 5, 6), seed=1), layout), copy=False, **F32)


@pytest.mark.parametrize("kwargs", [dict(affine=False), dict(bias=False),
                                    dict(track_running_stats=False),
                                    dict(affine=False, track_running_stats=False, momentum=None),
                                    dict(eps=1e-3, momentum=0.3)])
def test_batchnorm_options_repr_state_dict_and_both_modes_equal_torch(kwargs):
    torch = require_torch()
    lt, t = nn.BatchNorm1d(3, **kwargs), torch.nn.BatchNorm1d(3, **kwargs)
    assert repr(lt) == repr(t)
    assert list(lt.state_dict()) == list(t.state_dict())
    assert [n for n, _ in lt.named_buffers()] == [n for n, _ in t.named_buffers()]
    randomize(t)
    compare_with_torch(lt, t, random((6, 3, 4), shift=2.0), **F32)
    lt.eval(), t.eval()  # without running stats, eval mode normalises with the batch's own
    compare_with_torch(lt, t, random((6, 3, 4), seed=1), copy=False, **F32)


def test_batchnorm_default_init_and_buffers_match_torch():
    torch = require_torch()
    lt, t = nn.BatchNorm2d(4), torch.nn.BatchNorm2d(4)
    for (name, mine), theirs in zip(lt.state_dict().items(), t.state_dict().values()):
        assert_close(mine, theirs, 0, 0, name)
        assert mine.dtype.name == str(theirs.dtype).replace("torch.", "")
    lt.double()
    assert lt.running_var.dtype is learntorch.float64
    assert lt.num_batches_tracked.dtype is learntorch.int64  # integers are not converted


def test_batchnorm_reset_running_stats():
    layer = nn.BatchNorm1d(3)
    layer(learntorch.randn(5, 3) * 4 + 2)
    layer.reset_running_stats()
    assert np.array_equal(layer.running_mean.numpy(), np.zeros(3, np.float32))
    assert np.array_equal(layer.running_var.numpy(), np.ones(3, np.float32))
    assert layer.num_batches_tracked.item() == 0


def test_batchnorm_half_input_with_float_parameters_like_torch():
    lt, t = bn_pair("BatchNorm1d")
    out, _ = compare_with_torch(lt, t, random((8, 3, 4), np.float16), rtol=1e-2, atol=1e-2)
    assert out.dtype is learntorch.float16


def test_batchnorm_empty_batch_like_torch():
    torch = require_torch()
    lt, t = bn_pair("BatchNorm1d")
    out, _ = compare_with_torch(lt, t, random((0, 3)))
    assert tuple(out.shape) == (0, 3)
    assert_close(lt.running_mean, t.running_mean, 0, 0)
    assert np.array_equal(lt.weight.grad.numpy(), np.zeros(3, np.float32))
    assert torch.equal(t.num_batches_tracked, torch.tensor(1))


# ---------------------------------------------------------------- F.batch_norm
def test_f_batch_norm_gradients_equal_finite_differences_in_both_modes():
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((4, 3, 2)), rng.uniform(0.5, 1.5, 3), rng.standard_normal(3)
    check_against_finite_differences(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b, rtol=1e-5,
        atol=1e-6)
    mean = learntorch.tensor(rng.standard_normal(3))
    var = learntorch.tensor(rng.uniform(0.5, 2, 3))
    check_against_finite_differences(
        lambda x, w, b: F.batch_norm(x, mean, var, w, b, training=False), x, w, b)


def test_f_batch_norm_updates_running_stats_in_place_only_in_training():
    mean, var = learntorch.zeros(3), learntorch.ones(3)
    x = learntorch.randn(6, 3) + 5
    F.batch_norm(x, mean, var, training=False)
    assert np.array_equal(mean.numpy(), np.zeros(3, np.float32))
    version = mean._version
    F.batch_norm(x, mean, var, training=True, momentum=0.5)
    expected = 0.5 * x.numpy().mean(0)
    np.testing.assert_allclose(mean.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(var.numpy(), 0.5 + 0.5 * x.numpy().var(0, ddof=1), rtol=1e-5)
    assert mean._version > version


@pytest.mark.parametrize("training", [True, False])
def test_f_batch_norm_second_derivatives_equal_torch(training):
    torch = require_torch()
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((5, 3, 2)), rng.uniform(0.5, 1.5, 3), rng.standard_normal(3)
    m, v = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    results = []
    for lib in (learntorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = lib.nn.functional.batch_norm(xs[0], lib.tensor(m), lib.tensor(v), xs[1], xs[2],
                                         training=training)
        gx, gw = lib.autograd.grad((y ** 3).sum(), xs[:2], create_graph=True)
        ((gx ** 2).sum() + (gw ** 2).sum()).backward()
        results.append([t.grad for t in xs])
    for mine, theirs, name in zip(*results, ("x", "weight", "bias")):
        assert_close(mine, theirs, 1e-9, 1e-9, f"second derivative w.r.t. {name}")


def test_batchnorm_is_one_graph_node_with_torch_name():
    x = learntorch.randn(4, 3, requires_grad=True)
    y = nn.BatchNorm1d(3)(x)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    assert len(y.grad_fn.next_functions) >= 3



@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 4, 5)), ["expected 2D or 3D input",
                                                                 "got 4D input"]),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(3)), ["got 1D input"]),
    (lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(2, 3, 4)), ["expected 4D input"]),
    (lambda lib: lib.nn.BatchNorm3d(3)(lib.randn(2, 3, 4, 4)), ["expected 5D input"]),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 4)), ["running_mean", "3", "4"]),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3)), ["more than 1 value per channel"]),
    (lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(1, 3, 1, 1)), ["more than 1 value"]),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 3).double()), ["float64", "float32"]),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.tensor([[1, 2, 3], [4, 5, 6]])), ["int64"]),
    (lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3), None, None), ["evaluation"]),
    (lambda lib: lib.nn.functional.batch_norm(lib.randn(3, 3), lib.zeros(3), None,
                                              training=True), ["both be None"]),
    (lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3), lib.zeros(3), lib.ones(3),
                                              lib.ones(4), training=True), ["weight", "4"]),
    (lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3), None, None, training=True,
                                              eps=0), ["eps", "positive"]),
    (lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3), lib.zeros(3), lib.ones(3),
                                              eps=-1), ["eps", "non-negative"]),
])
def test_batchnorm_errors_have_torch_type(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message


# ---------------------------------------------------------------- LayerNorm
LAYER_NORMS = [(6, (4, 6)), (6, (2, 3, 6)), ((3, 6), (2, 3, 6)), ([2, 3, 6], (2, 3, 6)),
               (6, (6,))]


@pytest.mark.parametrize("normalized_shape, shape", LAYER_NORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layernorm_forward_and_gradients_equal_torch(normalized_shape, shape, dtype):
    torch = require_torch()
    lt, t = nn.LayerNorm(normalized_shape), randomize(torch.nn.LayerNorm(normalized_shape))
    if dtype == np.float64:
        lt, t = lt.double(), t.double()
    x = strided(random(shape, dtype, scale=3.0, shift=1.0), "strided")
    compare_with_torch(lt, t, x, **(F32 if dtype == np.float32 else F64))


@pytest.mark.parametrize("kwargs", [{}, dict(elementwise_affine=False), dict(bias=False),
                                    dict(eps=1e-3)])
def test_layernorm_options_repr_and_state_dict_equal_torch(kwargs):
    torch = require_torch()
    lt, t = nn.LayerNorm((3, 4), **kwargs), torch.nn.LayerNorm((3, 4), **kwargs)
    assert repr(lt) == repr(t)
    assert list(lt.state_dict()) == list(t.state_dict())
    for (name, mine), theirs in zip(lt.state_dict().items(), t.state_dict().values()):
        assert_close(mine, theirs, 0, 0, name)  # default init: weight ones, bias zeros
    randomize(t)
    compare_with_torch(lt, t, random((2, 3, 4)), **F32)
    lt.eval(), t.eval()  # no running state: the same in eval mode
    compare_with_torch(lt, t, random((2, 3, 4), seed=1), copy=False, **F32)


def test_f_layer_norm_gradients_equal_finite_differences():
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((3, 2, 4)), rng.uniform(0.5, 1.5, (2, 4)), rng.standard_normal(
        (2, 4))
    check_against_finite_differences(lambda x, w, b: F.layer_norm(x, (2, 4), w, b), x, w, b)


def test_f_layer_norm_second_derivatives_equal_torch():
    torch = require_torch()
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 5)), rng.uniform(0.5, 1.5, 5), rng.standard_normal(5)
    results = []
    for lib in (learntorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = lib.nn.functional.layer_norm(xs[0], (5,), xs[1], xs[2])
        gx, gw = lib.autograd.grad((y ** 3).sum(), xs[:2], create_graph=True)
        ((gx ** 2).sum() + (gw ** 2).sum()).backward()
        results.append([t.grad for t in xs])
    for mine, theirs, name in zip(*results, ("x", "weight", "bias")):
        assert_close(mine, theirs, 1e-9, 1e-9, f"second derivative w.r.t. {name}")


def test_layernorm_is_one_graph_node_with_torch_name():
    y = nn.LayerNorm(3)(learntorch.randn(2, 3, requires_grad=True))
    assert y.grad_fn.name() == "NativeLayerNormBackward0"


@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.LayerNorm(4)(lib.randn(2, 3)), ["[4]", "[*, 4]", "[2, 3]"]),
    (lambda lib: lib.nn.LayerNorm((2, 3))(lib.randn(3, 2)), ["[*, 2, 3]"]),
    (lambda lib: lib.nn.LayerNorm((2, 3))(lib.randn(3)), ["[3]"]),
    (lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3), (3,), lib.ones(4)),
     ["weight", "[4]"]),
    (lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3), (3,), None, lib.ones(3, 1)),
     ["bias", "[3, 1]"]),
    (lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3), 3), ["tuple of ints"]),
    (lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3), []), ["at least 1"]),
    (lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3), (3,), lib.ones(3).double()),
     ["float64"]),
    (lambda lib: lib.nn.functional.layer_norm(lib.tensor([[1, 2]]), (2,)), ["int64"]),
])
def test_layernorm_errors_have_torch_type(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message
