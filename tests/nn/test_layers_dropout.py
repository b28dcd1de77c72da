"""nn.Dropout, F.dropout and the channel-wise Dropout1d/2d: inverted dropout, checked by its
statistics and against torch."""
import warnings

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import both_raise, require_torch

N = 200_000  # elements for the statistical checks: the kept fraction is known to ~0.1%


def ones(n=N, dtype=learntorch.float32):
    return learntorch.ones(n, dtype=dtype)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_kept_fraction_is_one_minus_p(p):
    kept = (F.dropout(ones(), p).numpy() != 0).mean()
    sigma = np.sqrt(p * (1 - p) / N)
    assert abs(kept - (1 - p)) < 5 * sigma


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.75])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kept_values_are_scaled_by_one_over_one_minus_p_exactly_as_torch(p, dtype):
    torch = require_torch()
    x = np.random.default_rng(0).standard_normal(1000).astype(dtype)
    # torch divides the 0/1 mask by (1 - p) in the input's dtype, then multiplies
    expected = x * (dtype(1) / dtype(1 - p))
    mine = F.dropout(learntorch.tensor(x), p).numpy()
    theirs = torch.nn.functional.dropout(torch.tensor(x), p).numpy()
    for out in (mine, theirs):
        kept = out != 0
        assert out.dtype == dtype
        assert np.array_equal(out[kept], expected[kept])  # bit for bit
        assert np.all(out[~kept] == 0)


def test_gradient_is_the_same_mask_times_the_scale():
    x = learntorch.randn(10_000, requires_grad=True)
    y = F.dropout(x, 0.3)
    g = learntorch.randn(10_000)
    y.backward(g)
    kept = y.detach().numpy() != 0
    scale = np.float32(1) / np.float32(0.7)
    assert np.array_equal(x.grad.numpy(), np.where(kept, g.numpy() * scale, 0))
    assert y.grad_fn.name() == "MulBackward0"  # torch's node: input * mask


def test_mask_comes_from_the_seeded_default_generator():
    def draw(seed):
        learntorch.manual_seed(seed)
        return F.dropout(ones(1000), 0.5).numpy()
    assert np.array_equal(draw(3), draw(3))
    assert not np.array_equal(draw(3), draw(4))
    learntorch.manual_seed(3)
    first, second = F.dropout(ones(1000), 0.5).numpy(), F.dropout(ones(1000), 0.5).numpy()
    assert not np.array_equal(first, second)  # each call draws a new mask


def test_eval_mode_and_p_zero_return_the_input_itself_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        x = lib.randn(5, requires_grad=True)
        assert lib.nn.functional.dropout(x, 0.5, training=False) is x
        assert lib.nn.functional.dropout(x, 0.0) is x
        layer = lib.nn.Dropout(0.5).eval()
        assert layer(x) is x
        assert lib.nn.functional.dropout(lib.tensor([1, 2]), 0.5, training=False).dtype == \
            lib.int64


def test_p_one_drops_everything_and_the_gradient_is_zero():
    torch = require_torch()
    for lib in (learntorch, torch):
        x = lib.randn(6, requires_grad=True)
        y = lib.nn.functional.dropout(x, 1.0)
        assert np.array_equal(y.detach().numpy(), np.zeros(6, np.float32))
        y.sum().backward()
        assert np.array_equal(x.grad.numpy(), np.zeros(6, np.float32))
        assert y.grad_fn.name() == "MulBackward0"


def test_module_drops_in_training_mode_only():
    layer = nn.Dropout(0.5)
    x = ones(1000)
    assert (layer(x).numpy() == 0).any()
    layer.eval()
    assert np.array_equal(layer(x).numpy(), x.numpy())
    layer.train()
    assert (layer(x).numpy() == 0).any()


def test_inplace_dropout_writes_into_the_input_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        x = lib.ones(1000)
        y = lib.nn.functional.dropout(x, 0.5, inplace=True)
        assert y is x and (x.numpy() == 0).any() and (x.numpy() == 2).any()
        with pytest.raises(RuntimeError, match="leaf"):
            lib.nn.functional.dropout(lib.ones(3, requires_grad=True), 0.5, inplace=True)
        a = lib.ones(1000, requires_grad=True)
        b = a * 1
        lib.nn.Dropout(0.5, inplace=True)(b).sum().backward()
        assert np.array_equal(a.grad.numpy(), b.detach().numpy())  # grad = mask * scale


