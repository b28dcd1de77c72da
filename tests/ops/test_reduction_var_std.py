"""var, std, var_mean and std_mean against torch: unbiased by default, correction, dim tuples."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)


@st.composite
def array_and_dim(draw):
    """An array with at least 2 elements along every reduced dim (so n - 1 > 0), and a dim."""
    a = draw(arrays(min_dims=1, min_side=2))
    nd = a.ndim
    kind = draw(st.sampled_from(["none", "int", "negative", "tuple"]))
    if kind == "none":
        return a, None
    if kind == "int":
        return a, draw(st.integers(0, nd - 1))
    if kind == "negative":
        return a, draw(st.integers(-nd, -1))
    chosen = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    return a, tuple(d - nd if draw(st.booleans()) else d for d in chosen)


def variant(name, dim, keepdim, how):
    """``x.name(...)`` in one of torch's spellings of the correction."""
    kw = {"unbiased": {"unbiased": False}, "correction0": {"correction": 0},
          "correction1": {"correction": 1}, "correction2": {"correction": 2},
          "default": {}}[how]
    if dim is None:
        if how == "unbiased":
            return lambda x: getattr(x, name)(False)  # the var(unbiased) overload
        return lambda x: getattr(x, name)(**kw)
    return lambda x: getattr(x, name)(dim, keepdim=keepdim, **kw)


HOWS = st.sampled_from(["default", "unbiased", "correction0", "correction1", "correction2"])


@pytest.mark.parametrize("name", ["var", "std"])
@given(a_dim=array_and_dim(), keepdim=st.booleans(), how=HOWS)
def test_var_std_match_torch_forward_and_gradient(name, a_dim, keepdim, how):
    require_torch()
    a, dim = a_dim
    if how == "correction2":  # keep n - correction > 0 (3+ per dim): a 0 divisor is tested below
        for axis in range(a.ndim):
            a = np.concatenate([a, np.take(a, [0], axis) + 0.5], axis=axis)
    fn = variant(name, dim, keepdim, how)
    out = check_against_torch(fn, fn, a)
    assert out.grad_fn.name() == {"var": "VarBackward0", "std": "StdBackward0"}[name]


@pytest.mark.parametrize("name,np_fn", [("var", np.var), ("std", np.std)])
def test_var_std_default_is_unbiased(name, np_fn):
    a = np.array([1.0, 2.0, 4.0])
    x = learntorch.tensor(a)
    assert getattr(x, name)().item() == pytest.approx(np_fn(a, ddof=1))
    assert getattr(x, name)(unbiased=False).item() == pytest.approx(np_fn(a, ddof=0))


@pytest.mark.parametrize("name", ["var", "std"])
def test_float32_var_std_match_torch(name):
    require_torch()
    a = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32) + 100
    check_against_torch(lambda x: getattr(x, name)(1), lambda x: getattr(x, name)(1), a,
                        rtol=1e-4, atol=1e-4)


def test_std_of_a_constant_has_zero_gradient_like_torch():
    require_torch()
    check_against_torch(lambda x: x.std(), lambda x: x.std(), np.ones((2, 3)))
    check_against_torch(lambda x: x.std(1), lambda x: x.std(1), np.ones((2, 3)))


@pytest.mark.parametrize("name", ["var", "std"])
def test_fewer_elements_than_the_correction_give_inf_or_nan_like_torch(name):
    torch = require_torch()
    a = np.array([[1.0, 2.0], [3.0, 3.0]])
    cases = [(a, (1,), {"correction": 2}), (a, None, {"correction": 4}),
             (a, (1,), {"correction": 3}), (a[:, :1], 1, {})]  # one element, unbiased: 0 / 0
    for array, dim, kw in cases:
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            lt = getattr(lt_tensor(array), name)(dim, **kw)
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            th = getattr(torch_tensor(array), name)(dim, **kw)
        np.testing.assert_array_equal(lt.numpy(), th.numpy())


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_of_integers_raise_like_torch(name):
    torch = require_torch()
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.arange(3), name)()
    with pytest.raises(RuntimeError, match="floating point") as got:
        getattr(learntorch.arange(3), name)()
    assert str(expected.value) in str(got.value) and ".float()" in str(got.value)


