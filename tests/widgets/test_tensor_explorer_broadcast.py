"""The broadcasting view: alignment, reuse maps and the gradient sums.

Oracles: numpy's broadcasting (np.broadcast_shapes / np.broadcast_to) for the
shapes and which element each output reads, and PyTorch's autograd for the
gradients that flow back through the broadcast.
"""
import numpy as np
import pytest
import torch as real
from hypothesis import given, strategies as st

import learntorch as torch
from widgets.tensor_explorer import TensorExplorer


@st.composite
def broadcastable_shapes(draw):
    """Two shapes that broadcast: from one result shape, drop leading dims and set some to 1."""
    result = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    shapes = []
    for _ in range(2):
        keep = draw(st.integers(0, len(result)))
        shape = [n if draw(st.booleans()) else 1 for n in result[len(result) - keep:]]
        shapes.append(tuple(shape))
    return tuple(shapes)


@given(broadcastable_shapes())
def test_alignment_result_and_reuse_maps_match_numpy(shapes):
    shape_a, shape_b = shapes
    view = TensorExplorer.broadcast(shape_a, shape_b)
    result = np.broadcast_shapes(shape_a, shape_b)
    assert view.error is None
    assert view.result_shape == result
    for name, shape, aligned in zip("ab", shapes, view.aligned_shapes):
        assert aligned == (1,) * (len(result) - len(shape)) + shape
        # which element of the input each output element reads, by numpy's broadcasting
        flat = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape), result)
        np.testing.assert_array_equal(view.source(name), flat)
        np.testing.assert_array_equal(view.reuse(name).reshape(-1),
                                      np.bincount(flat.reshape(-1), minlength=int(np.prod(shape))))
        # each element is reused once per output element along the broadcast dimensions
        assert view.reuse(name).sum() == int(np.prod(result))


@given(broadcastable_shapes(), st.sampled_from(["add", "mul"]))
def test_gradients_are_torchs_and_are_the_sum_over_broadcast_dims(shapes, op):
    shape_a, shape_b = shapes
    view = TensorExplorer.broadcast(shape_a, shape_b, op=op)
    a = real.tensor(view.inputs["a"].detach().numpy(), requires_grad=True)
    b = real.tensor(view.inputs["b"].detach().numpy(), requires_grad=True)
    g = real.tensor(view.grad.numpy())
    (a + b if op == "add" else a * b).backward(g)
    np.testing.assert_allclose(view.grads["a"], a.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(view.grads["b"], b.grad.numpy(), rtol=1e-6)
    # the gradient before the sum is the local one, of the result shape
    local = {"a": g if op == "add" else g * b.detach(), "b": g if op == "add" else g * a.detach()}
    for name in "ab":
        np.testing.assert_allclose(view.grad_before_sum[name], local[name].expand(view.result_shape).numpy(),
                                   rtol=1e-6)
        # sum_dims: over the padded dims, then the stretched ones with keepdim -- the input's grad
        leading, stretched = view.sum_dims(name)
        summed = local[name].expand(view.result_shape)
        if leading:
            summed = summed.sum(dim=leading)
        if stretched:
            summed = summed.sum(dim=stretched, keepdim=True)
        np.testing.assert_allclose(summed.numpy(), view.grads[name], rtol=1e-6)


def test_the_classic_example_column_plus_row():
    view = TensorExplorer.broadcast((3, 1), (4,))
    assert view.aligned_shapes == ((3, 1), (1, 4))
    assert view.dim_roles("a") == ["kept", "stretched"]
    assert view.dim_roles("b") == ["padded", "kept"]
    assert view.sum_code("a") == "g.sum(1, keepdim=True)"
    assert view.sum_code("b") == "g.sum(0)"
    view.select_index(1, 2)
    assert view.source_index("a") == (1, 0) and view.source_index("b") == (2,)
    where, values = view.contributions("a")
    assert where == [(1, 0), (1, 1), (1, 2), (1, 3)] and values == [5.0, 6.0, 7.0, 8.0]
    text = view.describe()
    assert "out[1, 2] = a[1, 0] + b[2] = 2 + 30 = 32" in text
    assert "a[1, 0] is read by 4 output elements, b[2] by 3" in text
    assert "a.grad[1, 0] = g[1, 0] + g[1, 1] + g[1, 2] + g[1, 3] = 5 + 6 + 7 + 8 = 26" in text
    assert "b.grad[2] = g[0, 2] + g[1, 2] + g[2, 2] = 3 + 7 + 11 = 21" in text


def test_given_tensors_and_upstream_gradient_are_used_as_they_are():
    a = torch.tensor([[1.0], [2.0]])
    b = torch.tensor([1, 2, 3])              # integers become float, so they can have a gradient
    g = torch.tensor([[1.0, 0.0, 2.0], [0.5, 1.0, 0.0]])
    view = TensorExplorer.broadcast(a, b, grad=g, op="mul")
    ra, rb = real.tensor([[1.0], [2.0]], requires_grad=True), real.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (ra * rb).backward(real.tensor(g.numpy()))
    np.testing.assert_allclose(view.grads["a"], ra.grad.numpy())
    np.testing.assert_allclose(view.grads["b"], rb.grad.numpy())
    assert view.sum_code("b") == "(g * a).sum(0)"
    assert a.grad is None  # the caller's tensors are left alone


@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (4,)), ((3, 1, 5), (2, 4, 1)), ((2,), (3,))])
def test_incompatible_shapes_show_the_engines_message_instead_of_raising(shape_a, shape_b):
    view = TensorExplorer.broadcast(shape_a, shape_b)
    with pytest.raises(RuntimeError) as engine:
        torch.broadcast_shapes(shape_a, shape_b)
    with pytest.raises(RuntimeError):
        real.broadcast_shapes(shape_a, shape_b)   # torch refuses the same shapes
    assert view.result_shape is None and view.error == str(engine.value)
    assert "mismatch" in view.dim_roles("a")
    assert str(engine.value) in view.describe()
    svg = view.static_svg()
    assert "must match the size" in svg and "#ff9896" in svg  # the message and a red column
    assert repr(view) == f"BroadcastView(a {shape_a} + b {shape_b}: shapes do not broadcast)"
    with pytest.raises(RuntimeError, match="do not broadcast"):
        view.select_index(0)


