"""Running totals (cumprod, cummax, cummin), order statistics (median, nanmedian, kthvalue,
mode, quantile), nan-aware sums, counting (bincount, histc), sets and searching (unique,
unique_consecutive, searchsorted, bucketize) and scatter_reduce: values, indices and
gradients against torch -- ties, nan and zeros included."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, as_numpy, both, both_raise, check_against_torch, require_torch,
                    torch)

SMALL_INTS = st.integers(-2, 2).map(float)  # many ties and zeros
NAN = math.nan


def _pairs(call, a, grad=True, rtol=1e-7, atol=1e-9):
    """``call(lib, x)`` returning (values, indices): both as torch's, and the gradient."""
    require_torch()
    out = []
    for lib in (learntorch, torch):
        x = lib.tensor(a, requires_grad=grad)
        values, indices = call(lib, x)
        if grad:
            g = np.random.default_rng(2).standard_normal(tuple(values.shape))
            values.backward(lib.tensor(g, dtype=values.dtype))
        out.append((as_numpy(values), as_numpy(indices), as_numpy(x.grad) if grad else None))
    (v, i, g), (tv, ti, tg) = out
    np.testing.assert_allclose(v, tv, rtol=rtol, atol=atol, equal_nan=True)
    np.testing.assert_array_equal(i, ti)
    if grad:
        np.testing.assert_allclose(g, tg, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@given(data=st.data())
def test_running_extremes_values_indices_and_gradient(name, data):
    a = data.draw(arrays(min_dims=1, elements=SMALL_INTS), label="x")
    if data.draw(st.booleans(), label="nan"):
        a = a.copy()
        a.reshape(-1)[::3] = NAN
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1), label="dim")
    _pairs(lambda lib, x: getattr(lib, name)(x, dim), a)


@given(data=st.data())
def test_cumprod_values_and_gradient_with_zeros(data):
    a = data.draw(arrays(min_dims=1, elements=SMALL_INTS | st.floats(-2, 2)), label="x")
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1), label="dim")
    check_against_torch(lambda x: x.cumprod(dim), lambda x: x.cumprod(dim), a, rtol=1e-7,
                        atol=1e-9)


def test_cumprod_second_derivative_with_a_zero():
    require_torch()
    got = []
    for lib in (learntorch, torch):
        x = lib.tensor([2.0, 0.0, 3.0, -1.5], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(x.cumprod(0).sum(), x, create_graph=True)
        g2, = lib.autograd.grad((g * g).sum(), x)
        got.append((as_numpy(g), as_numpy(g2)))
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_cumulative_ops_of_integers_accumulate_in_int64_as_torch():
    for call in (lambda m: m.tensor([1, 2, 3], dtype=m.int8).cumprod(0),
                 lambda m: m.tensor([True, True]).cumsum(0),
                 lambda m: m.tensor([3, 1, 2], dtype=m.int32).cummax(0).values,
                 lambda m: m.tensor([1, 2], dtype=m.int16).cumprod(0, dtype=m.float64)):
        got, want = both(call)
        assert got.dtype.name == str(want.dtype)[6:] and got.tolist() == want.tolist()


@pytest.mark.parametrize("name", ["median", "nanmedian", "mode", "kthvalue"])
@given(data=st.data())
def test_order_statistics_along_a_dim_pick_torchs_value_and_index(name, data):
    a = data.draw(arrays(min_dims=1, elements=SMALL_INTS), label="x")
    if name != "mode" and data.draw(st.booleans(), label="nan"):
        a = a.copy()
        a.reshape(-1)[1::4] = NAN
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1), label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    if name == "kthvalue":
        k = data.draw(st.integers(1, a.shape[dim]), label="k")
        _pairs(lambda lib, x: x.kthvalue(k, dim, keepdim), a)
    else:
        _pairs(lambda lib, x: getattr(lib, name)(x, dim, keepdim), a)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@given(data=st.data())
def test_median_of_everything_and_its_shared_gradient(name, data):
    a = data.draw(arrays(elements=SMALL_INTS), label="x")
    if data.draw(st.booleans(), label="nan"):
        a = a.copy()
        a.reshape(-1)[::2] = NAN
    check_against_torch(lambda x: getattr(learntorch, name)(x), lambda x: getattr(torch, name)(x),
                        a)


