"""nn.Conv1d, nn.Conv2d and their transposes against torch: parameters, default
initialisation, repr, forward and gradients with torch's weights (padding modes included),
errors; and the small CNN of the course."""
import math

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import require_torch
from test_layers_oracle import compare_with_torch, copy_from_torch, strided

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


def random(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CONSTRUCTIONS = [
    ("Conv2d", (1, 8, 3), {}),
    ("Conv2d", (1, 8, 3), dict(padding=1)),
    ("Conv2d", (4, 8, (3, 5)), dict(stride=2, padding=(1, 2), dilation=2, groups=2, bias=False)),
    ("Conv2d", (4, 8, 3), dict(padding="same")),
    ("Conv2d", (4, 8, (2, 4)), dict(padding="same", dilation=(1, 2))),
    ("Conv2d", (4, 8, 3), dict(padding="valid")),
    ("Conv2d", (2, 4, [3, 3]), dict(stride=[1, 2])),
    ("Conv2d", (6, 6, 3), dict(groups=6)),
    ("Conv1d", (4, 8, 3), dict(stride=2, padding=1)),
    ("Conv1d", (2, 4, 3), dict(padding="same")),
    ("Conv1d", (2, 4, (3,)), dict(dilation=2, bias=False)),
    ("Conv2d", (2, 4, 3), dict(padding=1, padding_mode="reflect")),
    ("Conv2d", (2, 4, 3), dict(padding="same", padding_mode="circular")),
    ("ConvTranspose2d", (3, 4, 3), {}),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(stride=2, padding=(1, 0), output_padding=1,
                                             groups=2, dilation=(1, 2), bias=False)),
    ("ConvTranspose1d", (3, 4, 3), dict(stride=3, output_padding=2)),
]


@pytest.mark.parametrize("cls, args, kwargs", CONSTRUCTIONS)
def test_repr_attributes_and_parameters_equal_torchs(cls, args, kwargs):
    torch = require_torch()
    ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                 "groups", "padding_mode", "transposed", "output_padding",
                 "_reversed_padding_repeated_twice"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]


@pytest.mark.parametrize("groups", [1, 2])
def test_default_initialisation_is_uniform_within_one_over_sqrt_fan_in(groups):
    layer = nn.Conv2d(8, 64, (3, 5), groups=groups)
    bound = 1 / math.sqrt(8 // groups * 15)
    for p in (layer.weight, layer.bias):
        values = p.detach().numpy()
        assert np.abs(values).max() <= bound
    w = layer.weight.detach().numpy()  # thousands of draws: the spread of U(-b, b)
    assert abs(w.mean()) < 0.05 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(w).max() > 0.95 * bound


def test_initialisation_follows_the_seed():
    learntorch.manual_seed(3)
    a = nn.Conv1d(2, 3, 4)
    learntorch.manual_seed(3)
    b = nn.Conv1d(2, 3, 4)
    np.testing.assert_array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    np.testing.assert_array_equal(a.bias.detach().numpy(), b.bias.detach().numpy())


LAYERS = [
    ("Conv2d", (3, 4, 3), {}, (2, 3, 8, 7)),
    ("Conv2d", (4, 6, (3, 2)), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
     (3, 4, 9, 8)),
    ("Conv2d", (2, 4, 2), dict(padding="same", bias=False), (1, 2, 5, 6)),
    ("Conv2d", (3, 4, 3), dict(padding=1), (3, 6, 6)),                   # unbatched
    ("Conv1d", (3, 4, 3), dict(stride=2, padding=1), (2, 3, 9)),
    ("Conv1d", (4, 4, 3), dict(groups=4, padding="same"), (4, 7)),       # unbatched, depthwise
    ("Conv2d", (3, 4, 3), dict(padding=(1, 2), padding_mode="reflect"), (2, 3, 6, 7)),
    ("Conv2d", (3, 4, 3), dict(padding=1, padding_mode="replicate", stride=2), (2, 3, 6, 7)),
    ("Conv2d", (2, 4, (2, 3)), dict(padding="same", padding_mode="circular"), (1, 2, 5, 6)),
    ("Conv1d", (3, 4, 3), dict(padding=2, padding_mode="reflect"), (2, 3, 9)),
    ("Conv1d", (3, 4, 3), dict(padding=1, padding_mode="circular"), (3, 9)),  # unbatched
    ("ConvTranspose2d", (3, 4, 3), {}, (2, 3, 5, 6)),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                             groups=2, dilation=(2, 1)), (2, 4, 5, 4)),
    ("ConvTranspose2d", (3, 2, 4), dict(stride=2, padding=1, bias=False), (3, 4, 4)),  # unbatched
    ("ConvTranspose1d", (3, 4, 3), dict(stride=2, padding=1, output_padding=1), (2, 3, 7)),
]


