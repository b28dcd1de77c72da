"""Writing with ``x[index] = value``: values, autograd through the write, views, errors, vs torch.

``x[index] = value`` changes ``x`` in place.  On a tensor in the autograd
graph it is recorded (torch's ``CopySlices``): the overwritten elements stop
depending on the old values, and ``value`` gets the gradient of the positions
it was written to.  Through a view, the write lands in the base tensor.
"""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import learntorch
from oracle import arrays, as_numpy, assert_close, require_torch, torch
from test_indexing_getitem import in_lib, index_for


def written_positions_are_distinct(shape, items):
    """Assigning different values to one position twice has no defined order: avoid it."""
    ids = torch.arange(int(np.prod(shape))).reshape(shape)[in_lib(torch, items)]
    return ids.numel() == ids.unique().numel()


@st.composite
def assignment(draw, shape):
    """(index items, value): a number, or an array that broadcasts to x[index]."""
    items = draw(index_for(shape), label="index")
    assume(written_positions_are_distinct(shape, items))
    target = tuple(torch.zeros(shape)[in_lib(torch, items)].shape)
    if draw(st.booleans()):
        return items, draw(st.floats(-3, 3, width=32), label="number")
    # a shape that expands to the target: a suffix of it, some dims 1, maybe a leading 1
    keep = draw(st.integers(0, len(target)))
    value_shape = tuple(1 if draw(st.booleans()) else n for n in target[len(target) - keep:])
    if draw(st.booleans()):
        value_shape = (1,) + value_shape
    return items, draw(arrays(shape=value_shape), label="value")


def write(lib, x, items, value):
    x[in_lib(lib, items)] = lib.from_numpy(value.copy()) if isinstance(value, np.ndarray) \
        else value
    return x


@given(st.data())
def test_setitem_writes_the_same_values_as_torch(data):
    require_torch()
    a = data.draw(arrays(min_dims=1), label="a")
    items, value = data.draw(assignment(a.shape))
    x_lt, x_th = learntorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    write(learntorch, x_lt, items, value)
    write(torch, x_th, items, value)
    assert_close(x_lt, x_th)
    assert x_lt._version == x_th._version == 1


@given(st.data())
def test_setitem_on_a_graph_tensor_gives_torchs_gradients(data):
    require_torch()
    a = data.draw(arrays(min_dims=1), label="a")
    items, value = data.draw(assignment(a.shape))
    weight = np.random.default_rng(0).standard_normal(a.shape)
    grads = {}
    for lib in (learntorch, torch):
        x = lib.tensor(a, requires_grad=True)
        v = lib.tensor(value, requires_grad=True) if isinstance(value, np.ndarray) else value
        y = x * 2
        y[in_lib(lib, items)] = v
        (y * lib.tensor(weight)).sum().backward()
        grads[lib.__name__] = (y.detach(), x.grad, v.grad if isinstance(v, lib.Tensor) else None,
                               y.grad_fn.name())
    lt, th = grads["learntorch"], grads["torch"]
    assert_close(lt[0], th[0], what="values")
    assert_close(lt[1], th[1], what="grad of x")
    assert_close(lt[2], th[2], what="grad of value")
    # CopySlices, IndexPutBackward0, CopyBackwards or FillBackward (torch makes a number a
    # tensor first, learntorch fills with the number: FillBackward3 vs FillBackward2)
    assert lt[3].rstrip("23") == th[3].replace("torch::autograd::", "").rstrip("23")


@given(st.data())
def test_setitem_through_a_view_writes_the_base_and_gives_torchs_gradients(data):
    require_torch()
    a = data.draw(arrays(shape=(3, 4)), label="a")
    view_of = data.draw(st.sampled_from([lambda x: x[1:], lambda x: x.t(), lambda x: x[:, ::2],
                                         lambda x: x[1].unsqueeze(0)]), label="view")
    items, value = data.draw(assignment(tuple(view_of(torch.zeros(3, 4)).shape)))
    results = {}
    for lib in (learntorch, torch):
        x = lib.tensor(a, requires_grad=True)
        v = lib.tensor(value, requires_grad=True) if isinstance(value, np.ndarray) else value
        base = x * 1
        view = view_of(base)
        view[in_lib(lib, items)] = v
        (base * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum().backward()
        results[lib.__name__] = (base.detach(), x.grad, v.grad if isinstance(v, lib.Tensor)
                                 else None)
    for name, lt, th in zip(("base", "grad of x", "grad of value"), results["learntorch"],
                            results["torch"]):
        assert_close(lt, th, what=name)


def test_write_through_a_view_of_a_plain_tensor_lands_in_the_base():
    for lib in (learntorch, require_torch()):
        x = lib.zeros(3, 4)
        view = x.t()[1:]
        view[0] = 5.0
        view[1:, 2] = lib.tensor([7.0, 8.0])
        assert x.tolist() == [[0, 5, 0, 0], [0, 5, 0, 0], [0, 5, 7, 8]], lib.__name__
        assert x._version == view._version == 2


def test_setitem_with_a_value_that_needs_grad_makes_the_base_part_of_the_graph():
    require_torch()
    out = []
    for lib in (learntorch, torch):
        x = lib.zeros(2, 3)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x[1] = w * w
        x.sum().backward()
        out.append((x.requires_grad, x.is_leaf, as_numpy(w.grad).tolist()))
    assert out[0] == out[1] == (True, False, [2.0, 4.0, 6.0])


def test_setitem_casts_the_value_to_the_tensors_dtype_like_torch():
    require_torch()
    for lib in (learntorch, torch):
        x = lib.zeros(4, dtype=lib.int64)
        x[0] = 2.7
        x[1:3] = lib.tensor([-1.9, 3.5])
        y = lib.zeros(2)
        y[0] = lib.tensor(1.25, dtype=lib.float64)
        assert (x.tolist(), y.tolist(), str(y.dtype)[-7:]) == ([2, -1, 3, 0], [1.25, 0.0],
                                                              "float32")


def test_value_with_leading_size_one_dims_is_accepted_like_torch():
    for lib in (learntorch, require_torch()):
        x = lib.zeros(3, 4)
        x[1] = lib.ones(1, 1, 4)
        assert x.sum().item() == 4.0


def test_setitem_on_a_leaf_that_requires_grad_is_refused_outside_no_grad():
    for lib in (learntorch, require_torch()):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                               "in an in-place operation"):
            x[0] = 2.0
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[1:][0] = 2.0
        with lib.no_grad():
            x[0] = 5.0
        assert x.tolist() == [5.0, 1.0, 1.0] and x.is_leaf and x.grad_fn is None


@pytest.mark.parametrize("index, value_shape", [(1, (5,)), ((slice(None), 0), (2,)),
                                                ([0, 1], (3,)), ((0, [1, 2]), (3, 1))])
def test_setitem_shape_mismatch_is_a_runtime_error_naming_the_shapes(index, value_shape):
    for lib in (learntorch, require_torch()):
        x = lib.zeros(3, 4)
        with pytest.raises(RuntimeError) as info:
            x[index] = lib.ones(value_shape)
        assert str(list(value_shape)) in str(info.value) or str(value_shape[0]) in str(info.value)


def test_writing_into_an_expanded_view_is_refused_where_elements_share_memory():
    for lib in (learntorch, require_torch()):
        x = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError, match="single memory location"):
            x[0] = 5.0  # four elements of x[0] are one memory cell
        x[0, 0] = 5.0  # one element: fine, as in torch
        x[:, 1] = lib.tensor([1.0, 2.0, 3.0])
        assert x.tolist() == [[1.0] * 4, [2.0] * 4, [3.0] * 4], lib.__name__