QUANTILE_Q = st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0])


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@given(data=st.data())
def test_quantile_values_and_gradient(interpolation, data):
    a = data.draw(arrays(min_dims=1, max_dims=2), label="x")
    q = data.draw(QUANTILE_Q, label="q")
    dim = data.draw(st.sampled_from([None, 0, -1]), label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")

    def fn(lib):
        return lambda x: lib.quantile(x, q, dim=dim, keepdim=keepdim, interpolation=interpolation)
    check_against_torch(fn(learntorch), fn(torch), a)


def test_the_median_of_nothing_is_nan_as_in_torch():
    got, want = both(lambda m: (m.median(m.tensor([])).item(), m.nanmedian(m.zeros(0, 2)).item()))
    assert all(math.isnan(v) for v in got + want)


def test_quantile_with_a_tensor_of_qs_and_nanquantile():
    require_torch()
    a = np.array([[1.0, NAN, 3.0, 2.0], [4.0, 0.5, -1.0, 2.0]])
    for call in (lambda m, x: m.quantile(x, m.tensor([0.2, 0.5, 0.75], dtype=m.float64), dim=1),
                 lambda m, x: m.nanquantile(x, 0.3, dim=1),
                 lambda m, x: m.nanquantile(x, m.tensor([0.1, 0.9], dtype=m.float64)),
                 lambda m, x: x.quantile(0.5)):
        check_against_torch(lambda x: call(learntorch, x), lambda x: call(torch, x), a)


@pytest.mark.parametrize("call", [
    lambda m: m.quantile(m.tensor([1, 2]), 0.5),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), 1.5),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), 0.5, interpolation="cubic"),
    lambda m: m.quantile(m.tensor([]), 0.5),
    lambda m: m.kthvalue(m.tensor([1.0, 2.0]), 3),
    lambda m: m.mode(m.zeros(2, 0), 1),
])
def test_order_statistic_errors_are_torchs(call):
    both_raise(call)


@given(data=st.data())
def test_nansum_nanmean_and_aminmax(data):
    a = data.draw(arrays(min_dims=1), label="x")
    a = a.copy()
    a.reshape(-1)[::3] = NAN
    dim = data.draw(st.sampled_from([None, 0, -1]), label="dim")
    check_against_torch(lambda x: learntorch.nansum(x, dim), lambda x: torch.nansum(x, dim), a)
    check_against_torch(lambda x: learntorch.nanmean(x, dim), lambda x: torch.nanmean(x, dim),
                        a)
    got, want = both(lambda m: m.aminmax(m.tensor(a), dim=dim if dim is not None else None))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(as_numpy(g), as_numpy(w))


@given(st.lists(st.integers(0, 6), max_size=20), st.integers(0, 9), st.booleans())
def test_bincount_counts_and_weighted_sums(values, minlength, weighted):
    require_torch()
    weights = np.linspace(-1, 1, len(values)).astype(np.float32)
    for w_dtype in ("float32", "float64", "int64"):
        def call(m):
            w = m.tensor(weights.astype(w_dtype)) if weighted else None
            return m.bincount(m.tensor(values, dtype=m.int64), w, minlength)
        got, want = both(call)
        assert got.dtype.name == str(want.dtype)[6:]
        np.testing.assert_allclose(as_numpy(got), as_numpy(want), rtol=1e-6)


@given(data=st.data())
def test_histc_counts_like_torch(data):
    a = data.draw(arrays(dtype=np.float32, min_dims=1, elements=st.floats(-3, 3, width=32)),
                  label="x")
    bins = data.draw(st.integers(1, 7), label="bins")
    lo, hi = data.draw(st.sampled_from([(0, 0), (-1, 1), (-3, 3), (0.5, 2.5)]), label="range")
    got, want = both(lambda m: m.histc(m.tensor(a), bins=bins, min=lo, max=hi))
    np.testing.assert_array_equal(as_numpy(got), as_numpy(want))
    assert got.dtype is learntorch.float32


@pytest.mark.parametrize("call", [
    lambda m: m.bincount(m.tensor([-1, 2])),
    lambda m: m.bincount(m.tensor([1.0])),
    lambda m: m.bincount(m.tensor([[1]])),
    lambda m: m.histc(m.tensor([1, 2])),
    lambda m: m.histc(m.tensor([1.0]), min=2, max=1),
])
def test_counting_errors_are_torchs(call):
    both_raise(call)


