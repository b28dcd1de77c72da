"""cat, stack, hstack, vstack, split, chunk, unbind: values, dtypes, gradients, errors vs torch."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import arrays, as_numpy, check_against_torch, require_torch, torch


def against_torch(op, *arrays_in, **kwargs):
    require_torch()
    return check_against_torch(op(learntorch), op(torch), *arrays_in, **kwargs)


@st.composite
def joinable(draw, n_max=3, same_shape=False):
    """(dim, arrays) that can be concatenated along dim (or stacked, when ``same_shape``)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    out = []
    for _ in range(draw(st.integers(1, n_max))):
        s = list(shape)
        if not same_shape:
            s[dim] = draw(st.integers(0, 3))
        out.append(draw(arrays(shape=tuple(s))))
    return dim, out


@given(joinable())
def test_cat_matches_torch_along_any_dim(case):
    dim, parts = case
    against_torch(lambda lib: lambda *xs: lib.cat(list(xs), dim), *parts)
    against_torch(lambda lib: lambda *xs: lib.concat(xs, dim=dim), *parts)


@given(joinable(same_shape=True), st.data())
def test_stack_matches_torch_along_any_new_dim(case, data):
    _, parts = case
    ndim = parts[0].ndim
    dim = data.draw(st.integers(-ndim - 1, ndim), label="stack dim")
    against_torch(lambda lib: lambda *xs: lib.stack(xs, dim), *parts)


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int64", "float32"),
                                    ("bool", "int64"), ("int32", "int64"), ("float16", "float32")])
def test_cat_and_stack_promote_mixed_dtypes_like_torch(dtypes):
    require_torch()
    got, expected = [], []
    for lib, out in ((learntorch, got), (torch, expected)):
        xs = [lib.ones(2, 2, dtype=getattr(lib, d)) for d in dtypes]
        out.append(str(lib.cat(xs).dtype).split(".")[-1])
        out.append(str(lib.stack(xs, 1).dtype).split(".")[-1])
    assert got == expected


def test_cat_gradient_reaches_inputs_of_different_dtypes():
    require_torch()
    grads = []
    for lib in (learntorch, torch):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (lib.cat([a, b]) * lib.arange(5.0, dtype=lib.float64)).sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist(), str(a.grad.dtype)[-7:]))
    assert grads[0] == grads[1]


def test_cat_skips_legacy_empty_vectors_like_torch():
    against_torch(lambda lib: lambda x: lib.cat([x, lib.zeros(0, dtype=lib.float64), x], 1),
                  np.ones((2, 3)))


@given(st.data())
def test_hstack_and_vstack_match_torch(data):
    ndim = data.draw(st.integers(0, 2), label="ndim")
    shape = data.draw(hnp.array_shapes(min_dims=ndim, max_dims=ndim, max_side=3), label="shape")
    parts = [data.draw(arrays(shape=shape)) for _ in range(data.draw(st.integers(1, 3)))]
    against_torch(lambda lib: lambda *xs: lib.hstack(xs), *parts)
    against_torch(lambda lib: lambda *xs: lib.vstack(list(xs)), *parts)


def test_vstack_of_vectors_and_matrices_like_torch():
    against_torch(lambda lib: lambda v, m: lib.vstack([v, m]), np.arange(3.0), np.ones((2, 3)))


@given(st.data())
def test_split_chunk_unbind_values_and_gradients_match_torch(data):
    a = data.draw(arrays(min_dims=1, max_side=5), label="a")
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1), label="dim")
    size = a.shape[dim]
    sections = data.draw(st.lists(st.integers(0, size), max_size=3).map(
        lambda s: s + [size - sum(s)] if sum(s) <= size else [size]), label="sections")
    step = data.draw(st.integers(1, 6), label="split size")
    chunks = data.draw(st.integers(1, 6), label="chunks")

    def weighted(lib, parts):
        return lib.stack([(p * (i + 1)).sum() for i, p in enumerate(parts)])
    against_torch(lambda lib: lambda x: weighted(lib, lib.split(x, step, dim)), a)
    against_torch(lambda lib: lambda x: weighted(lib, x.split(sections, dim=dim)), a)
    against_torch(lambda lib: lambda x: weighted(lib, lib.chunk(x, chunks, dim)), a)
    against_torch(lambda lib: lambda x: weighted(lib, lib.unbind(x, dim)), a)


def test_split_pieces_are_views_of_the_input():
    require_torch()
    for lib in (learntorch, torch):
        x = lib.zeros(5, 2)
        first, second = x.split([2, 3])
        second[0] = 1.0
        a, b, c = x.chunk(3)
        c.fill_(2.0)
        row = x.unbind(1)[1]
        row[0] = 3.0
        assert x.tolist() == [[0, 3], [0, 0], [1, 1], [0, 0], [2, 2]], lib.__name__


ERRORS = [
    ("cat: ranks differ", lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3)]), RuntimeError,
     "[3]"),
    ("cat: sizes differ", lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]), RuntimeError,
     "[2, 4]"),
    ("cat: empty list", lambda lib: lib.cat([]), ValueError, "non-empty"),
    ("stack: empty list", lambda lib: lib.stack([]), RuntimeError, "non-empty"),
    ("cat: a tensor, not a list", lambda lib: lib.cat(lib.ones(2, 2)), TypeError, "Tensor"),
    ("cat: a number in the list", lambda lib: lib.cat([lib.ones(2), 3]), TypeError, "int"),
    ("cat: bad dim", lambda lib: lib.cat([lib.ones(2, 3)], 2), IndexError, "got 2"),
    ("stack: shapes differ", lambda lib: lib.stack([lib.ones(2), lib.ones(3)]), RuntimeError,
     "[3]"),
    ("stack: bad dim", lambda lib: lib.stack([lib.ones(2)], 2), IndexError, "got 2"),
    ("split: sizes do not sum", lambda lib: lib.ones(5).split([2, 2]), RuntimeError, "[2, 2]"),
    ("split: zero size", lambda lib: lib.ones(5).split(0), RuntimeError, "split_size"),
    ("chunk: zero chunks", lambda lib: lib.ones(5).chunk(0), RuntimeError, "0"),
    ("unbind: bad dim", lambda lib: lib.ones(5).unbind(1), IndexError, "got 1"),
]


@pytest.mark.parametrize("name", [e[0] for e in ERRORS])
def test_bad_joins_raise_torchs_exception_type(name):
    require_torch()
    _, op, error, mentions = next(e for e in ERRORS if e[0] == name)
    with pytest.raises(error):
        op(torch)
    with pytest.raises(error) as info:
        op(learntorch)
    assert mentions in str(info.value)


def test_results_are_new_tensors_for_cat_and_stack():
    x = learntorch.zeros(2)
    y = learntorch.cat([x, x])
    y[0] = 1.0
    z = learntorch.stack([x])
    z[0, 1] = 1.0
    assert as_numpy(x).tolist() == [0.0, 0.0]
