"""gather, scatter, scatter_add, index_select, index_add, index_put, masked_fill,
masked_select, where, nonzero, take_along_dim: values, gradients and errors vs torch.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import (arrays, as_numpy, broadcastable_pair, check_against_finite_differences,
                    check_against_torch, require_torch, torch)


def against_torch(op, *arrays_in, **kwargs):
    """``op(lib)`` is the function under test, built once per library."""
    require_torch()
    return check_against_torch(op(learntorch), op(torch), *arrays_in, **kwargs)


def lib_index(lib, index):
    return lib.from_numpy(np.ascontiguousarray(index))


@st.composite
def index_along(draw, shape, unique=False, same_shape=False):
    """(dim, index array) for gather/scatter on ``shape``.

    The index is no larger than ``shape`` except along ``dim``; ``unique``
    makes every position along ``dim`` appear at most once per line (so that
    scatter's writes do not collide).
    """
    ndim = len(shape)
    dim = draw(st.integers(-ndim, ndim - 1), label="dim")
    d = dim % ndim
    size = shape[d]
    if same_shape:
        ishape = tuple(shape)
    else:
        ishape = tuple(draw(st.integers(1, size if unique else 4)) if k == d
                       else draw(st.integers(1, s)) for k, s in enumerate(shape))
    if unique:
        rng = np.random.default_rng(draw(st.integers(0, 2 ** 16), label="seed"))
        full = list(ishape)
        full[d] = size
        order = np.argsort(rng.random(full), axis=d)
        index = np.take(order, np.arange(ishape[d]), axis=d)
    else:
        index = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, size - 1)))
    return dim, index.astype(np.int64)


@given(st.data())
def test_gather_matches_torch(data):
    a = data.draw(arrays(min_dims=1), label="a")
    dim, index = data.draw(index_along(a.shape))
    against_torch(lambda lib: lambda x: x.gather(dim, lib_index(lib, index)), a)
    against_torch(lambda lib: lambda x: lib.gather(x, dim, lib_index(lib, index)), a)


@given(st.data())
def test_scatter_with_src_and_with_value_match_torch(data):
    a = data.draw(arrays(min_dims=1), label="a")
    dim, index = data.draw(index_along(a.shape, unique=True))
    src = data.draw(arrays(shape=index.shape), label="src")
    against_torch(lambda lib: lambda x, s: x.scatter(dim, lib_index(lib, index), s), a, src)
    against_torch(lambda lib: lambda x: x.scatter(dim, lib_index(lib, index), 2.5), a)
    against_torch(lambda lib: lambda x: lib.scatter(x, dim, lib_index(lib, index), value=-1.0),
                  a)


@given(st.data())
def test_scatter_add_accumulates_repeated_indices_like_torch(data):
    a = data.draw(arrays(min_dims=1), label="a")
    dim, index = data.draw(index_along(a.shape))
    src = data.draw(arrays(shape=index.shape), label="src")
    against_torch(lambda lib: lambda x, s: x.scatter_add(dim, lib_index(lib, index), s), a, src)
    against_torch(lambda lib: lambda x, s: lib.scatter_add(x, dim, lib_index(lib, index), s),
                  a, src)


def test_scatter_src_larger_than_index_gets_zero_gradient_where_unused():
    # torch's backward refuses this case; the gradient is still well defined
    index = learntorch.tensor([[0, 2], [1, 0]])
    check_against_finite_differences(lambda x, s: x.scatter(0, index, s),
                                     np.arange(12.0).reshape(3, 4), np.ones((3, 4)) * 5)
    check_against_finite_differences(lambda x, s: x.scatter_add(1, index, s),
                                     np.arange(12.0).reshape(3, 4), np.arange(6.0).reshape(2, 3))


@given(st.data())
def test_index_select_and_index_add_match_torch(data):
    a = data.draw(arrays(min_dims=1), label="a")
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1), label="dim")
    size = a.shape[dim]
    idx = np.array(data.draw(st.lists(st.integers(0, size - 1), max_size=5), label="index"),
                   dtype=np.int64)
    against_torch(lambda lib: lambda x: x.index_select(dim, lib_index(lib, idx)), a)
    src_shape = list(a.shape)
    src_shape[dim] = idx.size
    src = data.draw(arrays(shape=tuple(src_shape)), label="source")
    alpha = data.draw(st.sampled_from([1, 2.5, -1]), label="alpha")
    against_torch(lambda lib: lambda x, s: x.index_add(dim, lib_index(lib, idx), s, alpha=alpha),
                  a, src)


def test_index_select_with_a_0d_index_keeps_the_dim_like_torch():
    against_torch(lambda lib: lambda x: x.index_select(1, lib.tensor(2)),
                  np.arange(12.0).reshape(3, 4))


@given(st.data())
def test_index_put_with_and_without_accumulate_matches_torch(data):
    a = data.draw(arrays(min_dims=1, max_dims=2), label="a")
    rows = data.draw(st.lists(st.integers(0, a.shape[0] - 1), min_size=1, max_size=4), label="rows")
    unique_rows = sorted(set(rows))
    for accumulate, r in ((True, rows), (False, unique_rows)):
        r = np.array(r, dtype=np.int64)
        values = data.draw(arrays(shape=(len(r),) + a.shape[1:]), label="values")
        against_torch(lambda lib: lambda x, v: x.index_put((lib_index(lib, r),), v,
                                                           accumulate=accumulate), a, values)


@given(st.data())
def test_masked_fill_matches_torch_with_a_broadcast_mask(data):
    a = data.draw(arrays(min_dims=1), label="a")
    shape = data.draw(hnp.broadcastable_shapes(a.shape, max_dims=a.ndim), label="mask shape")
    mask = data.draw(arrays(shape=shape, dtype=np.bool_), label="mask")
    against_torch(lambda lib: lambda x: x.masked_fill(lib.from_numpy(mask.copy()), 1.5), a)
    value = np.array(-2.0)
    against_torch(lambda lib: lambda x, v: x.masked_fill(lib.from_numpy(mask.copy()), v),
                  a, value)
    against_torch(lambda lib: lambda x: x.masked_select(lib.from_numpy(mask.copy())), a)


def test_masked_fill_casts_the_value_to_the_tensors_dtype_like_torch():
    require_torch()
    got = [x.masked_fill(x > 1, v).tolist() for lib in (learntorch, torch)
           for x in [lib.arange(4)] for v in (2.7, lib.tensor(-1.5))]
    assert got[:2] == got[2:]


@given(st.data())
def test_where_matches_torch_with_broadcasting_and_numbers(data):
    a, b = data.draw(broadcastable_pair(), label="a, b")
    shape = np.broadcast_shapes(a.shape, b.shape)
    cond = data.draw(arrays(shape=shape, dtype=np.bool_), label="condition")
    against_torch(lambda lib: lambda x, y: lib.where(lib.from_numpy(cond.copy()), x, y), a, b)
    c = data.draw(arrays(shape=a.shape, dtype=np.bool_), label="condition for a")
    against_torch(lambda lib: lambda x: lib.where(lib.from_numpy(c.copy()), x, 0.5), a)
    against_torch(lambda lib: lambda x: x.where(lib.from_numpy(c.copy()), -x), a)


@given(arrays(dtype=np.int64, elements=st.integers(-1, 1)))
def test_nonzero_matches_torch(a):
    require_torch()
    for as_tuple in (False, True):
        got = learntorch.nonzero(learntorch.from_numpy(a.copy()), as_tuple=as_tuple)
        expected = torch.nonzero(torch.from_numpy(a.copy()), as_tuple=as_tuple)
        if as_tuple:
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g.numpy(), e.numpy())
                assert g.dtype == learntorch.int64
        else:
            np.testing.assert_array_equal(got.numpy(), expected.numpy())
            assert got.shape == expected.shape and got.dtype == learntorch.int64


@given(st.data())
def test_take_along_dim_matches_torch_with_and_without_dim(data):
    a = data.draw(arrays(min_dims=1), label="a")
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1), label="dim")
    # besides dim, the index broadcasts against the input: each size is the input's or 1
    shape = tuple(data.draw(st.integers(1, 3)) if k == dim % a.ndim
                  else data.draw(st.sampled_from([1, s])) for k, s in enumerate(a.shape))
    index = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(0, a.shape[dim] - 1)))
    against_torch(lambda lib: lambda x: lib.take_along_dim(x, lib_index(lib, index), dim), a)
    flat = data.draw(hnp.arrays(np.int64, (3,), elements=st.integers(0, a.size - 1)))
    against_torch(lambda lib: lambda x: lib.take_along_dim(x, lib_index(lib, flat)), a)


def test_take_along_dim_broadcasts_like_torch():
    a = np.arange(12.0).reshape(3, 4)
    against_torch(lambda lib: lambda x: lib.take_along_dim(x, lib.tensor([[0, 1, 3, 1, 0]]), 1),
                  a)
    against_torch(lambda lib: lambda x: lib.take_along_dim(x, lib.tensor([[0], [2]]), 0), a)


def test_argmax_indices_pick_the_maxima_with_take_along_dim():
    x = learntorch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    picked = learntorch.take_along_dim(x, x.argmax(dim=1, keepdim=True), dim=1)
    assert picked.tolist() == [[5.0], [7.0]]


def test_in_place_variants_write_into_the_tensor_and_bump_its_version():
    require_torch()
    results = []
    for lib in (learntorch, torch):
        x = lib.zeros(3, 4)
        x.scatter_(1, lib.tensor([[0], [1], [2]]), 1.0)
        x.scatter_add_(0, lib.tensor([[0, 0, 0, 0]]), lib.ones(1, 4))
        x.index_add_(1, lib.tensor([3, 3]), lib.ones(3, 2), alpha=2)
        x.index_put_((lib.tensor([2]), lib.tensor([0])), lib.tensor(9.0), accumulate=True)
        x.masked_fill_(x > 4, -1.0)
        results.append((x.tolist(), x._version))
    assert results[0] == results[1]


def idx(lib, values):
    return lib.tensor(values)


# (name, op, torch's exception type, what learntorch's message must mention)
ERRORS = [
    ("gather: float index", lambda lib, x: x.gather(0, idx(lib, [[0.0]])), RuntimeError,
     "float32"),
    ("gather: bool index", lambda lib, x: x.gather(0, idx(lib, [[True]])), RuntimeError, "bool"),
    ("gather: index out of range", lambda lib, x: x.gather(0, idx(lib, [[3]])), RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("gather: negative index", lambda lib, x: x.gather(1, idx(lib, [[-1]])), RuntimeError,
     "index -1 is out of bounds for dimension 1 with size 4"),
    ("gather: dims differ", lambda lib, x: x.gather(0, idx(lib, [0, 1])), RuntimeError, "[2]"),
    ("gather: index too large", lambda lib, x: x.gather(0, idx(lib, [[0] * 5])), RuntimeError,
     "[1, 5]"),
    ("gather: bad dim", lambda lib, x: x.gather(2, idx(lib, [[0]])), IndexError, "got 2"),
    ("scatter: float index", lambda lib, x: x.scatter(0, idx(lib, [[0.0]]), 1.0), RuntimeError,
     "float32"),
    ("scatter: out of range", lambda lib, x: x.scatter(0, idx(lib, [[4]]), 1.0), RuntimeError,
     "index 4 is out of bounds"),
    ("scatter: src dtype", lambda lib, x: x.scatter(0, idx(lib, [[0]]), x.double()),
     RuntimeError, "float64"),
    ("scatter: index larger than src",
     lambda lib, x: x.scatter(0, idx(lib, [[0, 1]]), lib.ones(1, 1)), RuntimeError, "[1, 1]"),
    ("scatter_add: src dtype", lambda lib, x: x.scatter_add(0, idx(lib, [[0]]), x.double()),
     RuntimeError, "float64"),
    ("index_select: 2-D index", lambda lib, x: x.index_select(0, idx(lib, [[0]])), IndexError,
     "[1, 1]"),
    ("index_select: float index", lambda lib, x: x.index_select(0, idx(lib, [0.0])),
     RuntimeError, "float32"),
    ("index_select: out of range", lambda lib, x: x.index_select(0, idx(lib, [3])), IndexError,
     "index out of range in self"),
    ("index_select: negative", lambda lib, x: x.index_select(0, idx(lib, [-1])), IndexError,
     "index out of range in self"),
    ("index_add: out of range", lambda lib, x: x.index_add(0, idx(lib, [3]), lib.ones(1, 4)),
     RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
    ("index_add: count", lambda lib, x: x.index_add(0, idx(lib, [0]), lib.ones(2, 4)),
     RuntimeError, "Number of indices (1)"),
    ("index_add: shape", lambda lib, x: x.index_add(0, idx(lib, [0]), lib.ones(1, 3)),
     RuntimeError, "[1, 3]"),
    ("index_add: dtype", lambda lib, x: x.index_add(0, idx(lib, [0]), lib.ones(1, 4).double()),
     RuntimeError, "Double"),
    ("index_add: float index", lambda lib, x: x.index_add(0, idx(lib, [0.0]), lib.ones(1, 4)),
     RuntimeError, "Float"),
    ("index_put: dtype", lambda lib, x: x.index_put((idx(lib, [0]),), lib.tensor(1.0).double()),
     RuntimeError, "Double"),
    ("index_put: out of range", lambda lib, x: x.index_put((idx(lib, [3]),), lib.tensor(1.0)),
     IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    ("index_put: shape", lambda lib, x: x.index_put((idx(lib, [0]),), lib.ones(2)),
     RuntimeError, "[2]"),
    ("masked_fill: int mask", lambda lib, x: x.masked_fill(x.long(), 1.0), RuntimeError,
     "int64"),
    ("masked_fill: mask shape", lambda lib, x: x.masked_fill(lib.tensor([True, False]), 1.0),
     RuntimeError, "[2]"),
    ("masked_fill: 1-D value", lambda lib, x: x.masked_fill(x > 0, lib.tensor([1.0])),
     RuntimeError, "0-dimensional value"),
    ("masked_fill_: mask larger than tensor",
     lambda lib, x: x[0].masked_fill_(x > 0, 1.0), RuntimeError, "[3, 4]"),
    ("masked_select: int mask", lambda lib, x: x.masked_select(x.long()), RuntimeError,
     "BoolTensor"),
    ("where: int condition", lambda lib, x: lib.where(x.long(), x, x), RuntimeError, "int64"),
    ("take_along_dim: float", lambda lib, x: lib.take_along_dim(x, idx(lib, [[0.0]]), 1),
     RuntimeError, "Float"),
    ("take_along_dim: dims", lambda lib, x: lib.take_along_dim(x, idx(lib, [0]), 0),
     RuntimeError, "2 dimensions for input, and 1 dimensions for indices"),
]


@pytest.mark.parametrize("name", [e[0] for e in ERRORS])
def test_bad_arguments_raise_torchs_exception_type_with_a_helpful_message(name):
    require_torch()
    _, op, error, mentions = next(e for e in ERRORS if e[0] == name)
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    with pytest.raises(error):
        op(torch, torch.from_numpy(a.copy()))
    with pytest.raises(error) as info:
        op(learntorch, learntorch.from_numpy(a.copy()))
    assert mentions in str(info.value)


def test_out_of_range_gather_names_the_index_dimension_and_size():
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        learntorch.zeros(3, 4).gather(0, learntorch.tensor([[3]]))
    assert as_numpy(learntorch.zeros(3, 4).gather(0, learntorch.tensor([[2]],
                                                                       dtype=learntorch.int32)))\
        .shape == (1, 1)
