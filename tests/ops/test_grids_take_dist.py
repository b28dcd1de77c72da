"""meshgrid, cartesian_prod, broadcast_tensors, take and dist against torch 2.13: values,
dtypes, shapes, strides of the views, gradients, and torch's exception types."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from oracle import as_numpy, both, check_against_torch, require_torch


def same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, tuple) == isinstance(want, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(as_numpy(got), as_numpy(want))


def run_both(program):
    got, want = both(program)
    same(got, want)
    return got, want


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3,), (3, 2), (3, 2, 4), (0, 2), ((), 2)])
def test_meshgrid_values_shapes_and_views(indexing, sizes):
    def program(lib):
        ts = [lib.tensor(7) if s == () else lib.arange(s) for s in sizes]
        return lib.meshgrid(*ts, indexing=indexing)
    got, want = run_both(program)
    assert [g.stride() for g in got] == [w.stride() for w in want]


def test_meshgrid_takes_a_list_and_warns_without_indexing():
    require_torch()
    for lib in both(lambda lib: lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = lib.meshgrid([lib.arange(3), lib.arange(2)])
        assert any("indexing argument" in str(w.message) for w in caught)
        assert tuple(grids[0].shape) == (3, 2)


@pytest.mark.parametrize("program", [
    lambda lib: lib.meshgrid(lib.arange(3), lib.arange(2.0), indexing="ij"),
    lambda lib: lib.meshgrid(lib.ones(2, 2), lib.ones(2), indexing="ij"),
    lambda lib: lib.meshgrid(lib.arange(3), indexing="zz"),
    lambda lib: lib.meshgrid(indexing="ij"),
    lambda lib: lib.cartesian_prod(lib.ones(2, 2)),
    lambda lib: lib.cartesian_prod(lib.arange(2), lib.arange(2.0)),
    lambda lib: lib.broadcast_tensors(lib.ones(3), lib.ones(2)),
    lambda lib: lib.take(lib.arange(6), lib.tensor([6])),
    lambda lib: lib.take(lib.arange(6), lib.tensor([-7])),
    lambda lib: lib.take(lib.arange(6), lib.tensor([1.0])),
    lambda lib: lib.take(lib.zeros(0), lib.tensor([0])),
    lambda lib: lib.dist(lib.ones(3, dtype=lib.int64), lib.zeros(3, dtype=lib.int64)),
])
def test_refusals_have_torchs_types(program):
    torch = require_torch()
    types = []
    for lib in (learntorch, torch):
        with pytest.raises(Exception) as info:
            program(lib)
        types.append(type(info.value))
    assert types[0] is types[1]


@pytest.mark.parametrize("sizes", [(3,), (3, 2), (2, 1, 3), (0, 2)])
def test_cartesian_prod(sizes):
    run_both(lambda lib: lib.cartesian_prod(*[lib.arange(s) * (k + 1)
                                               for k, s in enumerate(sizes)]))


@pytest.mark.parametrize("shapes", [[(3, 1), (2,)], [(1,), (2, 3), (4, 1, 1)], [(3,)], [(), (2,)]])
def test_broadcast_tensors_views(shapes):
    got, want = run_both(lambda lib: lib.broadcast_tensors(
        *[lib.arange(int(np.prod(s)), dtype=lib.float32).reshape(s) for s in shapes]))
    assert [g.stride() for g in got] == [w.stride() for w in want]


def test_broadcast_tensors_gradients():
    check_against_torch(lambda a, b: sum(t.sum() * (k + 1) for k, t in enumerate(
                            learntorch.broadcast_tensors(a, b))),
                        lambda a, b: sum(t.sum() * (k + 1) for k, t in enumerate(
                            __import__("torch").broadcast_tensors(a, b))),
                        np.arange(3.0).reshape(3, 1), np.arange(2.0) + 1)


@given(shape=st.sampled_from([(6,), (2, 3), (2, 1, 3), ()]),
       index=st.lists(st.integers(-6, 5), min_size=0, max_size=7),
       as_matrix=st.booleans())
@settings(max_examples=40, deadline=None)
def test_take_values_and_gradients(shape, index, as_matrix):
    require_torch()
    n = int(np.prod(shape))
    index = [i % n - (n if i < 0 else 0) for i in index]
    idx = np.array(index, dtype=np.int64)
    if as_matrix and len(index) % 2 == 0:
        idx = idx.reshape(2, -1)
    values = np.array(np.arange(n, dtype=np.float64).reshape(shape) * 1.5)
    run_both(lambda lib: lib.take(lib.tensor(values), lib.tensor(idx)))
    run_both(lambda lib: lib.tensor(values).t().take(lib.tensor(idx)) if len(shape) == 2 else
             lib.tensor(values).take(lib.tensor(idx)))
    if idx.size:
        check_against_torch(lambda x: learntorch.take(x, learntorch.tensor(idx)),
                            lambda x: __import__("torch").take(x, __import__("torch").tensor(idx)),
                            values)


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), float("-inf"), 0.5])
def test_dist_values_and_gradients(p):
    a = np.array([[0.5, -1.25, 2.0], [3.0, 0.0, -0.75]])
    b = np.array([0.25, 1.0, -2.0])
    check_against_torch(lambda x, y: learntorch.dist(x, y, p),
                        lambda x, y: __import__("torch").dist(x, y, p), a, b)


def test_dist_p0_counts_the_differing_elements():
    # (torch's own backward of dist with p=0 fails, so only the value is compared)
    run_both(lambda lib: lib.dist(lib.tensor([[0.5, 1.0], [2.0, 3.0]]), lib.tensor([0.5, 2.0]),
                                  0))
