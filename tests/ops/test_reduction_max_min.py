"""max/min (full, along a dim, of two tensors), amax/amin and argmax/argmin against torch.

Elements are often small integers stored as floats, so ties are common: that is
where the gradient rules differ (full max and amax share the gradient evenly
among tied elements; max along a dim sends it to the one index it returns).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)

# small integers as floats: ties in most slices
_tied = st.integers(-2, 2).map(float)
tied_or_not = st.sampled_from([_tied, None])


@st.composite
def array_and_dim(draw, min_dims=0, tuple_dims=False, dtype=np.float64):
    a = draw(arrays(dtype=dtype, min_dims=min_dims, elements=draw(tied_or_not)
                    if np.issubdtype(dtype, np.floating) else None))
    nd = max(a.ndim, 1)
    if tuple_dims and draw(st.booleans()):
        chosen = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        return a, tuple(d - nd if draw(st.booleans()) else d for d in chosen)
    return a, draw(st.integers(-nd, nd - 1))


# ---------------------------------------------------------------- full max/min
@pytest.mark.parametrize("name", ["max", "min"])
@given(a=arrays(elements=_tied))
def test_full_max_min_share_the_gradient_among_ties_like_torch(name, a):
    require_torch()
    out = check_against_torch(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), a)
    assert out.grad_fn.name() == f"{name.capitalize()}Backward1"


@pytest.mark.parametrize("name", ["max", "min"])
@given(a=arrays(dtype=np.int64))
def test_full_max_min_of_integers_keep_the_dtype(name, a):
    require_torch()
    check_against_torch(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), a)


# ---------------------------------------------------------------- max/min along a dim
@pytest.mark.parametrize("name", ["max", "min"])
@given(a_dim=array_and_dim(), keepdim=st.booleans())
def test_max_min_along_a_dim_match_torch_values_indices_and_gradient(name, a_dim, keepdim):
    torch = require_torch()
    a, dim = a_dim
    lt, th = lt_tensor(a, True), torch_tensor(a, True)
    lt_res = getattr(lt, name)(dim, keepdim=keepdim)
    th_res = getattr(th, name)(dim, keepdim=keepdim)
    np.testing.assert_array_equal(lt_res.values.detach().numpy(), th_res.values.detach().numpy())
    # ties: torch (CPU) returns the first index, and so must we
    np.testing.assert_array_equal(lt_res.indices.numpy(), th_res.indices.numpy())
    assert lt_res.indices.dtype is learntorch.int64
    assert not lt_res.indices.requires_grad
    assert lt_res.values.grad_fn.name() == th_res.values.grad_fn.name()
    g = np.random.default_rng(0).standard_normal(th_res.values.shape)
    lt_res.values.backward(learntorch.from_numpy(g))
    th_res.values.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(lt.grad.numpy(), th.grad.numpy())


def test_max_along_a_dim_is_a_named_tuple_that_unpacks():
    x = learntorch.tensor([[1.0, 7.0, 7.0], [4.0, 2.0, 0.0]])
    result = x.max(1)
    values, indices = result
    assert values is result.values and indices is result.indices
    assert result[0] is result.values and result[1] is result.indices
    assert values.tolist() == [7.0, 4.0] and indices.tolist() == [1, 0]
    assert type(result).__name__ == "max" and type(x.min(0)).__name__ == "min"
    assert "values=" in repr(result) and "indices=" in repr(result)
    by_keyword = learntorch.max(x, dim=1, keepdim=True)
    assert by_keyword.values.shape == (2, 1) and by_keyword.indices.shape == (2, 1)


@pytest.mark.parametrize("name", ["max", "min"])
@given(a_dim=array_and_dim(dtype=np.int64), keepdim=st.booleans())
def test_max_min_along_a_dim_of_integers_match_torch(name, a_dim, keepdim):
    torch = require_torch()
    a, dim = a_dim
    lt_res = getattr(learntorch, name)(lt_tensor(a), dim, keepdim)
    th_res = getattr(torch, name)(torch_tensor(a), dim, keepdim)
    assert lt_res.values.dtype is learntorch.int64
    np.testing.assert_array_equal(lt_res.values.numpy(), th_res.values.numpy())
    np.testing.assert_array_equal(lt_res.indices.numpy(), th_res.indices.numpy())


def test_nan_wins_in_max_and_min_like_torch():
    torch = require_torch()
    a = np.array([[1.0, np.nan, 3.0], [2.0, 0.0, -1.0]])
    for name in ("max", "min"):
        lt_full, th_full = getattr(lt_tensor(a), name)(), getattr(torch_tensor(a), name)()
        assert np.isnan(lt_full.item()) and np.isnan(th_full.item())
        lt_res, th_res = getattr(lt_tensor(a), name)(1), getattr(torch_tensor(a), name)(1)
        np.testing.assert_array_equal(lt_res.values.numpy(), th_res.values.numpy())
        np.testing.assert_array_equal(lt_res.indices.numpy(), th_res.indices.numpy())
        lt_arg, th_arg = getattr(lt_tensor(a), "arg" + name)(), getattr(torch_tensor(a),
                                                                        "arg" + name)()
        assert lt_arg.item() == th_arg.item()


# ---------------------------------------------------------------- max(a, b)
@pytest.mark.parametrize("name,elementwise", [("max", "maximum"), ("min", "minimum")])
def test_max_min_of_two_tensors_are_maximum_minimum(name, elementwise):
    torch = require_torch()
    a = np.array([[1.0, 5.0, 2.0]])
    b = np.array([[3.0], [2.0]])
    check_against_torch(lambda x, y: getattr(learntorch, name)(x, y),
                        lambda x, y: getattr(torch, name)(x, y), a, b)
    check_against_torch(lambda x, y: getattr(x, name)(y), lambda x, y: getattr(x, name)(y), a, b)
    check_against_torch(lambda x, y: getattr(learntorch, name)(x, other=y),
                        lambda x, y: getattr(torch, elementwise)(x, y), a, b)


# ---------------------------------------------------------------- amax / amin
@pytest.mark.parametrize("name", ["amax", "amin"])
@given(a_dim=array_and_dim(tuple_dims=True), keepdim=st.booleans())
def test_amax_amin_split_the_gradient_among_ties_like_torch(name, a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    out = check_against_torch(lambda x: getattr(x, name)(dim, keepdim),
                              lambda x: getattr(x, name)(dim, keepdim), a)
    assert out.grad_fn.name() == f"{name.capitalize()}Backward0"


@pytest.mark.parametrize("name", ["amax", "amin"])
@given(a=arrays(elements=_tied))
def test_amax_amin_without_dim_reduce_everything(name, a):
    require_torch()
    check_against_torch(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), a)
    check_against_torch(lambda x: getattr(x, name)(()), lambda x: getattr(x, name)(()), a)


# ---------------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(a=arrays(elements=_tied), data=st.data())
def test_argmax_argmin_match_torch(name, a, data):
    torch = require_torch()
    keepdim = data.draw(st.booleans())
    nd = max(a.ndim, 1)
    dim = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
    lt = getattr(learntorch, name)(lt_tensor(a), dim, keepdim)
    th = getattr(torch, name)(torch_tensor(a), dim, keepdim)
    assert lt.dtype is learntorch.int64
    assert lt.shape == tuple(th.shape)
    np.testing.assert_array_equal(lt.numpy(), th.numpy())


def test_argmax_of_a_tensor_that_requires_grad_has_no_gradient():
    x = learntorch.tensor([1.0, 3.0, 2.0], requires_grad=True)
    out = x.argmax()
    assert out.item() == 1 and not out.requires_grad and out.grad_fn is None


# ---------------------------------------------------------------- empty and 0-dim inputs
@pytest.mark.parametrize("call", [
    lambda t, x: x.max(), lambda t, x: x.min(), lambda t, x: x.amax(), lambda t, x: x.amin(),
    lambda t, x: x.argmax(), lambda t, x: x.argmin(), lambda t, x: x.max(0),
    lambda t, x: x.min(0), lambda t, x: x.amax(0), lambda t, x: x.amin((0, 1)),
    lambda t, x: x.argmax(0), lambda t, x: x.argmin(0),
], ids=["max", "min", "amax", "amin", "argmax", "argmin", "max_dim", "min_dim", "amax_dim",
        "amin_dims", "argmax_dim", "argmin_dim"])
def test_extremes_of_nothing_raise_torchs_error(call):
    torch = require_torch()
    with pytest.raises(Exception) as expected:
        call(torch, torch.empty(0, 3))
    with pytest.raises(type(expected.value)) as got:
        call(learntorch, learntorch.empty(0, 3))
    assert str(expected.value).split(".")[0] in str(got.value)


def test_extremes_along_a_non_empty_dim_of_an_empty_tensor_are_empty():
    torch = require_torch()
    for name in ("amax", "amin", "argmax", "argmin"):
        lt, th = getattr(learntorch.empty(0, 3), name)(1), getattr(torch.empty(0, 3), name)(1)
        assert lt.shape == tuple(th.shape) and lt.dtype.name == str(th.dtype)[6:]
    values, indices = learntorch.empty(0, 3).max(1)
    assert values.shape == (0,) and indices.shape == (0,) and indices.dtype is learntorch.int64


@pytest.mark.parametrize("call", [
    lambda x: x.max(), lambda x: x.max(0).values, lambda x: x.max(-1, keepdim=True).values,
    lambda x: x.amin(0), lambda x: x.amax(-1, True),
], ids=["max", "max_dim", "max_keepdim", "amin_dim", "amax_keepdim"])
def test_extremes_of_a_0_dim_tensor_are_the_tensor_itself(call):
    require_torch()
    check_against_torch(call, call, np.array(2.5))


def test_argmax_of_a_0_dim_tensor_is_zero():
    torch = require_torch()
    for args in [(), (0,), (-1, True), (None, True)]:
        lt, th = learntorch.tensor(2.5).argmax(*args), torch.tensor(2.5).argmax(*args)
        assert lt.shape == tuple(th.shape) and lt.item() == th.item() == 0


# ---------------------------------------------------------------- errors and finite differences
@pytest.mark.parametrize("call", [
    lambda x: x.max(2), lambda x: x.min(-3), lambda x: x.amax(2), lambda x: x.argmax(2),
    lambda x: x.amin((0, 5)),
], ids=["max", "min", "amax", "argmax", "amin"])
def test_dim_out_of_range_is_an_index_error_naming_the_range(call):
    torch = require_torch()
    with pytest.raises(IndexError) as expected:
        call(torch.ones(2, 3))
    with pytest.raises(IndexError, match=r"range of \[-2, 1\]") as got:
        call(learntorch.ones(2, 3))
    assert str(expected.value) in str(got.value)


def test_max_with_a_tuple_of_dims_is_a_type_error_that_points_to_amax():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.ones(2, 3).max((0, 1))
    with pytest.raises(TypeError, match="amax"):
        learntorch.ones(2, 3).max((0, 1))


@pytest.mark.parametrize("fn", [
    lambda x: x.max(1).values, lambda x: x.min(0, keepdim=True).values,
    lambda x: x.amax((0, 2)), lambda x: x.amin(-1), lambda x: x.max(),
], ids=["max_dim", "min_dim", "amax", "amin", "max"])
def test_gradients_match_finite_differences_without_ties(fn):
    a = np.random.default_rng(2).permutation(24).reshape(2, 3, 4) / 7.0  # distinct values
    check_against_finite_differences(fn, a)
