"""logsumexp and norm against torch: stable for huge and -inf inputs, every p, zero vectors."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)


@st.composite
def array_and_dim(draw, elements=None, allow_none=True):
    a = draw(arrays(elements=elements))
    nd = max(a.ndim, 1)
    kind = draw(st.sampled_from(["none", "int", "negative", "tuple"] if allow_none else
                                ["int", "negative", "tuple"]))
    if kind == "none":
        return a, None
    if kind == "int":
        return a, draw(st.integers(0, nd - 1))
    if kind == "negative":
        return a, draw(st.integers(-nd, -1))
    chosen = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    return a, tuple(d - nd if draw(st.booleans()) else d for d in chosen)


# ---------------------------------------------------------------- logsumexp
@given(a_dim=array_and_dim(allow_none=False), keepdim=st.booleans())
def test_logsumexp_matches_torch(a_dim, keepdim):
    require_torch()
    a, dim = a_dim
    out = check_against_torch(lambda x: x.logsumexp(dim, keepdim),
                              lambda x: x.logsumexp(dim, keepdim), a)
    assert out.grad_fn.name() == "LogsumexpBackward0"


@given(a_dim=array_and_dim(allow_none=False,
                           elements=st.floats(-1000, 1000, allow_nan=False, width=32)))
def test_logsumexp_of_huge_values_is_finite_and_matches_torch(a_dim):
    require_torch()
    a, dim = a_dim
    out = check_against_torch(lambda x: learntorch.logsumexp(x, dim),
                              lambda x: x.logsumexp(dim), a.astype(np.float32), atol=1e-4)
    assert np.isfinite(out.detach().numpy()).all()


def test_logsumexp_with_minus_inf_rows_matches_torch():
    require_torch()
    ninf = -np.inf
    a = np.array([[ninf, ninf], [0.0, ninf], [1000.0, 1000.0], [np.inf, 1.0], [-1000.0, -1000.0]])
    out = check_against_torch(lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), a)
    assert out[0].item() == -np.inf  # log(0), not nan


def test_logsumexp_of_integers_is_float_like_torch():
    require_torch()
    check_against_torch(lambda x: x.logsumexp(0), lambda x: x.logsumexp(0), np.arange(4))
    check_against_torch(lambda x: x.logsumexp(0), lambda x: x.logsumexp(0),
                        np.array([True, False]))


def test_logsumexp_of_empty_and_0_dim_tensors_matches_torch():
    torch = require_torch()
    for shape, dim in [((0, 3), 0), ((0, 3), 1), ((), 0)]:
        lt = learntorch.zeros(shape).logsumexp(dim)
        th = torch.zeros(shape).logsumexp(dim)
        assert lt.shape == tuple(th.shape)
        np.testing.assert_array_equal(lt.numpy(), th.numpy())


def test_logsumexp_needs_a_dim_like_torch():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.logsumexp(torch.ones(2))
    with pytest.raises(TypeError):
        learntorch.logsumexp(learntorch.ones(2))


# ---------------------------------------------------------------- norm
P_VALUES = [2, "fro", 1, math.inf, -math.inf, 0, 3, 1.5, 0.5, -1]


@pytest.mark.parametrize("p", P_VALUES, ids=str)
@given(a_dim=array_and_dim(), keepdim=st.booleans())
def test_norm_matches_torch_for_every_p(p, a_dim, keepdim):
    torch = require_torch()
    a, dim = a_dim
    if p == "fro" and isinstance(dim, tuple) and len(dim) > 2:
        dim = dim[:2]  # a Frobenius norm names at most two dims
    out = check_against_torch(lambda x: x.norm(p, dim, keepdim),
                              lambda x: torch.norm(x, p, dim, keepdim), a, rtol=1e-5, atol=1e-6)
    assert out.grad_fn.name() == "LinalgVectorNormBackward0"


@pytest.mark.parametrize("p", P_VALUES, ids=str)
def test_norm_of_a_vector_with_zeros_and_ties_matches_torch(p):
    require_torch()
    a = np.array([[1.0, -3.0, 0.0], [0.0, 2.0, -2.0], [0.0, 0.0, 0.0]])
    check_against_torch(lambda x: x.norm(p), lambda x: x.norm(p), a)
    check_against_torch(lambda x: x.norm(p, 1), lambda x: x.norm(p, 1), a)


@pytest.mark.parametrize("p", [2, 1, 3, math.inf])
def test_norm_of_the_zero_vector_has_zero_gradient_like_torch(p):
    x = learntorch.zeros(3, requires_grad=True)
    out = x.norm(p)
    out.backward()
    assert out.item() == 0.0
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3, np.float32))


def test_norm_default_is_the_2_norm_of_everything():
    x = learntorch.tensor([[3.0, 0.0], [0.0, 4.0]])
    assert x.norm().item() == 5.0
    assert learntorch.norm(x, dim=(0, 1)).item() == 5.0
    assert learntorch.norm(x, p=None).item() == 5.0


def test_norm_dtype_argument_matches_torch():
    torch = require_torch()
    a = np.array([3.0, 4.0], dtype=np.float32)
    lt = learntorch.norm(lt_tensor(a), dtype=learntorch.float64)
    th = torch.norm(torch_tensor(a), dtype=torch.float64)
    assert lt.dtype is learntorch.float64 and lt.item() == th.item()


@pytest.mark.parametrize("call", [
    lambda t: t.norm(t.arange(3)),
    lambda t: t.norm(t.arange(3.0), dtype=t.int64),
    lambda t: t.norm(t.ones(3, dtype=t.float64), dtype=t.float32),
    lambda t: t.ones(2, 2).norm(p="abc"),
    lambda t: t.ones(2, 2, 2).norm(p="fro", dim=(0, 1, 2)),
    lambda t: t.empty(0).norm(p=math.inf),
], ids=["int_input", "int_dtype", "narrowing_dtype", "unknown_p", "fro_3_dims", "inf_empty"])
def test_norm_errors_match_torch(call):
    torch = require_torch()
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as got:
        call(learntorch)
    assert str(expected.value).split(":")[0].split(".")[0] in str(got.value)


def test_norm_of_empty_tensors_matches_torch():
    torch = require_torch()
    for p in (2, 1, 0):
        assert learntorch.empty(0).norm(p).item() == torch.empty(0).norm(p).item() == 0.0
    assert learntorch.empty(0, 3).norm(math.inf, dim=1).shape == (0,)


# ---------------------------------------------------------------- finite differences, 2nd order
@pytest.mark.parametrize("fn", [
    lambda x: x.logsumexp(1), lambda x: x.logsumexp((0, 2), keepdim=True),
    lambda x: x.norm(), lambda x: x.norm(1, dim=1), lambda x: x.norm(3, dim=(0, 2)),
    lambda x: x.norm(0.5, dim=-1), lambda x: x.norm(math.inf, dim=1),
], ids=["lse", "lse_tuple", "norm2", "norm1", "norm3", "norm_half", "norm_inf"])
def test_gradients_match_finite_differences(fn):
    a = np.random.default_rng(6).uniform(0.2, 2.0, (2, 3, 4)) * np.sign(
        np.random.default_rng(7).standard_normal((2, 3, 4)))
    check_against_finite_differences(fn, a)


@pytest.mark.parametrize("p", [2, 3, 1.5])
def test_norm_second_derivative_matches_torch(p):
    torch = require_torch()
    a = np.array([[1.0, -2.0, 0.5], [0.3, 0.0, -1.0]])
    if p < 2:  # |x|^p has an infinite second derivative at 0 (torch says nan there)
        a[1, 1] = 0.25
    lt_x, th_x = lt_tensor(a, True), torch_tensor(a, True)
    (g_lt,) = learntorch.autograd.grad(lt_x.norm(p, 1).sum(), lt_x, create_graph=True)
    (g_th,) = torch.autograd.grad(th_x.norm(p, 1).sum(), th_x, create_graph=True)
    w = np.arange(6.0).reshape(2, 3)
    (gg_lt,) = learntorch.autograd.grad((g_lt * learntorch.from_numpy(w)).sum(), lt_x)
    (gg_th,) = torch.autograd.grad((g_th * torch.from_numpy(w)).sum(), th_x)
    np.testing.assert_allclose(gg_lt.numpy(), gg_th.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dim", [1, -1, (1, 2), (0, 2)])
def test_logsumexp_agrees_with_torch_on_every_backend(dim):
    """The compiled kernels run at every size here (min_size=0), the reference everywhere."""
    require_torch()
    from learntorch.backends.numba_cpu import NumbaBackend
    a = (np.random.default_rng(9).standard_normal((3, 4, 5)) * 500).astype(np.float32)
    a[0, :, :] = -np.inf  # whole rows of -inf: log(0) = -inf, never nan
    for backend in ("numpy", NumbaBackend(min_size=0)):
        with learntorch.backends.use(backend):
            check_against_torch(lambda x: x.logsumexp(dim), lambda x: x.logsumexp(dim), a,
                                rtol=1e-5, atol=1e-4)
