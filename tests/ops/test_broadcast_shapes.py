"""Broadcasting forward (``broadcast_shapes``) and backward (``Tensor.sum_to_size``).

``grad.sum_to_size(shape)`` is what the engine applies to every gradient flowing to
a broadcast input: an element reused k times receives the sum of its k gradient
contributions.  Checked against numpy's and torch's rules.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from learntorch.ops.broadcast import broadcast_shapes, is_expandable_to


def sum_to_shape(grad, shape):
    return grad.sum_to_size(shape)
from oracle import require_torch, torch


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4))
def test_broadcast_shapes_matches_numpy_and_torch(shapes):
    expected = np.broadcast_shapes(*shapes.input_shapes)
    assert broadcast_shapes(*shapes.input_shapes) == expected
    assert learntorch.broadcast_shapes(*shapes.input_shapes) == \
        tuple(require_torch().broadcast_shapes(*shapes.input_shapes))


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((4,), (2, 3)), ((2, 1, 3), (5, 4, 3)),
                                    ((1, 2), (3, 1), (1, 4))])
def test_incompatible_shapes_raise_runtime_error_naming_them(shapes):
    require_torch()
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes(*shapes)
    with pytest.raises(RuntimeError) as info:
        broadcast_shapes(*shapes)
    message = str(info.value)
    assert all(str(list(s)) in message for s in shapes)
    assert "must match" in message


def test_broadcast_shapes_of_nothing_and_of_scalars():
    assert broadcast_shapes() == ()
    assert broadcast_shapes((), (3,), ()) == (3,)


@st.composite
def grad_and_shape(draw):
    """A gradient of the broadcast shape, and an input shape that broadcasts to it."""
    target = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    keep = draw(st.integers(0, len(target)))
    shape = tuple(1 if draw(st.booleans()) else n for n in target[len(target) - keep:])
    grad = draw(hnp.arrays(np.float64, target, elements=st.floats(-3, 3)))
    return grad, shape


def numpy_sum_to_shape(grad, shape):
    """Reference: sum the leading dims away, then the stretched size-1 dims (keeping them)."""
    lead = grad.ndim - len(shape)
    g = grad.sum(axis=tuple(range(lead))) if lead else grad
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True) if stretched else g


@given(grad_and_shape())
def test_sum_to_shape_sums_over_exactly_the_broadcast_dims(case):
    grad, shape = case
    got = sum_to_shape(learntorch.from_numpy(grad), shape)
    assert tuple(got.shape) == shape
    np.testing.assert_allclose(got.numpy(), numpy_sum_to_shape(grad, shape), rtol=1e-12)


@given(grad_and_shape())
def test_sum_to_shape_is_the_gradient_of_expand_like_torch(case):
    grad, shape = case
    require_torch()
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    x.expand(grad.shape).backward(torch.from_numpy(grad))
    np.testing.assert_allclose(sum_to_shape(learntorch.from_numpy(grad), shape).numpy(),
                               x.grad.numpy(), rtol=1e-12)


@given(grad_and_shape())
def test_sum_to_size_matches_torch_forward_and_backward(case):
    grad, shape = case
    require_torch()
    ours = learntorch.tensor(grad, requires_grad=True)
    theirs = torch.tensor(grad, requires_grad=True)
    out, expected = ours.sum_to_size(shape), theirs.sum_to_size(shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    weights = np.arange(out.numel(), dtype=np.float64).reshape(shape)
    (out * learntorch.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_sum_to_size_accepts_sizes_as_torch_does_and_refuses_what_does_not_broadcast():
    g = learntorch.ones(2, 3)
    assert g.sum_to_size(1, 3).tolist() == [[2.0, 2.0, 2.0]]
    assert g.sum_to_size((3,)).tolist() == [2.0, 2.0, 2.0]
    assert g.sum_to_size(learntorch.Size([2, 1])).tolist() == [[3.0], [3.0]]
    with pytest.raises(RuntimeError, match=r"size \[2, 2\] is not expandable to size \[2, 3\]"):
        g.sum_to_size(2, 2)


@pytest.mark.parametrize("shape, target, expected", [
    ((3,), (2, 3), True), ((1, 3), (2, 3), True), ((2, 3), (2, 3), True), ((), (4,), True),
    ((2,), (2, 3), False), ((2, 3), (3,), False), ((3, 1), (3, 4), True), ((4, 1), (3, 4), False),
])
def test_is_expandable_to_follows_the_broadcasting_rule(shape, target, expected):
    assert is_expandable_to(shape, target) is expected
    require_torch()
    try:
        torch.zeros(shape).expand(target)
        assert expected
    except RuntimeError:
        assert not expected


def test_gradient_of_a_broadcast_binary_op_is_summed_to_each_input_like_torch():
    require_torch()
    grads = []
    for lib in (learntorch, torch):
        a = lib.ones(3, 1, requires_grad=True)
        b = lib.ones(4, requires_grad=True)
        ((a * b) * lib.arange(12.0).reshape(3, 4)).sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist()))
    assert grads[0] == grads[1]
