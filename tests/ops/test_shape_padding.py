"""Constant padding (``torch.nn.functional.pad``): values and gradients vs torch.

``pad(input, (left, right, top, bottom, ...))`` lists pairs from the *last*
dim backwards; a negative width crops.  Backward cuts added borders off and
gives cropped elements a zero gradient.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from learntorch.ops.padding import pad
from oracle import arrays, check_against_torch, require_torch, torch


def torch_pad(*args, **kwargs):
    return torch.nn.functional.pad(*args, **kwargs)


@st.composite
def padding_for(draw, shape):
    """Widths for the last k dims, negative ones allowed as long as a dim stays >= 0."""
    k = draw(st.integers(1, len(shape)))
    widths = []
    for size in reversed(shape[len(shape) - k:]):
        left = draw(st.integers(-size, 2))
        right = draw(st.integers(-(size + min(left, 0)), 2))
        widths += [left, right]
    return tuple(widths)


@given(st.data())
def test_pad_values_and_gradients_match_torch(data):
    require_torch()
    a = data.draw(arrays(min_dims=1), label="a")
    widths = data.draw(padding_for(a.shape), label="pad")
    value = data.draw(st.sampled_from([None, 0.0, -1.5]), label="value")
    kwargs = {} if value is None else {"value": value}
    check_against_torch(lambda x: pad(x, widths, **kwargs),
                        lambda x: torch_pad(x, widths, **kwargs), a)


@pytest.mark.parametrize("widths", [(-1, 2), (-1, -1, 1, -1), (2, -3), (0, 0, -2, 0)])
def test_negative_padding_crops_and_its_gradient_is_zero_outside(widths):
    check_against_torch(lambda x: pad(x, widths, value=7.0),
                        lambda x: torch_pad(x, widths, value=7.0),
                        np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("widths, error", [((1,), RuntimeError), ((1,) * 6, RuntimeError),
                                           ((-3, -2), RuntimeError)])
def test_bad_padding_raises_torchs_exception_type(widths, error):
    require_torch()
    with pytest.raises(error):
        torch_pad(torch.zeros(3, 4), widths)
    with pytest.raises(error) as info:
        pad(learntorch.zeros(3, 4), widths)
    assert str(widths[0]) in str(info.value) or str(len(widths)) in str(info.value)


def test_pad_of_an_integer_tensor_keeps_its_dtype():
    require_torch()
    got = pad(learntorch.ones(2, dtype=learntorch.int64), (1, 1), value=3)
    expected = torch_pad(torch.ones(2, dtype=torch.int64), (1, 1), value=3)
    assert got.tolist() == expected.tolist() and got.dtype == learntorch.int64