def test_bad_op_and_bad_index_name_the_fix():
    with pytest.raises(ValueError, match=r"op must be one of \['add', 'mul'\]"):
        TensorExplorer.broadcast((2,), (2,), op="sub")
    view = TensorExplorer.broadcast((2, 1), (3,))
    with pytest.raises(IndexError, match=r"does not fit the result shape \(2, 3\)"):
        view.select_index(2, 0)


def test_picture_marks_the_reused_elements_and_the_sums():
    view = TensorExplorer.broadcast((3, 1), (4,))
    view.select_index(1, 2)
    svg = view.static_svg()
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "1→4" in svg                                  # a's stretched dimension
    assert "a.grad = g.sum(1, keepdim=True)" in svg and "b.grad = g.sum(0)" in svg
    # four output cells read a[1, 0] (blue), three read b[2] (dashed orange outline)
    assert svg.count("fill='#c6dbef'") == 4 + 4 + 3      # out grid + the g grid into a + into b
    assert svg.count("stroke='#fd8d3c'") == 2            # out[0, 2] and out[2, 2]
    again = TensorExplorer.broadcast((3, 1), (4,))
    again.select_index(1, 2)
    assert again.static_svg() == svg                     # deterministic
    assert repr(view) == "BroadcastView(a (3, 1) + b (4,) -> (3, 4), index (1, 2))"


def test_the_upstream_gradient_is_shown_so_every_sum_can_be_redone_by_hand():
    view = TensorExplorer.broadcast((4, 3), (3,), op="mul")
    text = view.describe()
    assert ("g = ∂loss/∂out, the gradient that arrives from above (grad=): 1, 2, 3, ..., 12 (the "
            "default), in the result's shape (4, 3)") in text
    # b.grad[0] from the numbers on screen: g's column 0 times a's column 0 (both 1, 4, 7, 10)
    g, a = np.arange(1, 13).reshape(4, 3), np.arange(1, 13).reshape(4, 3)
    assert int((g[:, 0] * a[:, 0]).sum()) == 166
    assert "b.grad[0] = (g*a)[0, 0] + (g*a)[1, 0] + (g*a)[2, 0] + (g*a)[3, 0] = 1·1 + 4·4 + 7·7 + 10·10 = 166" \
        in text
    svg = view.static_svg()
    assert "g = ∂loss/∂out" in svg
    assert svg.count(">12<") >= 2   # g's last element drawn, next to a's
    ones = TensorExplorer.broadcast((4, 3), (3,), grad=torch.ones(4, 3))
    assert "(grad=): all 1;" in ones.describe()
