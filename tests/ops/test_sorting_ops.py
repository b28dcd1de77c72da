"""sort, argsort and topk against torch: values, indices, gradients, NaN order, errors.

The gradient of a sorted value goes back to the position it came from; elements
topk did not pick get zero.  NaN is larger than every number, as in torch.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, noncontiguous, require_torch, torch, torch_tensor)

# few distinct values (ties), NaN and infinities, signed zeros
TIES_AND_NAN = st.sampled_from([0.0, -0.0, 1.0, -2.5, 3.0, np.nan, np.inf, -np.inf])


@st.composite
def distinct_arrays(draw, min_dims=0):
    """Arrays without ties (a shuffled range, scaled), often non-contiguous views: the
    positions that sort and topk choose are then determined, and so is the gradient."""
    shape = draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=3))
    size = int(np.prod(shape))
    order = draw(st.permutations(range(size)))
    return noncontiguous(draw, (np.array(order, dtype=np.float64) * 0.37 - 1).reshape(shape))


def _dim_of(data, a):
    return data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1), label="dim")


@given(data=st.data(), descending=st.booleans())
def test_stable_sort_matches_torch_exactly_with_ties_and_nan(data, descending):
    require_torch()
    a = data.draw(arrays(elements=TIES_AND_NAN, max_dims=3), label="a")
    dim = _dim_of(data, a)
    values, indices = learntorch.sort(lt_tensor(a), dim=dim, descending=descending, stable=True)
    expected = torch.sort(torch_tensor(a), dim=dim, descending=descending, stable=True)
    assert_close(values, expected.values, what="values")
    assert indices.dtype == learntorch.int64
    np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())


@given(data=st.data(), descending=st.booleans())
def test_sort_values_and_gradient_match_torch(data, descending):
    require_torch()
    a = data.draw(distinct_arrays(), label="a")
    dim = _dim_of(data, a)
    check_against_torch(lambda x: learntorch.sort(x, dim=dim, descending=descending).values,
                        lambda x: torch.sort(x, dim=dim, descending=descending, stable=True).values,
                        a)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float16", "uint8"])
def test_sort_and_argsort_of_other_dtypes_match_torch(dtype):
    torch = require_torch()
    a = (np.arange(24) * 7 % 5).reshape(2, 3, 4).astype(dtype)
    for descending in (False, True):
        r = learntorch.sort(lt_tensor(a), dim=1, descending=descending, stable=True)
        e = torch.sort(torch_tensor(a), dim=1, descending=descending, stable=True)
        assert r.values.dtype.name == str(e.values.dtype).replace("torch.", "")
        np.testing.assert_array_equal(r.values.numpy(), e.values.numpy())
        np.testing.assert_array_equal(r.indices.numpy(), e.indices.numpy())
        np.testing.assert_array_equal(
            learntorch.argsort(lt_tensor(a), dim=1, descending=descending, stable=True).numpy(),
            torch.argsort(torch_tensor(a), dim=1, descending=descending, stable=True).numpy())


@given(data=st.data(), descending=st.booleans())
def test_argsort_is_sorts_indices_and_matches_torch(data, descending):
    require_torch()
    a = data.draw(arrays(elements=TIES_AND_NAN), label="a")
    dim = _dim_of(data, a)
    got = lt_tensor(a).argsort(dim, descending)
    assert not got.requires_grad
    np.testing.assert_array_equal(
        got.numpy(), torch.argsort(torch_tensor(a), dim=dim, descending=descending,
                                   stable=True).numpy())


@given(data=st.data(), largest=st.booleans())
def test_topk_values_indices_and_gradient_match_torch(data, largest):
    require_torch()
    a = data.draw(distinct_arrays(min_dims=1), label="a")
    dim = _dim_of(data, a)
    k = data.draw(st.integers(0, a.shape[dim]), label="k")
    check_against_torch(lambda x: learntorch.topk(x, k, dim, largest).values,
                        lambda x: torch.topk(x, k, dim, largest).values, a)
    np.testing.assert_array_equal(learntorch.topk(lt_tensor(a), k, dim, largest).indices.numpy(),
                                  torch.topk(torch_tensor(a), k, dim, largest).indices.numpy())


@given(data=st.data(), largest=st.booleans())
def test_topk_with_ties_and_nan_picks_the_same_values_as_torch(data, largest):
    # among equal elements torch may pick any; the values, and what the indices point at, agree
    require_torch()
    a = data.draw(arrays(elements=TIES_AND_NAN, min_dims=1), label="a")
    dim = _dim_of(data, a)
    k = data.draw(st.integers(0, a.shape[dim]), label="k")
    values, indices = learntorch.topk(lt_tensor(a), k, dim=dim, largest=largest)
    expected = torch.topk(torch_tensor(a), k, dim=dim, largest=largest)
    assert_close(values, expected.values, what="values")
    np.testing.assert_array_equal(np.take_along_axis(a, indices.numpy(), dim), values.numpy())


def test_nan_is_the_largest_value():
    x = learntorch.tensor([3.0, float("nan"), 1.0, float("nan"), 2.0])
    assert x.sort().indices.tolist() == [2, 4, 0, 1, 3]
    assert x.sort(descending=True).indices.tolist() == [1, 3, 0, 4, 2]
    assert learntorch.topk(x, 2).indices.tolist() == [1, 3]
    assert learntorch.topk(x, 2, largest=False).values.tolist() == [1.0, 2.0]


def test_results_are_named_tuples_like_torchs_return_types():
    x = learntorch.tensor([[2.0, 1.0, 3.0]])
    r = learntorch.sort(x)
    values, indices = r
    assert r.values is values and r.indices is indices and r[0] is values
    assert type(r).__name__ == "sort" and type(learntorch.topk(x, 1)).__name__ == "topk"
    assert x.sort(stable=True).indices.tolist() == [[1, 0, 2]]
    assert x.topk(2).values.tolist() == [[3.0, 2.0]]


def test_gradient_scatters_back_to_the_chosen_positions():
    x = learntorch.tensor([[5.0, 1.0, 4.0, 2.0]], requires_grad=True)
    top = learntorch.topk(x, 2).values                # picks 5 and 4
    (top * learntorch.tensor([[10.0, 100.0]])).sum().backward()
    assert x.grad.tolist() == [[10.0, 0.0, 100.0, 0.0]]


@pytest.mark.parametrize("program", [
    lambda m, x: m.sort(x, dim=0, descending=True).values,
    lambda m, x: m.topk(x, 2, dim=1, largest=False).values,
])
def test_gradients_match_finite_differences(program):
    a = np.random.default_rng(0).standard_normal((3, 4))
    check_against_finite_differences(lambda x: program(learntorch, x), a)


def test_gradient_of_the_gradient_matches_torch():
    require_torch()
    a = np.random.default_rng(1).standard_normal((3, 4))
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        x = make(a, True)
        v = lib.topk(x, 2, dim=1).values
        g, = lib.autograd.grad((v ** 3).sum(), x, create_graph=True)
        results.append(lib.autograd.grad((g ** 2).sum(), x)[0])
    assert_close(*results, what="gradient of the gradient")


def test_a_0d_tensor_sorts_to_itself_like_torch():
    torch = require_torch()
    for program in (lambda m, x: m.sort(x), lambda m, x: m.topk(x, 1),
                    lambda m, x: m.sort(x, dim=-1, descending=True)):
        x = learntorch.tensor(2.0, requires_grad=True)
        values, indices = program(learntorch, x)
        expected = program(torch, torch.tensor(2.0))
        assert values.shape == () and indices.shape == () and indices.item() == 0
        assert values.item() == expected.values.item()
        values.backward()
        assert x.grad.item() == 1.0
    assert learntorch.argsort(learntorch.tensor(2.0)).tolist() == 0


def test_empty_dims_sort_like_torch():
    torch = require_torch()
    r = learntorch.sort(learntorch.ones(2, 0))
    assert tuple(r.values.shape) == tuple(torch.sort(torch.ones(2, 0)).values.shape)
    assert tuple(learntorch.topk(learntorch.ones(2, 0), 0).indices.shape) == (2, 0)


@pytest.mark.parametrize("program,error,words", [
    (lambda m: m.sort(m.ones(2, 3), dim=2), IndexError, ["[-2, 1]", "2"]),
    (lambda m: m.argsort(m.ones(()), dim=1), IndexError, ["[-1, 0]"]),
    (lambda m: m.topk(m.ones(2, 3), 4), RuntimeError, ["k out of range", "[2, 3]"]),
    (lambda m: m.topk(m.ones(2, 3), -1), RuntimeError, ["k out of range"]),
    (lambda m: m.topk(m.ones(()), 2), RuntimeError, ["k out of range"]),
    (lambda m: m.topk(m.ones(2, 3), 2.0), TypeError, ["'k'", "float"]),
    (lambda m: m.topk(m.ones(2, 3), 1, None), TypeError, ["'dim'", "NoneType"]),
    (lambda m: m.sort(m.ones(2, 3), dim=None), TypeError, ["NoneType"]),
    (lambda m: m.topk(m.ones(2, dtype=m.bool), 1), RuntimeError, ["bool"]),
    (lambda m: m.sort([3, 1]), TypeError, ["'input'", "list"]),
    (lambda m: m.sort(m.ones(3), 0, True, True), TypeError, []),
], ids=["dim_range", "dim_range_0d", "k_too_big", "k_negative", "k_0d", "k_float", "dim_none",
        "sort_dim_none", "topk_bool", "not_a_tensor", "stable_positional"])
def test_bad_input_raises_torchs_exception_with_a_clear_message(program, error, words):
    torch = require_torch()
    with pytest.raises(error):
        program(torch)
    with pytest.raises(error) as mine:
        program(learntorch)
    for w in words:
        assert w in str(mine.value), (w, str(mine.value))


def test_k_may_be_a_0d_integer_tensor_like_torch():
    x = learntorch.tensor([1.0, 3.0, 2.0])
    assert learntorch.topk(x, learntorch.tensor(2)).values.tolist() == [3.0, 2.0]


def test_sort_of_a_transposed_view_matches_torch():
    require_torch()
    a = np.arange(12.0)[::-1].reshape(3, 4).T
    check_against_torch(lambda x: learntorch.sort(x, 0).values,
                        lambda x: torch.sort(x, 0).values, a)
