"""nn.MaxPool2d, nn.AvgPool2d and nn.AdaptiveAvgPool2d against torch: repr, attributes, output."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
from oracle import require_torch
from test_layers_oracle import compare_with_torch

CONSTRUCTIONS = [
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", (3, 1, 1, 2, True, True), {}),
    ("MaxPool2d", ((2, 3),), dict(return_indices=True)),
    ("MaxPool2d", (2,), dict(stride=(1, 2))),
    ("MaxPool2d", ([2, 2],), dict(stride=[1, 1])),
    ("AvgPool2d", (2,), {}),
    ("AvgPool2d", (3, 2, 1, True, False, 2), {}),
    ("AvgPool2d", ((2, 3),), dict(stride=(1, 2), padding=(0, 1))),
    ("AvgPool2d", ((2, 2),), dict(stride=[1, 1])),
    ("AdaptiveAvgPool2d", (2,), {}),
    ("AdaptiveAvgPool2d", ((None, 3),), {}),
    ("AdaptiveAvgPool2d", ([2, 2],), {}),
]


@pytest.mark.parametrize("cls, args, kwargs", CONSTRUCTIONS)
def test_repr_and_attributes_equal_torchs(cls, args, kwargs):
    torch = require_torch()
    ours, theirs = getattr(nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    names = {"MaxPool2d": ["kernel_size", "stride", "padding", "dilation", "return_indices",
                           "ceil_mode"],
             "AvgPool2d": ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                           "divisor_override"],
             "AdaptiveAvgPool2d": ["output_size"]}[cls]
    for name in names:
        assert getattr(ours, name) == getattr(theirs, name), name
    assert list(ours.parameters()) == []


LAYERS = [
    ("MaxPool2d", (2,), {}, (2, 3, 8, 7)),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 8, 7)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 8, 7)),
    ("AvgPool2d", (2,), {}, (3, 6, 6)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 8, 7)),
]


@pytest.mark.parametrize("cls, args, kwargs, x_shape", LAYERS)
def test_layer_output_and_gradient_equal_torch(cls, args, kwargs, x_shape):
    torch = require_torch()
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    compare_with_torch(getattr(nn, cls)(*args, **kwargs),
                       getattr(torch.nn, cls)(*args, **kwargs), x)


def test_max_pool_layer_with_return_indices_returns_values_and_torchs_indices():
    torch = require_torch()
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    out, idx = nn.MaxPool2d(3, 2, 1, return_indices=True)(learntorch.tensor(x))
    t_out, t_idx = torch.nn.MaxPool2d(3, 2, 1, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


def test_a_bad_window_is_reported_when_the_layer_runs_like_torch():
    torch = require_torch()
    torch.nn.MaxPool2d(3, padding=2)  # torch accepts it here...
    layer = nn.MaxPool2d(3, padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        layer(learntorch.zeros(1, 1, 7, 7))  # ...and refuses it at forward, as learntorch does
