"""all/any, count_nonzero and cumsum against torch; reductions of empty and 0-dim tensors;
the names of the reductions' grad_fn nodes."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)

# zeros are common, so that all/any/count_nonzero see both answers
_sparse = st.sampled_from([0.0, 0.0, 1.0, -2.5])


@st.composite
def array_and_dim(draw, dtype=np.float64, elements=None, tuple_dims=True):
    a = draw(arrays(dtype=dtype, elements=elements))
    nd = max(a.ndim, 1)
    kinds = ["none", "int", "negative"] + (["tuple"] if tuple_dims else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return a, None
    if kind == "int":
        return a, draw(st.integers(0, nd - 1))
    if kind == "negative":
        return a, draw(st.integers(-nd, -1))
    chosen = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    return a, tuple(d - nd if draw(st.booleans()) else d for d in chosen)


def same(lt, th):
    assert lt.dtype.name == str(th.dtype).replace("torch.", ""), (lt.dtype, th.dtype)
    assert lt.shape == tuple(th.shape), (lt.shape, th.shape)
    np.testing.assert_array_equal(lt.numpy(), th.numpy())


# ---------------------------------------------------------------- all / any
@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dtype", [np.float64, np.bool_, np.int64, np.uint8])
@given(data=st.data())
def test_all_any_match_torch(name, dtype, data):
    torch = require_torch()
    elements = {np.float64: _sparse, np.uint8: st.integers(0, 3)}.get(dtype)
    a, dim = data.draw(array_and_dim(dtype=dtype, elements=elements))
    keepdim = data.draw(st.booleans())
    if dim is None:
        same(getattr(lt_tensor(a), name)(), getattr(torch_tensor(a), name)())
    else:
        same(getattr(learntorch, name)(lt_tensor(a), dim, keepdim),
             getattr(torch, name)(torch_tensor(a), dim, keepdim))


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_of_empty_and_over_no_dims_match_torch(name):
    torch = require_torch()
    same(getattr(learntorch.empty(0), name)(), getattr(torch.empty(0), name)())
    same(getattr(learntorch.empty(0, 3), name)(0), getattr(torch.empty(0, 3), name)(0))
    a = np.array([[0.0, 1.0], [2.0, 0.0]])
    same(getattr(lt_tensor(a), name)(dim=()), getattr(torch_tensor(a), name)(dim=()))


# ---------------------------------------------------------------- count_nonzero
@given(a_dim=array_and_dim(elements=_sparse))
def test_count_nonzero_matches_torch(a_dim):
    torch = require_torch()
    a, dim = a_dim
    same(learntorch.count_nonzero(lt_tensor(a), dim), torch.count_nonzero(torch_tensor(a), dim))


def test_count_nonzero_counts_nan_and_works_on_ints_and_bools():
    torch = require_torch()
    for a in [np.array([np.nan, 0.0, 1.0]), np.array([[0, 3], [1, 0]]), np.array([True, False])]:
        same(lt_tensor(a).count_nonzero(), torch_tensor(a).count_nonzero())
        same(lt_tensor(a).count_nonzero(0), torch_tensor(a).count_nonzero(0))


# ---------------------------------------------------------------- cumsum
@given(a_dim=array_and_dim(tuple_dims=False).filter(lambda a_d: a_d[1] is not None))
def test_cumsum_matches_torch_forward_and_gradient(a_dim):
    require_torch()
    a, dim = a_dim
    out = check_against_torch(lambda x: x.cumsum(dim), lambda x: x.cumsum(dim), a)
    if out.requires_grad:
        assert out.grad_fn.name() == "CumsumBackward0"


@pytest.mark.parametrize("in_dtype", [np.int32, np.int64, np.bool_, np.float32])
def test_cumsum_dtypes_match_torch(in_dtype):
    torch = require_torch()
    a = (np.arange(6).reshape(2, 3) % 3).astype(in_dtype)
    same(lt_tensor(a).cumsum(1), torch_tensor(a).cumsum(1))  # integers and bools -> int64
    same(lt_tensor(a).cumsum(0, dtype=learntorch.float64),
         torch_tensor(a).cumsum(0, dtype=torch.float64))
    same(learntorch.cumsum(lt_tensor(a), -1, dtype=learntorch.int32),
         torch.cumsum(torch_tensor(a), -1, dtype=torch.int32))


def test_cumsum_with_dtype_sends_the_input_dtype_gradient_back():
    torch = require_torch()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_against_torch(lambda x: x.cumsum(1, dtype=learntorch.float64),
                        lambda x: x.cumsum(1, dtype=torch.float64), a)


def test_cumsum_of_0_dim_and_empty_tensors_matches_torch():
    torch = require_torch()
    check_against_torch(lambda x: x.cumsum(0), lambda x: x.cumsum(0), np.array(2.5))
    check_against_torch(lambda x: x.cumsum(-1), lambda x: x.cumsum(-1), np.array(2.5))
    same(learntorch.empty(0, 2).cumsum(0), torch.empty(0, 2).cumsum(0))


def test_cumsum_needs_a_dim_and_checks_its_range():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.ones(2).cumsum()
    with pytest.raises(TypeError):
        learntorch.ones(2).cumsum()
    with pytest.raises(IndexError) as expected:
        torch.ones(2, 3).cumsum(2)
    with pytest.raises(IndexError) as got:
        learntorch.ones(2, 3).cumsum(2)
    assert str(expected.value) in str(got.value)


def test_cumsum_second_derivative_flows_through_create_graph():
    torch = require_torch()
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
    lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
    (g_lt,) = learntorch.autograd.grad((lt_x.cumsum(1) ** 2).sum(), lt_x, create_graph=True)
    (g_th,) = torch.autograd.grad((th_x.cumsum(1) ** 2).sum(), th_x, create_graph=True)
    (gg_lt,) = learntorch.autograd.grad((g_lt ** 2).sum(), lt_x)
    (gg_th,) = torch.autograd.grad((g_th ** 2).sum(), th_x)
    np.testing.assert_allclose(gg_lt.numpy(), gg_th.numpy())


def test_cumsum_gradient_matches_finite_differences():
    a = np.random.default_rng(8).standard_normal((2, 3, 4))
    check_against_finite_differences(lambda x: x.cumsum(1), a)
    check_against_finite_differences(lambda x: x.cumsum(-1) * x, a)


# ---------------------------------------------------------------- empty and 0-dim tensors
@pytest.mark.parametrize("call", [
    lambda x: x.sum(), lambda x: x.sum(0), lambda x: x.sum(1), lambda x: x.sum((0, 1)),
    lambda x: x.mean(), lambda x: x.mean(0), lambda x: x.prod(), lambda x: x.prod(0),
    lambda x: x.amax(1), lambda x: x.logsumexp(0), lambda x: x.norm(), lambda x: x.var(1),
    lambda x: x.std(0), lambda x: x.count_nonzero(), lambda x: x.cumsum(1),
], ids=["sum", "sum0", "sum1", "sum01", "mean", "mean0", "prod", "prod0", "amax1", "lse0",
        "norm", "var1", "std0", "count_nonzero", "cumsum1"])
def test_reductions_of_an_empty_tensor_match_torch(call):
    torch = require_torch()
    import warnings
    with warnings.catch_warnings():  # var/std of nothing warn about their 0 divisor
        warnings.simplefilter("ignore")
        same(call(learntorch.empty(0, 3)), call(torch.empty(0, 3)))


@pytest.mark.parametrize("call", [
    lambda x: x.sum(), lambda x: x.sum(0), lambda x: x.sum(-1, keepdim=True), lambda x: x.mean(0),
    lambda x: x.prod(0), lambda x: x.prod(), lambda x: x.amax(), lambda x: x.min(),
    lambda x: x.logsumexp(0), lambda x: x.norm(), lambda x: x.norm(1, 0),
    lambda x: x.var(0, correction=0),
    lambda x: x.std(unbiased=False), lambda x: x.cumsum(0),
], ids=["sum", "sum0", "sum_keepdim", "mean0", "prod0", "prod", "amax", "min", "lse0", "norm",
        "norm1", "var0", "std", "cumsum"])
def test_reductions_of_a_0_dim_tensor_match_torch(call):
    require_torch()
    check_against_torch(call, call, np.array(-1.5))


# ---------------------------------------------------------------- grad_fn names, as torch
@pytest.mark.parametrize("call", [
    lambda t, x: x.sum(), lambda t, x: x.sum(1), lambda t, x: x.sum((0, 1)),
    lambda t, x: x.mean(), lambda t, x: x.mean(0), lambda t, x: x.prod(), lambda t, x: x.prod(1),
    lambda t, x: x.max(), lambda t, x: x.min(), lambda t, x: x.max(1).values,
    lambda t, x: x.min(0).values, lambda t, x: x.amax(), lambda t, x: x.amin(1),
    lambda t, x: x.var(), lambda t, x: x.std(1), lambda t, x: t.var_mean(x)[1],
    lambda t, x: t.std_mean(x, 0)[0], lambda t, x: x.logsumexp(1), lambda t, x: x.norm(),
    lambda t, x: x.norm(1, 1), lambda t, x: x.cumsum(0),
], ids=["sum", "sum_dim", "sum_dims", "mean", "mean_dim", "prod", "prod_dim", "max", "min",
        "max_dim", "min_dim", "amax", "amin", "var", "std", "var_mean", "std_mean", "logsumexp",
        "norm", "norm1", "cumsum"])
def test_grad_fn_names_match_torch(call):
    torch = require_torch()
    a = np.arange(1.0, 7.0).reshape(2, 3)
    lt = call(learntorch, lt_tensor(a, True))
    th = call(torch, torch_tensor(a, True))
    assert lt.grad_fn.name() == th.grad_fn.name()


@pytest.mark.parametrize("call", [
    lambda x: x.sum(), lambda x: x.mean(), lambda x: x.prod(), lambda x: x.max(),
    lambda x: x.max(0).values, lambda x: x.amin(), lambda x: x.var(correction=0),
    lambda x: x.std(correction=0), lambda x: learntorch.std_mean(x, correction=0)[0],
    lambda x: learntorch.var_mean(x, correction=0)[1], lambda x: x.logsumexp(0),
    lambda x: x.norm(), lambda x: x.norm(3), lambda x: x.cumsum(0), lambda x: x.all(),
    lambda x: x.any(dim=()), lambda x: x.count_nonzero(), lambda x: x.argmax(),
    lambda x: x.softmax(0), lambda x: x.log_softmax(0),
], ids=["sum", "mean", "prod", "max", "max_dim", "amin", "var", "std", "std_mean", "var_mean",
        "logsumexp", "norm", "norm3", "cumsum", "all", "any", "count_nonzero", "argmax",
        "softmax", "log_softmax"])
def test_0_dim_results_are_writable_tensors_not_numpy_scalars(call):
    """numpy turns 0-dim results into scalars; a tensor over one cannot be changed in place."""
    out = call(learntorch.tensor(1.5))
    assert isinstance(out.numpy(), np.ndarray) and out.shape == ()
    out.detach().fill_(0)
    assert out.item() == 0


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "amax", "argmax", "var",
                                  "std_mean", "all", "any", "count_nonzero", "logsumexp"])
def test_a_list_instead_of_a_tensor_is_a_type_error_like_torch(name):
    torch = require_torch()
    args = ([1.0, 2.0], 0) if name == "logsumexp" else ([1.0, 2.0],)
    with pytest.raises(TypeError):
        getattr(torch, name)(*args)
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be "
                                        "Tensor, not list"):
        getattr(learntorch, name)(*args)