def test_unbiased_and_correction_together_is_a_type_error():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.ones(3).var(unbiased=True, correction=1)
    with pytest.raises(TypeError, match="correction"):
        learntorch.ones(3).var(unbiased=True, correction=1)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_of_a_0_dim_tensor_match_torch(name):
    torch = require_torch()
    for kw in [{}, {"unbiased": False}, {"correction": 0}, {"dim": 0}]:
        with warnings.catch_warnings(record=True) as lt_warnings:
            warnings.simplefilter("always")
            lt = getattr(learntorch.tensor(3.0), name)(**kw)
        with warnings.catch_warnings(record=True) as th_warnings:
            warnings.simplefilter("always")
            th = getattr(torch.tensor(3.0), name)(**kw)
        assert len(lt_warnings) == len(th_warnings)  # one element, unbiased: a 0 divisor
        np.testing.assert_array_equal(lt.numpy(), th.numpy())


# ---------------------------------------------------------------- var_mean / std_mean
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@given(a_dim=array_and_dim(), keepdim=st.booleans(), how=st.sampled_from(
    ["default", "correction0", "unbiased"]))
def test_var_mean_std_mean_match_torch_on_both_outputs(name, a_dim, keepdim, how):
    torch = require_torch()
    a, dim = a_dim
    kw = {"default": {}, "correction0": {"correction": 0}, "unbiased": {"unbiased": False}}[how]
    if dim is not None:
        kw["keepdim"] = keepdim
    lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
    lt_out = getattr(learntorch, name)(lt_x, dim, **kw)
    th_out = getattr(torch, name)(th_x, dim, **kw)
    assert isinstance(lt_out, tuple) and len(lt_out) == 2
    for lt_o, th_o in zip(lt_out, th_out):
        np.testing.assert_allclose(lt_o.detach().numpy(), th_o.detach().numpy(), rtol=1e-6)
        assert lt_o.grad_fn.name() == th_o.grad_fn.name()
    rng = np.random.default_rng(3)
    g1, g2 = (rng.standard_normal(tuple(o.shape)) for o in th_out)
    (lt_out[0] * learntorch.from_numpy(g1) + lt_out[1] * learntorch.from_numpy(g2)).sum().backward()
    (th_out[0] * torch.from_numpy(g1) + th_out[1] * torch.from_numpy(g2)).sum().backward()
    np.testing.assert_allclose(lt_x.grad.numpy(), th_x.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_var_mean_gradient_through_one_output_only():
    torch = require_torch()
    a = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
    for which in (0, 1):
        lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
        learntorch.var_mean(lt_x, 1)[which].sum().backward()
        torch.var_mean(th_x, 1)[which].sum().backward()
        np.testing.assert_allclose(lt_x.grad.numpy(), th_x.grad.numpy(), atol=1e-12)


# ---------------------------------------------------------------- finite differences, 2nd order
@pytest.mark.parametrize("fn", [
    lambda x: x.var(1), lambda x: x.var((0, 2), correction=0), lambda x: x.std(),
    lambda x: x.std(-1, keepdim=True), lambda x: learntorch.std_mean(x, 1)[0],
], ids=["var", "var_tuple", "std", "std_keepdim", "std_mean"])
def test_gradients_match_finite_differences(fn):
    a = np.random.default_rng(4).standard_normal((2, 3, 4))
    check_against_finite_differences(fn, a)


@pytest.mark.parametrize("name", ["var", "std"])
def test_second_derivative_matches_torch(name):
    torch = require_torch()
    a = np.random.default_rng(5).standard_normal((2, 4))
    lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
    (g_lt,) = learntorch.autograd.grad(getattr(lt_x, name)(1).sum(), lt_x, create_graph=True)
    (g_th,) = torch.autograd.grad(getattr(th_x, name)(1).sum(), th_x, create_graph=True)
    (gg_lt,) = learntorch.autograd.grad((g_lt ** 2).sum(), lt_x)
    (gg_th,) = torch.autograd.grad((g_th ** 2).sum(), th_x)
    np.testing.assert_allclose(gg_lt.numpy(), gg_th.numpy(), rtol=1e-6, atol=1e-9)
