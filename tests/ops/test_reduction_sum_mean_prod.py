"""sum, mean and prod: forward and gradient against torch, over every way of naming dims.

Inputs come from the ``arrays`` strategy (often non-contiguous views); ``dim``
is None, an int, a negative int or a tuple; ``keepdim`` both ways.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)


@st.composite
def array_and_dim(draw, dtype=np.float64, min_dims=0, elements=None, single=False):
    """An array and a ``dim`` for it: None, a (possibly negative) int or a tuple of ints."""
    a = draw(arrays(dtype=dtype, min_dims=min_dims, elements=elements))
    nd = max(a.ndim, 1)  # a 0-dim tensor accepts dim 0 and -1
    kinds = ["int", "negative"] if single else ["none", "int", "negative", "tuple"]
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(st.integers(0, nd - 1))
    elif kind == "negative":
        dim = draw(st.integers(-nd, -1))
    else:
        chosen = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        dim = tuple(d - nd if draw(st.booleans()) else d for d in chosen)
    return a, dim


def method(name, dim, keepdim=False, **kw):
    """``x.name(dim, keepdim=...)``, or ``x.name()`` when dim is None (torch's full overload)."""
    if dim is None:
        return lambda x: getattr(x, name)(**kw)
    return lambda x: getattr(x, name)(dim, keepdim=keepdim, **kw)


# ---------------------------------------------------------------- sum
@given(array_and_dim(), st.booleans())
def test_sum_matches_torch_forward_and_gradient(a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    check_against_torch(method("sum", dim, keepdim), method("sum", dim, keepdim), a)


@given(array_and_dim(dtype=np.float32), st.booleans())
def test_sum_of_float32_matches_torch(a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    # dim=None passed explicitly: torch then honours keepdim (shape (1, 1, ...))
    check_against_torch(lambda x: learntorch.sum(x, dim=dim, keepdim=keepdim),
                        lambda x: x.sum(dim=dim, keepdim=keepdim), a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
@given(data=st.data())
def test_sum_of_integers_and_bools_is_int64_like_torch(dtype, data):
    require_torch()
    a, dim = data.draw(array_and_dim(dtype=dtype))
    keepdim = data.draw(st.booleans())
    out = check_against_torch(method("sum", dim, keepdim), method("sum", dim, keepdim), a)
    assert out.dtype is learntorch.int64


@pytest.mark.parametrize("in_dtype,out_dtype", [("float32", "float64"), ("int64", "float32"),
                                                ("bool", "float64"), ("float64", "float32"),
                                                ("int64", "int32"), ("float32", "int32")])
def test_sum_dtype_argument_casts_before_summing(in_dtype, out_dtype):
    torch = require_torch()
    a = (np.arange(12).reshape(3, 4) % 5).astype(in_dtype)
    for dim in (None, 1, (0, 1)):
        lt = learntorch.sum(lt_tensor(a), dim=dim, dtype=getattr(learntorch, out_dtype))
        th = torch.sum(torch_tensor(a), dim=dim, dtype=getattr(torch, out_dtype)) \
            if dim is not None else torch.sum(torch_tensor(a), dtype=getattr(torch, out_dtype))
        assert lt.dtype.name == out_dtype
        np.testing.assert_allclose(lt.numpy(), th.numpy())


def test_sum_dtype_argument_sends_the_input_dtype_gradient_back():
    x = learntorch.ones(2, 3, requires_grad=True)
    x.sum(dtype=learntorch.float64).backward()
    assert x.grad.dtype is learntorch.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3), np.float32))


def test_sum_over_an_empty_dim_tuple_reduces_everything_like_torch():
    torch = require_torch()
    a = np.arange(6.0).reshape(2, 3)
    check_against_torch(lambda x: x.sum(dim=()), lambda x: x.sum(dim=()), a)
    check_against_torch(lambda x: x.sum(()), lambda x: x.sum(()), a)
    assert learntorch.tensor(a).mean(dim=()).item() == torch.tensor(a).mean(dim=()).item()


# ---------------------------------------------------------------- mean
@given(array_and_dim(), st.booleans())
def test_mean_matches_torch_forward_and_gradient(a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    check_against_torch(method("mean", dim, keepdim), method("mean", dim, keepdim), a)


def test_mean_dtype_argument_matches_torch():
    torch = require_torch()
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    check_against_torch(lambda x: x.mean(1, dtype=learntorch.float64),
                        lambda x: x.mean(1, dtype=torch.float64), a)
    ints = np.arange(6).reshape(2, 3)
    check_against_torch(lambda x: x.mean(dtype=learntorch.float32),
                        lambda x: x.mean(dtype=torch.float32), ints)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_mean_of_integers_raises_like_torch_and_says_how_to_fix(dtype):
    torch = require_torch()
    a = np.ones(3, dtype=dtype)
    with pytest.raises(RuntimeError) as expected:
        torch_tensor(a).mean()
    with pytest.raises(RuntimeError, match="could not infer output dtype") as got:
        lt_tensor(a).mean()
    assert str(expected.value) in str(got.value)
    assert ".float()" in str(got.value)


# ---------------------------------------------------------------- prod
@given(array_and_dim(single=True), st.booleans())
def test_prod_along_a_dim_matches_torch(a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    check_against_torch(lambda x: x.prod(dim, keepdim=keepdim),
                        lambda x: x.prod(dim, keepdim=keepdim), a)


@given(arrays())
def test_full_prod_matches_torch(a):
    require_torch()
    check_against_torch(lambda x: x.prod(), lambda x: x.prod(), a, rtol=1e-5, atol=1e-6)


# small integers as floats: zeros are common, often several in one slice
_with_zeros = st.integers(-2, 2).map(float)


@given(arrays(elements=_with_zeros))
def test_full_prod_gradient_with_zeros_matches_torch(a):
    require_torch()
    check_against_torch(lambda x: x.prod(), lambda x: x.prod(), a)


@given(array_and_dim(single=True, min_dims=1, elements=_with_zeros), st.booleans())
def test_prod_along_a_dim_gradient_with_zeros_matches_torch(a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    check_against_torch(lambda x: x.prod(dim, keepdim=keepdim),
                        lambda x: x.prod(dim, keepdim=keepdim), a)


def test_prod_of_integers_is_int64_and_dtype_argument_casts():
    torch = require_torch()
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    check_against_torch(lambda x: x.prod(), lambda x: x.prod(), a)
    check_against_torch(lambda x: x.prod(1), lambda x: x.prod(1), a)
    check_against_torch(lambda x: x.prod(1, dtype=learntorch.float64),
                        lambda x: x.prod(1, dtype=torch.float64), a.astype(np.float32))
    check_against_torch(lambda x: x.prod(dtype=learntorch.int32),
                        lambda x: x.prod(dtype=torch.int32), a.astype(np.int64))


def test_prod_with_a_tuple_of_dims_is_a_type_error_like_torch():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.ones(2, 3).prod((0, 1))
    with pytest.raises(TypeError):
        learntorch.ones(2, 3).prod((0, 1))


# ---------------------------------------------------------------- second derivatives
def test_prod_second_derivative_matches_torch():
    torch = require_torch()
    a = np.array([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]])
    lt, th = lt_tensor(a, True), torch_tensor(a, True)
    (g_lt,) = learntorch.autograd.grad(lt.prod(1).sum(), lt, create_graph=True)
    (g_th,) = torch.autograd.grad(th.prod(1).sum(), th, create_graph=True)
    np.testing.assert_allclose(g_lt.detach().numpy(), g_th.detach().numpy())
    (gg_lt,) = learntorch.autograd.grad((g_lt * g_lt).sum(), lt)
    (gg_th,) = torch.autograd.grad((g_th * g_th).sum(), th)
    np.testing.assert_allclose(gg_lt.numpy(), gg_th.numpy())


# ---------------------------------------------------------------- finite differences
@pytest.mark.parametrize("fn", [
    lambda x: x.sum(1), lambda x: x.sum((0, 2), keepdim=True), lambda x: x.mean(-1),
    lambda x: x.mean((0, 1)), lambda x: x.prod(1), lambda x: x.prod(),
], ids=["sum", "sum_tuple", "mean", "mean_tuple", "prod_dim", "prod_full"])
def test_gradients_match_finite_differences(fn):
    a = np.random.default_rng(0).uniform(0.5, 1.5, size=(2, 3, 4))
    check_against_finite_differences(fn, a)


def test_prod_gradient_with_one_zero_matches_finite_differences():
    a = np.array([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]])
    check_against_finite_differences(lambda x: x.prod(1), a)
    check_against_finite_differences(lambda x: x.prod(), a)


# ---------------------------------------------------------------- every backend
@pytest.mark.parametrize("dim", [None, 1, -1, (1, 2), (0, 1, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_agrees_with_torch_on_every_backend(dim, dtype):
    """The compiled kernels run at every size here (min_size=0), the reference everywhere."""
    require_torch()
    from learntorch.backends.numba_cpu import NumbaBackend
    a = np.random.default_rng(9).standard_normal((3, 4, 5)).astype(dtype)
    for backend in ("numpy", NumbaBackend(min_size=0)):
        with learntorch.backends.use(backend):
            for keepdim in (False, True):
                check_against_torch(lambda x: learntorch.sum(x, dim=dim, keepdim=keepdim),
                                    lambda x: x.sum(dim=dim, keepdim=keepdim), a,
                                    rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- bad dims
@pytest.mark.parametrize("call", [
    lambda x: x.sum(2), lambda x: x.sum((0, -3)), lambda x: x.mean(5), lambda x: x.prod(-3),
    lambda x: x.var(2), lambda x: x.logsumexp(2), lambda x: x.norm(dim=2),
    lambda x: x.count_nonzero(2), lambda x: x.all(2),
], ids=["sum", "sum_tuple", "mean", "prod", "var", "logsumexp", "norm", "count_nonzero", "all"])
def test_dim_out_of_range_is_an_index_error_naming_the_range(call):
    torch = require_torch()
    with pytest.raises(IndexError) as expected:
        call(torch.ones(2, 3))
    with pytest.raises(IndexError) as got:
        call(learntorch.ones(2, 3))
    assert str(expected.value) in str(got.value)


@pytest.mark.parametrize("call", [lambda x: x.sum((0, 0)), lambda x: x.mean((1, -1)),
                                  lambda x: x.amax((0, -2))], ids=["sum", "mean", "amax"])
def test_a_dim_named_twice_is_a_runtime_error_like_torch(call):
    torch = require_torch()
    with pytest.raises(RuntimeError) as expected:
        call(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="appears multiple times") as got:
        call(learntorch.ones(2, 3))
    assert str(expected.value).split(" in ")[0] in str(got.value)