@given(data=st.data())
def test_unique_values_inverse_and_counts(data):
    a = data.draw(arrays(elements=SMALL_INTS), label="x")
    if data.draw(st.booleans(), label="nan"):
        # each nan is a value of its own; torch orders several of them by its CPU's SIMD
        # sort (documented), so one nan, or a few in at most 16 elements
        a = a.copy()
        a.reshape(-1)[::4 if a.size <= 16 else a.size] = NAN
    got, want = both(lambda m: m.unique(m.tensor(a), return_inverse=True, return_counts=True))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(as_numpy(g), as_numpy(w))
    got, want = both(lambda m: m.unique_consecutive(m.tensor(a), return_inverse=True,
                                                    return_counts=True))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(as_numpy(g), as_numpy(w))


@given(data=st.data())
def test_unique_along_a_dim(data):
    a = data.draw(arrays(min_dims=1, max_dims=3, elements=st.integers(0, 1).map(float)),
                  label="x")
    dim = data.draw(st.integers(0, a.ndim - 1), label="dim")
    for name in ("unique", "unique_consecutive"):
        got, want = both(lambda m: getattr(m, name)(m.tensor(a), dim=dim, return_inverse=True,
                                                    return_counts=True))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(as_numpy(g), as_numpy(w))


def test_unique_has_no_gradient_as_in_torch():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    u = learntorch.unique(x)
    assert u.grad_fn.name() == "Unique2Backward0"
    with pytest.raises(RuntimeError, match="not implemented"):
        u.sum().backward()


@given(st.lists(st.floats(-3, 3), min_size=1, max_size=8), st.data())
def test_searchsorted_and_bucketize(boundaries, data):
    seq = np.sort(np.round(np.array(boundaries), 1))
    values = data.draw(arrays(elements=st.floats(-4, 4).map(lambda v: round(v, 1))), label="v")
    right = data.draw(st.booleans(), label="right")
    for call in (lambda m: m.searchsorted(m.tensor(seq), m.tensor(values), right=right),
                 lambda m: m.bucketize(m.tensor(values), m.tensor(seq), right=right),
                 lambda m: m.searchsorted(m.tensor(seq), m.tensor(values),
                                          side="right" if right else "left", out_int32=True),
                 lambda m: m.searchsorted(m.tensor(seq), 0.5)):
        got, want = both(call)
        assert got.dtype.name == str(want.dtype)[6:]
        np.testing.assert_array_equal(as_numpy(got), as_numpy(want))


def test_searchsorted_row_by_row():
    got, want = both(lambda m: m.searchsorted(m.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]),
                                              m.tensor([[2.5, 0.0], [5.0, 6.0]])))
    assert got.tolist() == want.tolist()


SCATTER_INDEX = np.array([[0, 1, 0, 2], [2, 2, 1, 0]])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@given(data=st.data())
def test_scatter_reduce_values_and_gradients(reduce, include_self, data):
    x = data.draw(arrays(shape=(3, 4), elements=SMALL_INTS | st.floats(-2, 2)), label="x")
    src = data.draw(arrays(shape=(2, 4), elements=SMALL_INTS | st.floats(-2, 2)), label="src")
    if reduce == "prod":  # torch's own double-zero case needs no gradient here
        src = np.where((src == 0) & (np.arange(8).reshape(2, 4) % 2 == 1), 1.5, src)

    def fn(lib):
        return lambda a, s: a.scatter_reduce(0, lib.tensor(SCATTER_INDEX), s, reduce,
                                             include_self=include_self)
    check_against_torch(fn(learntorch), fn(torch), x, src, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_values_and_its_missing_derivative(reduce):
    got, want = both(lambda m: (m.ones(3, 4).scatter(0, m.tensor(SCATTER_INDEX), m.full((2, 4), 2.0),
                                                     reduce=reduce),
                                m.ones(3, 4).scatter(0, m.tensor(SCATTER_INDEX), 3.0,
                                                     reduce=reduce)))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(as_numpy(g), as_numpy(w))
    x = learntorch.ones(3, 4, requires_grad=True)
    y = x.scatter(0, learntorch.tensor(SCATTER_INDEX), 2.0, reduce=reduce)
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()
