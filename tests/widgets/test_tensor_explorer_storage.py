"""TensorExplorer's address arithmetic: which storage cell each index of a view reads.

Oracles: numpy doing the same slicing on ``np.arange`` (whose values *are* the
storage positions, and whose own strides/offsets are numpy's address arithmetic),
and the memory itself (``data_ptr`` of the element, the value in the storage).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch as torch
from widgets.tensor_explorer import TensorExplorer, preset_views


def _apply(op, x):
    """One view-making step, the same for a learntorch tensor and a numpy array."""
    kind, args = op
    if kind == "transpose":
        d0, d1 = args
        return x.transpose(d0, d1) if isinstance(x, torch.Tensor) else np.swapaxes(x, d0, d1)
    if kind == "slice":
        dim, start, step = args
        return x[(slice(None),) * dim + (slice(start, None, step),)]
    if kind == "select":
        return x[args]
    if kind == "expand":  # a new leading dimension of size k, read with stride 0
        k = args
        if isinstance(x, torch.Tensor):
            return x.unsqueeze(0).expand(k, *x.shape)
        return np.broadcast_to(x[None], (k,) + x.shape)
    raise AssertionError(kind)


@st.composite
def shapes_and_views(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    ops, ndim, dims = [], len(shape), list(shape)
    for _ in range(draw(st.integers(0, 3))):
        choices = ["slice", "expand"] + (["transpose"] if ndim >= 2 else []) + (["select"] if ndim >= 2 else [])
        kind = draw(st.sampled_from(choices))
        if kind == "transpose":
            d0, d1 = draw(st.permutations(range(ndim)))[:2]
            dims[d0], dims[d1] = dims[d1], dims[d0]
            ops.append((kind, (d0, d1)))
        elif kind == "slice":
            dim = draw(st.integers(0, ndim - 1))
            start, step = draw(st.integers(0, max(dims[dim] - 1, 0))), draw(st.integers(1, 3))
            dims[dim] = len(range(start, dims[dim], step))
            ops.append((kind, (dim, start, step)))
        elif kind == "select":
            ops.append((kind, draw(st.integers(0, dims[0] - 1))))
            dims, ndim = dims[1:], ndim - 1
        else:
            k = draw(st.integers(1, 3))
            ops.append((kind, k))
            dims, ndim = [k] + dims, ndim + 1
    return shape, ops


def _views(shape, ops):
    n = int(np.prod(shape))
    t = torch.arange(n).reshape(shape)
    ref = np.arange(n).reshape(shape)
    view, ref_view = t, ref
    for op in ops:
        view, ref_view = _apply(op, view), _apply(op, ref_view)
    return t, view, ref, ref_view


@given(shapes_and_views())
def test_positions_equal_numpys_address_arithmetic_for_any_chain_of_views(case):
    shape, ops = case
    t, view, ref, ref_view = _views(shape, ops)
    explorer = TensorExplorer(t, views={"v": view})
    explorer.select_view("v")
    assert explorer.positions().shape == ref_view.shape
    # arange's values are its storage positions: the numpy view reads exactly these cells
    np.testing.assert_array_equal(explorer.positions(), ref_view)
    # numpy's own strides and offset (in bytes) agree with what the explorer used; the stride
    # of a size-1 dimension is never multiplied by anything but 0, so libraries choose freely
    item = ref.itemsize
    used = [d for d, n in enumerate(ref_view.shape) if n > 1]
    assert [view.stride()[d] for d in used] == [ref_view.strides[d] // item for d in used]
    start = ref_view.__array_interface__["data"][0] - ref.__array_interface__["data"][0]
    assert view.storage_offset() == start // item


@given(shapes_and_views(), st.randoms(use_true_random=False))
def test_selected_position_is_where_the_element_lives_in_memory(case, rnd):
    shape, ops = case
    base = torch.randn(*shape)
    view = base
    for op in ops:
        view = _apply(op, view)
    assert 0 not in tuple(view.shape)  # the strategy makes no empty views (they have their own test)
    index = tuple(rnd.randrange(n) for n in view.shape)
    explorer = TensorExplorer(base, views={"v": view})
    explorer.select_view("v")
    explorer.select_index(*index)
    position = explorer.storage_position()
    item = base.element_size()
    storage_start = base.data_ptr() - base.storage_offset() * item
    assert view[index].data_ptr() == storage_start + position * item
    assert explorer.storage_values()[position] == view[index].item()


def test_the_classic_views_and_their_strides():
    t = torch.arange(12.).reshape(3, 4)
    explorer = TensorExplorer(t)
    expected = {  # name: (shape, stride, offset), as torch reports them
        "t": ((3, 4), (4, 1), 0),
        "t.T": ((4, 3), (1, 4), 0),
        "t[:, 1:]": ((3, 3), (4, 1), 1),
        "t[::2]": ((2, 4), (8, 1), 0),
        "t[0].expand(3, 4)": ((3, 4), (0, 1), 0),
    }
    assert list(explorer.views) == list(expected)
    import torch as real
    r = real.arange(12.).reshape(3, 4)
    real_views = {"t": r, "t.T": r.T, "t[:, 1:]": r[:, 1:], "t[::2]": r[::2],
                  "t[0].expand(3, 4)": r[0].expand(3, 4)}
    for name, (shape, stride, offset) in expected.items():
        explorer.select_view(name)
        v = explorer.current
        assert (tuple(v.shape), v.stride(), v.storage_offset()) == (shape, stride, offset)
        rv = real_views[name]
        assert (tuple(rv.shape), rv.stride(), rv.storage_offset()) == (shape, stride, offset)


@pytest.mark.parametrize("shape, names", [
    ((), ["t"]),
    ((5,), ["t", "t[1:]", "t[::2]", "t[0].expand(5)"]),
    ((2, 3, 4), ["t", "t.transpose(0, 2)", "t[:, :, 1:]", "t[0].expand(2, 3, 4)"]),
])
def test_presets_depend_on_the_number_of_dimensions(shape, names):
    assert list(preset_views(torch.zeros(*shape))) == names


def test_formula_spells_out_offset_plus_index_times_stride():
    t = torch.arange(12.).reshape(3, 4)
    explorer = TensorExplorer(t)
    explorer.select_view("t[:, 1:]")
    explorer.select_index(2, 1)
    assert explorer.formula() == "index (2, 1) -> storage[offset 1 + 2·4 + 1·1 = 10]"
    assert explorer.storage_position() == 10 == int(t[:, 1:][2, 1].item())


def test_stride_zero_makes_several_indices_read_one_cell():
    t = torch.arange(12.).reshape(3, 4)
    explorer = TensorExplorer(t)
    explorer.select_view("t[0].expand(3, 4)")
    explorer.select_index(1, 2)
    assert explorer.storage_position() == 2
    assert explorer.readers() == [(0, 2), (1, 2), (2, 2)]
    assert "storage[2] is read by 3 indices: (0, 2), (1, 2), (2, 2) (stride 0 in dim 0)" in explorer.describe()
    # an ordinary view: every index reads its own cell
    explorer.select_view("t.T")
    assert len(explorer.readers()) == 1
    assert "read by" not in explorer.describe()


def test_an_index_that_does_not_fit_is_an_index_error_naming_the_shape():
    explorer = TensorExplorer(torch.zeros(3, 4))
    with pytest.raises(IndexError, match=r"out of bounds for dimension 1 with size 4.*shape \(3, 4\)"):
        explorer.select_index(0, 4)
    with pytest.raises(IndexError, match=r"has 1 numbers but the view 't' has 2 dimensions"):
        explorer.select_index(0)
    with pytest.raises(KeyError, match="no view named 'nope'"):
        explorer.select_view("nope")


def test_switching_views_keeps_the_index_where_it_fits():
    explorer = TensorExplorer(torch.arange(12.).reshape(3, 4), index=(2, 3))
    explorer.select_view("t.T")       # shape (4, 3): row 2 fits, column 3 is clamped to 2
    assert explorer.index == (2, 2)
    explorer.select_view("t[::2]")    # shape (2, 4)
    assert explorer.index == (1, 2)


def test_an_empty_view_has_no_index_and_says_so():
    t = torch.arange(6.).reshape(2, 3)
    explorer = TensorExplorer(t, views={"t[:, 3:]": t[:, 3:]})
    explorer.select_view("t[:, 3:]")
    assert explorer.index is None
    assert "is empty" in explorer.formula()
    assert "empty" in repr(explorer)
    assert "(empty view: no elements)" in explorer.static_svg()
