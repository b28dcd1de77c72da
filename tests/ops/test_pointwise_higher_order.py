"""Second derivatives: autograd.grad(..., create_graph=True) twice, against torch.

For y = f(x) (or f(a, b)) with output gradient v, the first call gives
g = v . df/dx as a differentiable tensor; the second differentiates
sum(g * w) again.  That is a Hessian-vector product, and must match torch's,
for every input (cross terms a-b included).  The activations' first
derivative is a composite of differentiable ops in this mode, not the fused
kernel, so this is also the test of that composite.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import arrays, assert_close, lt_tensor, require_torch, torch_tensor

ANY = st.floats(-3, 3, allow_nan=False, width=32)
POSITIVE = st.floats(0.5, 3, width=32)
NONZERO = st.floats(0.5, 3, width=32) | st.floats(-3, -0.5, width=32)


def unary_ops():
    torch = require_torch()
    F = torch.nn.functional
    return {
        "tanh": (learntorch.tanh, torch.tanh, ANY),
        "sigmoid": (learntorch.sigmoid, torch.sigmoid, ANY),
        "exp": (learntorch.exp, torch.exp, ANY),
        "log": (learntorch.log, torch.log, POSITIVE),
        "gelu": (learntorch.gelu, F.gelu, ANY),
        "gelu_tanh": (lambda x: learntorch.gelu(x, approximate="tanh"),
                      lambda x: F.gelu(x, approximate="tanh"), ANY),
        "silu": (learntorch.silu, F.silu, ANY),
        "softplus": (learntorch.softplus, F.softplus, ANY),
        "softplus_beta": (lambda x: learntorch.softplus(x, beta=1.5, threshold=2.0),
                          lambda x: F.softplus(x, beta=1.5, threshold=2.0),
                          ANY.filter(lambda v: abs(v * 1.5 - 2.0) > 1e-3)),
        "sqrt": (learntorch.sqrt, torch.sqrt, POSITIVE),
        "sin": (learntorch.sin, torch.sin, ANY),
        "erf": (learntorch.erf, torch.erf, ANY),
        "pow_scalar": (lambda x: x ** 3, lambda x: x ** 3, ANY),
        "rpow": (lambda x: 2.0 ** x, lambda x: 2.0 ** x, ANY),
        "reciprocal_scalar": (lambda x: 2.0 / x, lambda x: 2.0 / x, NONZERO),
    }


BINARY = {
    "mul": (lambda a, b: a * b, ANY, ANY),
    "div": (lambda a, b: a / b, ANY, NONZERO),
    "pow": (lambda a, b: a ** b, POSITIVE, ANY),
    "add_alpha": (lambda a, b: a.add(b, alpha=2.5), ANY, ANY),
}


def hessian_vector_products(lib, fn, arrays_in, v, w):
    """d/dx_i sum(w_j * (v . df/dx_j)), for every input i; zeros where one is unused."""
    make = lt_tensor if lib is learntorch else torch_tensor
    xs = [make(a, requires_grad=True) for a in arrays_in]
    y = fn(*xs)
    firsts = lib.autograd.grad(y, xs, grad_outputs=make(v), create_graph=True)
    total = sum((g * make(wi)).sum() for g, wi in zip(firsts, w))
    if not total.requires_grad:  # every first derivative is a constant: the Hessian is 0
        return firsts, [make(np.zeros_like(a)) for a in arrays_in]
    seconds = lib.autograd.grad(total, xs, allow_unused=True)
    return firsts, [make(np.zeros_like(a)) if s is None else s for s, a in zip(seconds, arrays_in)]


def compare(lt_fn, torch_fn, *arrays_in):
    torch = require_torch()
    rng = np.random.default_rng(7)
    y_shape = np.broadcast_shapes(*(a.shape for a in arrays_in))
    v = rng.standard_normal(y_shape)
    w = [rng.standard_normal(a.shape) for a in arrays_in]
    lt_first, lt_second = hessian_vector_products(learntorch, lt_fn, arrays_in, v, w)
    th_first, th_second = hessian_vector_products(torch, torch_fn, arrays_in, v, w)
    for i, (a, b) in enumerate(zip(lt_first, th_first)):
        assert_close(a, b, rtol=1e-6, atol=1e-9, what=f"first derivative of input {i}")
    for i, (a, b) in enumerate(zip(lt_second, th_second)):
        assert_close(a, b, rtol=1e-6, atol=1e-9, what=f"second derivative of input {i}")


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "exp", "log", "gelu", "gelu_tanh", "silu",
                                  "softplus", "softplus_beta", "sqrt", "sin", "erf",
                                  "pow_scalar", "rpow", "reciprocal_scalar"])
@given(data=st.data())
def test_second_derivative_of_unary_op_matches_torch(name, data):
    lt_fn, torch_fn, domain = unary_ops()[name]
    compare(lt_fn, torch_fn, data.draw(arrays(elements=domain)))


@pytest.mark.parametrize("name", sorted(BINARY))
@given(data=st.data())
def test_second_derivatives_of_binary_op_including_cross_terms_match_torch(name, data):
    fn, dom_a, dom_b = BINARY[name]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a = data.draw(arrays(shape=shapes.input_shapes[0], elements=dom_a))
    b = data.draw(arrays(shape=shapes.input_shapes[1], elements=dom_b))
    compare(fn, fn, a, b)


def test_third_derivative_of_tanh_matches_torch():
    torch = require_torch()
    a = np.array([-1.5, 0.2, 0.9])
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        x = make(a, requires_grad=True)
        g = lib.tanh(x).sum()
        for _ in range(3):
            g, = lib.autograd.grad(g, x, create_graph=True)
            g = g.sum() if g.ndim else g
        results.append(g)
    assert_close(results[0], results[1], rtol=1e-9, atol=1e-12, what="third derivative")


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "gelu", "silu", "softplus"])
def test_second_derivative_of_activation_is_finite_at_extremes(name):
    torch = require_torch()
    lt_fn, torch_fn, _ = unary_ops()[name]
    a = np.array([-1000.0, -30.0, 30.0, 1000.0], dtype=np.float32)
    v, w = np.ones_like(a), [np.ones_like(a)]
    _, lt_second = hessian_vector_products(learntorch, lt_fn, [a], v, w)
    _, th_second = hessian_vector_products(torch, torch_fn, [a], v, w)
    assert np.isfinite(np.asarray(lt_second[0].detach().numpy())).all()
    assert_close(lt_second[0], th_second[0], rtol=1e-5, atol=1e-6)