@pytest.mark.parametrize("cls, args, kwargs, x_shape", LAYERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_output_and_gradients_equal_torch_with_torchs_weights(cls, args, kwargs, x_shape,
                                                                    dtype):
    torch = require_torch()
    ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    if dtype == np.float64:
        ours, theirs = ours.double(), theirs.double()
    compare_with_torch(ours, theirs, random(x_shape, dtype), **tol)


def test_layer_on_a_non_contiguous_input_equals_torch():
    torch = require_torch()
    compare_with_torch(nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(3, 4, 3, padding=1),
                       strided(random((2, 3, 6, 5)), "transposed"), rtol=1e-4, atol=1e-5)


def test_dtype_argument_makes_float64_parameters():
    layer = nn.Conv2d(2, 3, 3, dtype=learntorch.float64)
    assert layer.weight.dtype == layer.bias.dtype == learntorch.float64


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("args, kwargs, text", [
    ((3, 8, 3), dict(groups=2), "in_channels must be divisible by groups"),
    ((4, 6, 3), dict(groups=4), "out_channels must be divisible by groups"),
    ((4, 8, 3), dict(groups=0), "groups must be a positive integer"),
    ((4, 8, 3), dict(padding="foo"), "Invalid padding string 'foo'"),
    ((4, 8, 3), dict(stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    ((4, 8, 3), dict(padding_mode="foo"), "padding_mode must be one of"),
])
def test_bad_constructor_arguments_are_value_errors_like_torch(args, kwargs, text):
    torch = require_torch()
    with pytest.raises(ValueError, match=text):
        torch.nn.Conv2d(*args, **kwargs)
    with pytest.raises(ValueError, match=text):
        nn.Conv2d(*args, **kwargs)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_a_transposed_convolution_pads_with_zeros_only_like_torch(mode):
    torch = require_torch()
    for lib in (torch.nn, nn):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                             'ConvTranspose2d'):
            lib.ConvTranspose2d(4, 8, 3, padding_mode=mode)


@pytest.mark.parametrize("output_size", [None, (9, 10), (2, 3, 10, 11), [10, 9]])
def test_conv_transpose_output_size_picks_the_output_padding_like_torch(output_size):
    torch = require_torch()
    ours, theirs = nn.ConvTranspose2d(3, 2, 3, stride=(2, 3)), torch.nn.ConvTranspose2d(
        3, 2, 3, stride=(2, 3))
    copy_from_torch(ours, theirs)
    x = random((2, 3, 4, 3))
    out = ours(learntorch.tensor(x), output_size=output_size)
    expected = theirs(torch.tensor(x), output_size=output_size)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_conv_transpose_output_size_out_of_range_is_a_value_error_like_torch():
    torch = require_torch()
    x = random((2, 3, 4, 3))
    for lib, arr in ((torch, torch.tensor(x)), (learntorch, learntorch.tensor(x))):
        with pytest.raises(ValueError, match=r"requested an output size of \[12, 10\], but valid "
                                             r"sizes range from \[9, 9\] to \[10, 11\]"):
            lib.nn.ConvTranspose2d(3, 2, 3, stride=(2, 3))(arr, output_size=[12, 10])


def test_wrong_input_channels_give_torchs_message():
    torch = require_torch()
    x = np.zeros((2, 3, 28, 28), np.float32)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Conv2d(1, 8, 3)(torch.tensor(x))
    with pytest.raises(RuntimeError) as ours:
        nn.Conv2d(1, 8, 3)(learntorch.tensor(x))
    assert str(ours.value).startswith(str(theirs.value))
    assert str(ours.value) == ("Given groups=1, weight of size [8, 1, 3, 3], expected "
                               "input[2, 3, 28, 28] to have 1 channels, but got 3 channels "
                               "instead")


def test_a_float64_input_into_a_float32_layer_is_a_runtime_error_like_torch():
    with pytest.raises(RuntimeError, match="float64.*float32|float32.*float64"):
        nn.Conv2d(1, 2, 3)(learntorch.zeros(1, 1, 5, 5, dtype=learntorch.float64))


# ---------------------------------------------------------------- the course's CNN
def cnn(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(1, 8, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                        n.Conv2d(8, 16, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                        n.Flatten(), n.Linear(784, 10))


def test_the_digits_cnn_trains_exactly_like_torch_for_a_few_steps():
    """Same weights, same batches, plain SGD: the losses and weights stay equal to torch's."""
    torch = require_torch()
    ours, theirs = cnn(learntorch), cnn(torch)
    copy_from_torch(ours, theirs)
    rng = np.random.default_rng(0)
    for step in range(3):
        x = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
        y = rng.integers(0, 10, 32)
        losses = []
        for lib, model, fn in ((learntorch, ours, F), (torch, theirs, torch.nn.functional)):
            model.zero_grad()
            loss = fn.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            with lib.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-5), f"step {step}"
    # atol: a weight near 0 keeps the absolute rounding of its gradient, a float32 sum of
    # 32 x 28 x 28 terms that torch adds in another order (once seen: 1.3e-5 after 3 steps,
    # on a weight of 0.0098); a wrong gradient moves weights by orders of magnitude more
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=5e-5,
                                   err_msg=name)