def test_repr_and_state_dict_match_torch():
    torch = require_torch()
    for args in ((), (0.2,), (0.2, True)):
        assert repr(nn.Dropout(*args)) == repr(torch.nn.Dropout(*args))
        assert list(nn.Dropout(*args).state_dict()) == []



@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.nn.functional.dropout(lib.randn(3), 1.5), ["between 0 and 1", "1.5"]),
    (lambda lib: lib.nn.functional.dropout(lib.randn(3), -0.1), ["-0.1"]),
    (lambda lib: lib.nn.Dropout(2), ["between 0 and 1", "2"]),
    (lambda lib: lib.nn.Dropout(-1), ["-1"]),
    (lambda lib: lib.nn.functional.dropout(lib.tensor([1, 2]), 0.5), ["int64", "float"]),
    (lambda lib: lib.nn.functional.dropout([1.0], 0.5), ["Tensor", "list"]),
])
def test_dropout_errors_have_torch_type(call, words):
    message = both_raise(call)
    for word in words:
        assert word in message


# ---------------------------------------------------------------- channel-wise dropout
@pytest.mark.parametrize("name, shape, kept_dims", [
    ("dropout2d", (8, 16, 5, 4), 2), ("dropout2d", (16, 5, 4), 2),   # 3-D: read as (N, C, L)
    ("dropout1d", (8, 16, 7), 2), ("dropout1d", (16, 7), 1),         # 2-D: one sample (C, L)
])
def test_channel_dropout_keeps_or_drops_whole_channels_scaled_by_one_over_one_minus_p(
        name, shape, kept_dims):
    x = learntorch.randn(*shape, dtype=learntorch.float64).abs() + 1   # no zeros of its own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # dropout2d's 3-D deprecation notice
        y = getattr(F, name)(x, 0.4).numpy()
    kept = y != 0
    per_channel = kept.reshape(shape[:kept_dims] + (-1,))
    assert np.all(per_channel == per_channel[..., :1])       # one decision per channel
    np.testing.assert_array_equal(y[kept], x.numpy()[kept] * (1 / (1 - 0.4)))
    assert 0 < per_channel[..., 0].mean() < 1


def test_dropout2d_warns_like_torch_on_inputs_that_are_not_images():
    torch = require_torch()
    for lib in (torch, learntorch):
        with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4), 0.5)
        with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 4, 2), 0.5)


def test_channel_dropout_gradient_is_the_mask_and_the_node_is_torchs():
    x = learntorch.randn(4, 6, 3, 3, requires_grad=True)
    y = F.dropout2d(x, 0.5)
    assert y.grad_fn.name() == "MulBackward0"
    g = learntorch.randn(4, 6, 3, 3)
    y.backward(g)
    mask = (y.detach().numpy() != 0)
    np.testing.assert_array_equal(x.grad.numpy(), np.where(mask, g.numpy() * np.float32(2), 0))


def test_channel_dropout_follows_the_seed_and_eval_returns_the_input():
    def draw(seed):
        learntorch.manual_seed(seed)
        return F.dropout2d(learntorch.ones(4, 8, 2, 2), 0.5).numpy()
    assert np.array_equal(draw(1), draw(1)) and not np.array_equal(draw(1), draw(2))
    x = learntorch.randn(2, 3, 4, 4)
    assert F.dropout2d(x, 0.5, training=False) is x
    assert nn.Dropout2d(0.3).eval()(x) is x
    x3 = learntorch.randn(2, 3, 4)
    assert nn.Dropout1d().eval()(x3) is x3


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.dropout2d(lib.randn(4), 0.5),
    lambda lib: lib.nn.functional.dropout1d(lib.randn(2, 3, 4, 4), 0.5),
    lambda lib: lib.nn.functional.dropout2d(lib.randn(2, 3, 4, 4), 1.5),
    lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 4, dtype=lib.int64), 0.5),
    lambda lib: lib.nn.Dropout2d(1.5),
])
def test_channel_dropout_errors_have_torch_type(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert both_raise(call)


def test_channel_dropout_modules_print_like_torch():
    torch = require_torch()
    for cls in ("Dropout1d", "Dropout2d"):
        for args in ((), (0.2,), (0.2, True)):
            assert repr(getattr(nn, cls)(*args)) == repr(getattr(torch.nn, cls)(*args))
