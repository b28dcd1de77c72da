"""``F.pad`` with mode='reflect', 'replicate' and 'circular': values, gradients, errors vs torch.

These modes pad the last 1, 2 or 3 dims of a (batch, channels, ...) or (channels, ...)
input.  Each is a gather (every output element copies one input element), so the
gradient of an input element is the sum over all the places it was copied to: the
border elements of a reflect or replicate pad collect several gradients.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
import learntorch.nn.functional as F
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, require_torch, torch, torch_tensor)

MODES = ["reflect", "replicate", "circular"]


@st.composite
def widths_for(draw, mode, shape, k):
    """(before, after) widths for the last k dims, inside torch's limits for ``mode``
    (negative widths crop; at least one padded dim keeps a size >= 1)."""
    widths = []
    for size in reversed(shape[len(shape) - k:]):
        if mode == "reflect":
            before = draw(st.integers(-(size - 1), size - 1))
            after = draw(st.integers(max(-(size + before - 1), -(size - 1)), size - 1))
        elif mode == "replicate":
            before = draw(st.integers(-(size - 1), 3))
            after = draw(st.integers(-(size + min(before, 0) - 1), 3))
        else:  # circular: crop, then wrap at most once around what is left
            crop_before = draw(st.integers(0, size - 1))
            crop_after = draw(st.integers(0, size - 1 - crop_before))
            kept = size - crop_before - crop_after
            before = -crop_before if crop_before else draw(st.integers(0, kept))
            after = -crop_after if crop_after else draw(st.integers(0, kept))
        widths += [before, after]
    return tuple(widths)


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data())
def test_pad_mode_values_and_gradients_match_torch(mode, data):
    require_torch()
    k = data.draw(st.integers(1, 3), label="padded dims")
    batched = data.draw(st.booleans(), label="batched")
    a = data.draw(arrays(min_dims=k + 1 + batched, max_dims=k + 1 + batched, max_side=4), label="a")
    widths = data.draw(widths_for(mode, a.shape, k), label="pad")
    check_against_torch(lambda x: F.pad(x, widths, mode=mode),
                        lambda x: torch.nn.functional.pad(x, widths, mode=mode), a)


@pytest.mark.parametrize("mode,expected", [
    ("reflect", [2, 1, 0, 1, 2, 3, 2, 1]),
    ("replicate", [0, 0, 0, 1, 2, 3, 3, 3]),
    ("circular", [2, 3, 0, 1, 2, 3, 0, 1]),
])
def test_what_each_mode_puts_in_the_border(mode, expected):
    row = learntorch.arange(4.0).reshape(1, 4)
    assert F.pad(row, (2, 2), mode=mode).tolist() == [expected]


@pytest.mark.parametrize("mode,grad", [
    # reflect: x1 and x2 are each copied twice more (x0 and x3, the mirrors' axes, never)
    ("reflect", [1, 3, 3, 1]),
    # replicate: the edges are copied into every border position
    ("replicate", [3, 1, 1, 3]),
    ("circular", [2, 2, 2, 2]),
])
def test_border_gradients_add_up(mode, grad):
    x = learntorch.arange(4.0).reshape(1, 4).requires_grad_()
    F.pad(x, (2, 2), mode=mode).sum().backward()
    assert x.grad.tolist() == [grad]


@pytest.mark.parametrize("mode", MODES)
def test_pad_gradient_matches_finite_differences(mode):
    rng = np.random.default_rng(0)
    check_against_finite_differences(lambda x: F.pad(x, (2, 1, 1, 2), mode=mode),
                                     rng.standard_normal((2, 3, 4)))


@pytest.mark.parametrize("mode", MODES)
def test_gradient_of_the_gradient_matches_torch(mode):
    require_torch()
    a = np.random.default_rng(1).standard_normal((1, 2, 3, 4))
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        x = make(a, True)
        y = lib.nn.functional.pad(x, (1, 2, 2, 1), mode=mode)
        g, = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        results.append((g, gg))
    assert_close(results[0][0], results[1][0], what="gradient")
    assert_close(results[0][1], results[1][1], what="gradient of the gradient")


@pytest.mark.parametrize("mode,k,name", [
    ("reflect", 1, "ReflectionPad1DBackward0"), ("reflect", 2, "ReflectionPad2DBackward0"),
    ("replicate", 3, "ReplicationPad3DBackward0"),
])
def test_node_names_are_torchs(mode, k, name):
    torch = require_torch()
    shape = (1, 2, 3, 4, 5)[-(k + 2):]
    mine = F.pad(learntorch.ones(shape, requires_grad=True), (1, 1) * k, mode=mode)
    theirs = torch.nn.functional.pad(torch.ones(shape, requires_grad=True), (1, 1) * k, mode=mode)
    assert mine.grad_fn.name() == theirs.grad_fn.name() == name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int64", "float16", "float64"])
def test_pad_keeps_the_dtype(mode, dtype):
    torch = require_torch()
    a = np.arange(12).reshape(1, 3, 4).astype(dtype)
    check_against_torch(lambda x: F.pad(x, (2, 1), mode=mode),
                        lambda x: torch.nn.functional.pad(x, (2, 1), mode=mode), a, grad=False)


@pytest.mark.parametrize("mode", MODES)
def test_zero_sized_batch_pads_like_torch(mode):
    torch = require_torch()
    assert (tuple(F.pad(learntorch.ones(0, 2, 3), (1, 1), mode=mode).shape)
            == tuple(torch.nn.functional.pad(torch.ones(0, 2, 3), (1, 1), mode=mode).shape))


def test_circular_padding_of_bool_works_like_torch():
    torch = require_torch()
    a = np.array([[[True, False, False]]])
    check_against_torch(lambda x: F.pad(x, (1, 2), mode="circular"),
                        lambda x: torch.nn.functional.pad(x, (1, 2), mode="circular"), a)


@pytest.mark.parametrize("mode,shape,widths,words", [
    # rank: 1 padded dim needs a 2-D or 3-D input, 2 dims a 3-D or 4-D one, 3 dims 4-D or 5-D
    ("reflect", (3,), (1, 1), "not supported for 1D"),
    ("replicate", (1, 1, 2, 3), (1, 1), "not supported for 4D"),
    ("circular", (2, 3), (1, 1, 1, 1), "not supported for 2D"),
    ("reflect", (1, 1, 1, 1, 2, 3), (1,) * 6, "not supported for 6D"),
    # reflect cannot add as many elements as the dim has (the edge is not repeated)
    ("reflect", (1, 2, 3), (3, 0), "(3, 0) at dimension 2"),
    ("reflect", (1, 3, 3), (0, 0, 0, 3), "(0, 3) at dimension 1"),
    # cropping more than there is
    ("reflect", (1, 2, 3), (-2, -2), "too small"),
    ("replicate", (1, 2, 3), (-3, 0), "too small"),
    ("circular", (1, 2, 3), (-2, -2), "empty dimension"),
    # circular wraps around at most once
    ("circular", (1, 2, 3), (4, 0), "more than once"),
    ("circular", (3, 0), (1, 1), "more than once"),
    # empty dims (other than the batch) cannot be reflected or replicated
    ("reflect", (2, 0, 3), (1, 1), "non-zero dimensions"),
    ("replicate", (0, 3), (1, 1), "non-zero dimensions"),
    # the pad list
    ("reflect", (1, 2, 3), (1,), "divisible by 2"),
    ("replicate", (2, 3), (1,) * 6, "two times the input dimension"),
    ("bogus", (1, 2, 3), (1, 1), "Unrecognised padding mode bogus"),
])
def test_bad_padding_raises_torchs_exception_with_a_clear_message(mode, shape, widths, words):
    torch = require_torch()
    with pytest.raises(Exception) as theirs:
        torch.nn.functional.pad(torch.ones(shape), widths, mode=mode)
    with pytest.raises(type(theirs.value)) as mine:
        F.pad(learntorch.ones(shape), widths, mode=mode)
    assert words in str(mine.value)


@pytest.mark.parametrize("mode", MODES)
def test_a_value_is_refused_unless_it_is_zero(mode):
    torch = require_torch()
    with pytest.raises(RuntimeError):
        torch.nn.functional.pad(torch.ones(1, 2, 3), (1, 1), mode=mode, value=1.0)
    with pytest.raises(RuntimeError, match=f"\"{mode}\" doesn't take in value"):
        F.pad(learntorch.ones(1, 2, 3), (1, 1), mode=mode, value=1.0)
    assert F.pad(learntorch.ones(1, 2, 3), (1, 1), mode=mode, value=0).shape == (1, 2, 5)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_bool_is_refused_by_reflect_and_replicate_like_torch(mode):
    torch = require_torch()
    with pytest.raises(NotImplementedError):
        torch.nn.functional.pad(torch.ones(1, 2, 3, dtype=torch.bool), (1, 1), mode=mode)
    with pytest.raises(NotImplementedError, match="Bool"):
        F.pad(learntorch.ones(1, 2, 3, dtype=learntorch.bool), (1, 1), mode=mode)


def test_pad_widths_must_be_ints():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.nn.functional.pad(torch.ones(2, 3), (1, 1.5), mode="reflect")
    with pytest.raises(TypeError, match="float"):
        F.pad(learntorch.ones(2, 3), (1, 1.5), mode="reflect")
