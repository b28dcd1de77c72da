"""gradcheck / gradgradcheck: pass on correct gradients, catch wrong ones."""
import warnings

import numpy as np
import pytest

import learntorch
from learntorch.autograd import gradcheck, gradgradcheck
from learntorch.autograd.gradcheck import GradcheckError
from oracle import require_torch


def double(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return learntorch.tensor(rng.standard_normal(shape), requires_grad=True)


def square_function(m, factor):
    """x -> x*x with backward ``factor * x * grad`` (correct only for factor 2)."""
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x * factor
    return Square


def cube_with_detached_backward(m):
    """First derivative right, but built from detached values: second derivative wrong."""
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x.detach() ** 2
    return Cube


@pytest.mark.parametrize("fn", [
    lambda a, b: (a * b).tanh(),
    lambda a, b: (a.exp() + b).sum(0),
    lambda a, b: (a @ b.t()).sigmoid(),
    lambda a, b: (a.t(), a * b),  # several outputs, a non-contiguous one
])
def test_gradcheck_and_gradgradcheck_pass_on_correct_gradients(fn):
    a, b = double(3, 2, seed=1), double(3, 2, seed=2)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_gradcheck_handles_non_contiguous_inputs_and_number_arguments():
    x = learntorch.tensor(np.random.default_rng(0).standard_normal((4, 3))).t()
    x.requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t, k: (t * k).sin(), (x, 2.5))
    assert gradcheck(lambda t: t.exp(), x)  # a single tensor is accepted as inputs


def test_gradcheck_leaves_inputs_unchanged():
    x = double(5)
    before = x.detach().clone()
    gradcheck(lambda t: t * t, (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before.numpy())
    assert x.grad is None


def test_wrong_backward_raises_gradcheck_error_with_both_jacobians():
    wrong = square_function(learntorch, factor=1)
    with pytest.raises(GradcheckError, match=r"(?s)Jacobian mismatch for output 0 with respect to "
                                             r"input 0.*numerical.*analytical") as info:
        gradcheck(wrong.apply, (double(3),))
    assert isinstance(info.value, RuntimeError)  # as torch's GradcheckError
    assert gradcheck(wrong.apply, (double(3),), raise_exception=False) is False
    assert gradcheck(square_function(learntorch, factor=2).apply, (double(3),))


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable():
    cube = cube_with_detached_backward(learntorch)
    assert gradcheck(cube.apply, (double(3),))
    with pytest.raises(GradcheckError):
        gradgradcheck(cube.apply, (double(3),))
    assert gradgradcheck(cube.apply, (double(3),), raise_exception=False) is False


@pytest.mark.parametrize("case", ["right", "wrong_first", "wrong_second"])
def test_verdicts_agree_with_torch(case):
    torch = require_torch()
    verdicts = []
    for m in (learntorch, torch):
        x = m.tensor([0.5, -1.5, 2.0], dtype=m.float64, requires_grad=True)
        if case == "right":
            fn = square_function(m, 2).apply
        elif case == "wrong_first":
            fn = square_function(m, 1).apply
        else:
            fn = cube_with_detached_backward(m).apply
        verdicts.append((m.autograd.gradcheck(fn, (x,), raise_exception=False),
                         m.autograd.gradgradcheck(fn, (x,), raise_exception=False)))
    assert verdicts[0] == verdicts[1]


def test_needs_an_input_that_requires_grad_and_warns_for_float32():
    with pytest.raises(ValueError, match="requires_grad=True"):
        gradcheck(lambda t: t * 2, (learntorch.ones(3, dtype=learntorch.float64),))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # float32 rounding of x +- 1e-6 makes the numerical slope of 2x come out as ~1.97
        verdict = gradcheck(lambda t: t * 2, (learntorch.ones(3, requires_grad=True),),
                            raise_exception=False)
    assert verdict is False
    assert any("double precision" in str(w.message) for w in caught)
