"""softmax and log_softmax against torch: every dim, huge logits, dtype=, second derivatives."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)

NAMES = ["softmax", "log_softmax"]


@st.composite
def array_and_dim(draw, elements=None, dtype=np.float64, min_dims=0):
    a = draw(arrays(elements=elements, dtype=dtype, min_dims=min_dims))
    nd = max(a.ndim, 1)
    return a, draw(st.integers(-nd, nd - 1))


@pytest.mark.parametrize("name", NAMES)
@given(a_dim=array_and_dim())
def test_matches_torch_along_every_dim(name, a_dim):
    torch = require_torch()
    a, dim = a_dim
    out = check_against_torch(lambda x: getattr(learntorch, name)(x, dim),
                              lambda x: getattr(torch, name)(x, dim), a)
    assert out.grad_fn.name() == {"softmax": "SoftmaxBackward0",
                                  "log_softmax": "LogSoftmaxBackward0"}[name]


@pytest.mark.parametrize("name", NAMES)
@given(a_dim=array_and_dim(min_dims=1, dtype=np.float32,
                           elements=st.sampled_from([-1000.0, 1000.0, 0.0, 999.0, -3.0])))
def test_logits_of_plus_minus_1000_stay_finite_in_float32(name, a_dim):
    torch = require_torch()
    a, dim = a_dim
    lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
    lt_y, th_y = getattr(lt_x, name)(dim), getattr(th_x, name)(dim)
    assert np.isfinite(lt_y.detach().numpy()).all(), "no inf or nan from exp overflow"
    np.testing.assert_allclose(lt_y.detach().numpy(), th_y.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(0).standard_normal(a.shape).astype(np.float32)
    lt_y.backward(learntorch.from_numpy(g))
    th_y.backward(torch.from_numpy(g))
    assert np.isfinite(lt_x.grad.numpy()).all()
    np.testing.assert_allclose(lt_x.grad.numpy(), th_x.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_log_softmax_of_a_hopeless_class_is_large_negative_not_minus_inf(name):
    x = learntorch.tensor([[1000.0, -1000.0, 0.0]])
    y = getattr(x, name)(1)
    if name == "log_softmax":
        assert y[0, 1].item() == -2000.0 and y[0, 0].item() == 0.0
    else:
        assert y[0, 0].item() == 1.0 and y[0, 1].item() == 0.0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("in_dtype,out_dtype", [("float32", "float64"), ("float64", "float32"),
                                                ("int64", "float32"), ("bool", "float64")])
def test_dtype_argument_casts_the_input_first_like_torch(name, in_dtype, out_dtype):
    torch = require_torch()
    a = (np.arange(6).reshape(2, 3) % 4).astype(in_dtype)
    out = check_against_torch(lambda x: getattr(x, name)(1, dtype=getattr(learntorch, out_dtype)),
                              lambda x: getattr(x, name)(1, dtype=getattr(torch, out_dtype)), a)
    assert out.dtype.name == out_dtype


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("call", [lambda f, x: f(x, 0), lambda f, x: f(x, 0, dtype="int64")],
                         ids=["integer_input", "integer_dtype"])
def test_integer_softmax_is_not_implemented_like_torch(name, call):
    torch = require_torch()
    dtype_of = {"int64": (torch.int64, learntorch.int64)}

    def run(lib, which):
        def f(x, dim, dtype=None):
            kw = {} if dtype is None else {"dtype": dtype_of[dtype][which]}
            return getattr(lib, name)(x, dim, **kw)
        return f
    with pytest.raises(NotImplementedError):
        call(run(torch, 0), torch.arange(3))
    with pytest.raises(NotImplementedError, match="Long|int64") as got:
        call(run(learntorch, 1), learntorch.arange(3))
    assert "dtype=" in str(got.value) or ".float()" in str(got.value)


@pytest.mark.parametrize("name", NAMES)
def test_second_derivatives_match_torch(name):
    torch = require_torch()
    a = np.random.default_rng(1).standard_normal((3, 4))
    w = np.random.default_rng(2).standard_normal((3, 4))
    for dim in (0, 1):
        lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
        lt_loss = (getattr(lt_x, name)(dim) * learntorch.from_numpy(w)).sum()
        th_loss = (getattr(th_x, name)(dim) * torch.from_numpy(w)).sum()
        (g_lt,) = learntorch.autograd.grad(lt_loss, lt_x, create_graph=True)
        (g_th,) = torch.autograd.grad(th_loss, th_x, create_graph=True)
        np.testing.assert_allclose(g_lt.detach().numpy(), g_th.detach().numpy(), rtol=1e-7)
        (gg_lt,) = learntorch.autograd.grad((g_lt ** 2).sum(), lt_x)
        (gg_th,) = torch.autograd.grad((g_th ** 2).sum(), th_x)
        np.testing.assert_allclose(gg_lt.numpy(), gg_th.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name):
    a = np.random.default_rng(3).standard_normal((2, 3, 4))
    w = np.random.default_rng(4).standard_normal((2, 3, 4))
    for dim in (0, 1, -1):
        check_against_finite_differences(
            lambda x: getattr(x, name)(dim) * learntorch.from_numpy(w), a)


@pytest.mark.parametrize("name", NAMES)
def test_0_dim_and_empty_inputs_match_torch(name):
    torch = require_torch()
    check_against_torch(lambda x: getattr(x, name)(0), lambda x: getattr(x, name)(0), np.array(3.0))
    check_against_torch(lambda x: getattr(x, name)(-1), lambda x: getattr(x, name)(-1),
                        np.zeros((0, 3)))
    lt, th = getattr(learntorch.empty(0, 3), name)(0), getattr(torch.empty(0, 3), name)(0)
    assert lt.shape == tuple(th.shape) == (0, 3)


@pytest.mark.parametrize("name", NAMES)
def test_dim_is_required_and_range_checked_like_torch(name):
    torch = require_torch()
    with pytest.raises(TypeError):
        getattr(torch, name)(torch.ones(3))
    with pytest.raises(TypeError, match="dim"):
        getattr(learntorch, name)(learntorch.ones(3))
    with pytest.raises(TypeError, match="dim"):
        getattr(learntorch.ones(3), name)()
    with pytest.raises(IndexError) as expected:
        getattr(torch.ones(2, 3), name)(2)
    with pytest.raises(IndexError) as got:
        getattr(learntorch.ones(2, 3), name)(2)
    assert str(expected.value) in str(got.value)


def test_implicit_dim_choice_is_torchs_legacy_rule_with_its_warning():
    torch = require_torch()
    from learntorch.ops.softmax import implicit_dim
    for ndim in range(5):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            ours = implicit_dim("softmax", ndim)
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            theirs = torch.nn.functional._get_softmax_dim("softmax", ndim, 3)
        assert ours == theirs


@pytest.mark.parametrize("name", NAMES)
def test_results_agree_on_every_backend(name):
    """The op must be stable whichever backend computes it (the kernels run at every size here)."""
    from learntorch.backends.numba_cpu import NumbaBackend
    a = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32) * 600
    grads = {}
    for backend in ("numpy", NumbaBackend(min_size=0)):
        with learntorch.backends.use(backend):
            x = lt_tensor(a, True)
            y = getattr(x, name)(1)
            y.backward(learntorch.ones_like(y))
            grads[str(backend)[:5]] = (y.detach().numpy(), x.grad.numpy())
            assert np.isfinite(y.detach().numpy()).all() and np.isfinite(x.grad.numpy()).all()
    (y1, g1), (y2, g2) = grads.values()
    np.testing.assert_allclose(y1, y2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g1, g2, rtol=1e-4, atol=1e-4)
