"""Reading with ``x[index]``: values, gradients, views vs copies and errors, against torch.

An index is drawn as a tuple of items (ints, slices with steps, None, ``...``,
integer lists and tensors with repeats, boolean masks, 0-d index tensors) and
applied to the same data in learntorch and torch.  Basic indexing must return
a view (sharing memory), advanced indexing a copy, exactly as in torch.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import arrays, check_against_torch, require_torch, torch


def in_lib(lib, items):
    """The drawn index for ``lib``: numpy arrays become that library's tensors."""
    def convert(item):
        if isinstance(item, np.ndarray):
            return lib.from_numpy(item.copy())
        return item
    return tuple(convert(i) for i in items)


def is_advanced(items):
    return any(isinstance(i, (list, np.ndarray)) and np.ndim(i) > 0 for i in items)


@st.composite
def index_for(draw, shape):
    """A valid torch index for a tensor of ``shape`` (a tuple of items)."""
    ndim = len(shape)
    k = draw(st.integers(min(1, ndim), ndim))  # how many dims the items consume
    from_back = draw(st.booleans())
    dims = list(range(ndim - k, ndim)) if from_back else list(range(k))
    kinds = ["int", "slice", "slice", "0-d tensor"]
    advanced = draw(st.sampled_from(["none", "ints", "mask"]))
    adv_shape = draw(st.sampled_from([(2,), (3,), (2, 2)]))
    forced = draw(st.integers(0, max(len(dims) - 1, 0)))  # where an advanced item goes
    items, d = [], 0
    while d < len(dims):
        size = shape[dims[d]]
        has_mask = any(isinstance(i, np.ndarray) and i.dtype == bool for i in items)
        choices = kinds + (["int array"] if advanced == "ints" else [])
        if advanced == "mask" and not has_mask:  # one mask at most: two rarely broadcast
            choices = choices + ["mask"]
        kind = draw(st.sampled_from(choices))
        if d == forced and (advanced == "ints" or (advanced == "mask" and not has_mask)):
            kind = "int array" if advanced == "ints" else "mask"
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "0-d tensor":
            items.append(np.array(draw(st.integers(-size, size - 1)), dtype=np.int64))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-size - 1, size + 1))
            stop = draw(st.none() | st.integers(-size - 1, size + 1))
            items.append(slice(start, stop, draw(st.none() | st.integers(1, 3))))
        elif kind == "int array":
            values = draw(st.lists(st.integers(-size, size - 1), min_size=int(np.prod(adv_shape)),
                                   max_size=int(np.prod(adv_shape))))  # repeats allowed
            arr = np.array(values, dtype=np.int64).reshape(adv_shape)
            items.append(values if arr.ndim == 1 and draw(st.booleans()) else arr)
        else:  # a mask over one or two dims
            span = draw(st.integers(1, min(2, len(dims) - d)))
            mask_shape = tuple(shape[dims[d + j]] for j in range(span))
            items.append(draw(arrays(shape=mask_shape, dtype=np.bool_, contiguous=True)))
            d += span
            continue
        d += 1
    for _ in range(draw(st.integers(0, 2))):  # None anywhere
        items.insert(draw(st.integers(0, len(items))), None)
    if from_back or (k < ndim and draw(st.booleans())):
        items.insert(0 if from_back else len(items), Ellipsis)
    return tuple(items)


@given(st.data())
def test_getitem_values_and_gradients_match_torch(data):
    a = data.draw(arrays(min_dims=1, max_dims=3), label="a")
    items = data.draw(index_for(a.shape), label="index")
    check_against_torch(lambda x: x[in_lib(learntorch, items)],
                        lambda x: x[in_lib(torch, items)], a)


@given(st.data())
def test_basic_indexing_is_a_view_and_advanced_indexing_a_copy(data):
    require_torch()
    a = data.draw(arrays(min_dims=1, max_dims=3), label="a")
    items = data.draw(index_for(a.shape), label="index")
    x_lt, x_th = learntorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    y_lt, y_th = x_lt[in_lib(learntorch, items)], x_th[in_lib(torch, items)]
    th_shares = y_th.untyped_storage().data_ptr() == x_th.untyped_storage().data_ptr()
    lt_shares = np.shares_memory(y_lt.untyped_storage(), x_lt.untyped_storage())
    assert lt_shares == th_shares == (not is_advanced(items))
    if th_shares and y_th.numel():
        assert y_lt.stride() == y_th.stride()
        assert y_lt.storage_offset() - x_lt.storage_offset() == y_th.storage_offset()
        y_lt.fill_(9)
        y_th.fill_(9)
        np.testing.assert_array_equal(x_lt.numpy(), x_th.numpy())


def lib_pair(shape=(3, 4, 5)):
    require_torch()
    a = np.random.default_rng(0).standard_normal(shape)
    return a


CASES = {
    "negative ints": lambda lib, x: x[-1, -2],
    "steps": lambda lib, x: x[::2, 1::2, ::3],
    "None and int": lambda lib, x: x[None, 1, None],
    "ellipsis": lambda lib, x: x[..., 1],
    "repeated list": lambda lib, x: x[[0, 0, 2, 0]],
    "list on dim 1": lambda lib, x: x[:, [0, 2]],
    "2-D index tensor": lambda lib, x: x[lib.tensor([[0, 1], [2, 2]])],
    "full mask": lambda lib, x: x[x > 0],
    "partial mask": lambda lib, x: x[x[:, :, 0] > 0],
    "mask then int": lambda lib, x: x[x[:, 0, 0] > 0, 1],
    "ellipsis None slice": lambda lib, x: x[..., None, 1:],
    "0-d index tensor": lambda lib, x: x[lib.tensor(1)],
    "0-d tensor after slice": lambda lib, x: x[:, lib.tensor(-1)],
    "int and list split by slice": lambda lib, x: x[0, :, [1, 2]],
    "None before advanced": lambda lib, x: x[None, [0, 1], :, 0],
    "two separated lists": lambda lib, x: x[[0, 1], :, [2, 3]],
    "two adjacent lists": lambda lib, x: x[:, [0, 1], [2, 3]],
    "list of lists is a tuple": lambda lib, x: x[[[0, 1], [1, 2]]],
    "True": lambda lib, x: x[True],
    "False": lambda lib, x: x[False],
    "empty list": lambda lib, x: x[[]],
    "int32 index": lambda lib, x: x[lib.tensor([0, 2], dtype=lib.int32)],
    "slice past the end": lambda lib, x: x[1:10, -10:2],
    "select method": lambda lib, x: x.select(1, -1),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_named_index_cases_match_torch(name):
    fn = CASES[name]
    check_against_torch(lambda x: fn(learntorch, x), lambda x: fn(torch, x), lib_pair())


def test_gradient_accumulates_over_repeated_indices():
    x = learntorch.zeros(3, requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_a_scalar_read_is_a_0d_view_that_writes_back():
    x = learntorch.zeros(2, 3)
    y = x[1][2]
    assert y.ndim == 0
    y.add_(5)
    assert x[1, 2].item() == 5.0


ERRORS = [
    ("index 5 is out of bounds for dimension 0 with size 3", lambda lib, x: x[5], IndexError),
    ("index 7 is out of bounds for dimension 1 with size 4", lambda lib, x: x[:, 7], IndexError),
    ("index 5 is out of bounds for dimension 0 with size 3", lambda lib, x: x[[0, 5]],
     IndexError),
    ("index -4 is out of bounds for dimension 0 with size 3", lambda lib, x: x[[-4]],
     IndexError),
    ("tensors used as indices must be long, int, byte or bool tensors",
     lambda lib, x: x[lib.tensor([0.0])], IndexError),
    ("The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
     "[3, 4, 5] at index 1", lambda lib, x: x[:, lib.tensor([True, False])], IndexError),
    ("too many indices for tensor of dimension 3", lambda lib, x: x[0, 0, 0, 0], IndexError),
    ("slice step cannot be zero", lambda lib, x: x[::0], ValueError),
    ("step must be greater than zero", lambda lib, x: x[::-1], ValueError),
    ("only integers, slices", lambda lib, x: x[1.0], IndexError),
]


@pytest.mark.parametrize("message, op, error", ERRORS, ids=[e[0][:40] for e in ERRORS])
def test_bad_indices_raise_torchs_error_and_message(message, op, error):
    a = lib_pair()
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        op(torch, torch.from_numpy(a))
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        op(learntorch, learntorch.from_numpy(a))
