"""In-place variants of the elementwise ops (``add_``, ``mul_``, ``exp_``, ``+=``, ...).

An in-place op writes into the tensor's own memory, returns the tensor itself
and bumps its version.  Like torch, it refuses what would change the tensor's
dtype (an int tensor cannot take ``add_(1.5)``) or grow its shape by
broadcasting; and on a non-leaf tensor it is recorded by autograd, so
gradients through it must equal torch's.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import arrays, assert_close, lt_tensor, require_torch, torch_tensor

ANY = st.floats(-3, 3, allow_nan=False, width=32)
POSITIVE = st.floats(0.5, 3, width=32)
NONZERO = st.floats(0.5, 3, width=32) | st.floats(-3, -0.5, width=32)

# name: (call on either library's tensor, domain of self, domain of the other operand or None)
INPLACE = {
    "add_": (lambda x, o: x.add_(o), ANY, ANY),
    "add_alpha": (lambda x, o: x.add_(o, alpha=-2), ANY, ANY),
    "sub_": (lambda x, o: x.sub_(o), ANY, ANY),
    "mul_": (lambda x, o: x.mul_(o), ANY, ANY),
    "div_": (lambda x, o: x.div_(o), ANY, NONZERO),
    "div_floor": (lambda x, o: x.div_(o, rounding_mode="floor"), ANY, NONZERO),
    "pow_": (lambda x, o: x.pow_(o), POSITIVE, ANY),
    "remainder_": (lambda x, o: x.remainder_(o), ANY, NONZERO),
    "clamp_": (lambda x, o: x.clamp_(-0.5, 1.0), ANY, None),
    "clamp_tensor": (lambda x, o: x.clamp_(min=o), ANY, ANY),
    "clip_": (lambda x, o: x.clip_(max=0.5), ANY, None),
    "exp_": (lambda x, o: x.exp_(), ANY, None),
    "log_": (lambda x, o: x.log_(), POSITIVE, None),
    "log1p_": (lambda x, o: x.log1p_(), POSITIVE, None),
    "sqrt_": (lambda x, o: x.sqrt_(), POSITIVE, None),
    "rsqrt_": (lambda x, o: x.rsqrt_(), POSITIVE, None),
    "sin_": (lambda x, o: x.sin_(), ANY, None),
    "cos_": (lambda x, o: x.cos_(), ANY, None),
    "relu_": (lambda x, o: x.relu_(), NONZERO, None),
    "sigmoid_": (lambda x, o: x.sigmoid_(), ANY, None),
    "tanh_": (lambda x, o: x.tanh_(), ANY, None),
    "abs_": (lambda x, o: x.abs_(), NONZERO, None),
    "neg_": (lambda x, o: x.neg_(), ANY, None),
    "sign_": (lambda x, o: x.sign_(), ANY, None),
    "floor_": (lambda x, o: x.floor_(), ANY, None),
    "ceil_": (lambda x, o: x.ceil_(), ANY, None),
    "trunc_": (lambda x, o: x.trunc_(), ANY, None),
    "round_": (lambda x, o: x.round_(), ANY, None),
    "square_": (lambda x, o: x.square_(), ANY, None),
    "reciprocal_": (lambda x, o: x.reciprocal_(), NONZERO, None),
    "iadd": (lambda x, o: _iop(x, o, "__iadd__"), ANY, ANY),
    "isub": (lambda x, o: _iop(x, o, "__isub__"), ANY, ANY),
    "imul": (lambda x, o: _iop(x, o, "__imul__"), ANY, ANY),
    "itruediv": (lambda x, o: _iop(x, o, "__itruediv__"), ANY, NONZERO),
    "ipow": (lambda x, o: _iop(x, o, "__ipow__"), POSITIVE, ANY),
}


def _iop(x, other, name):
    """``x op= other`` written as the call Python makes, so the result can be inspected."""
    return getattr(x, name)(other)


@st.composite
def self_and_other(draw, dom_self, dom_other):
    """self, and an operand that broadcasts *to* self's shape (an in-place op cannot grow self)."""
    a = draw(arrays(elements=dom_self))
    if dom_other is None:
        return a, None
    kind = draw(st.sampled_from(["tensor", "suffix", "scalar"]))
    if kind == "scalar":
        return a, draw(dom_other)
    shape = a.shape if kind == "tensor" else tuple(
        1 if draw(st.booleans()) else s for s in a.shape[draw(st.integers(0, a.ndim)):])
    return a, draw(arrays(shape=shape, elements=dom_other))


def _other(lib, o, requires_grad=False):
    if not isinstance(o, np.ndarray):
        return o
    make = lt_tensor if lib is learntorch else torch_tensor
    return make(o, requires_grad=requires_grad)


# ---------------------------------------------------------------- values, identity, version
@pytest.mark.parametrize("name", sorted(INPLACE))
@given(data=st.data())
def test_inplace_op_matches_torch_returns_self_and_bumps_version(name, data):
    torch = require_torch()
    fn, dom_self, dom_other = INPLACE[name]
    a, o = data.draw(self_and_other(dom_self, dom_other))
    t = torch_tensor(a)
    expected = fn(t, _other(torch, o))
    x = lt_tensor(a)  # a view of a's memory: the write must land in it
    version = x._version
    out = fn(x, _other(learntorch, o))
    assert out is x, f"{name} must return the tensor it modified"
    assert x._version > version, f"{name} must bump the version counter"
    assert_close(x, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(a, t.numpy(), rtol=1e-6, atol=1e-7, equal_nan=True,
                               err_msg="the result was not written into the tensor's memory")


def test_inplace_op_on_a_view_writes_through_to_the_base_like_torch():
    torch = require_torch()
    results = []
    for lib in (torch, learntorch):
        base = lib.arange(12, dtype=lib.float32).reshape(3, 4)
        base[:, 1].mul_(10)
        base.t()[2].add_(lib.tensor([1.0, 2.0, 3.0]))
        base[1].exp_()
        results.append(base)
    assert_close(results[1], results[0])


# ---------------------------------------------------------------- dtype and shape errors
@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([1, 2]).add_(1.5),
    lambda lib: lib.tensor([1, 2]).div_(2),
    lambda lib: lib.tensor([1, 2]).mul_(lib.tensor([0.5, 1.0])),
    lambda lib: lib.tensor([1, 2], dtype=lib.int32).mul_(lib.tensor([1.0], dtype=lib.float64)),
    lambda lib: lib.tensor([True, False]).add_(2),
    lambda lib: lib.tensor([1, 2]).exp_(),
    lambda lib: lib.tensor([1, 2]).sigmoid_(),
    lambda lib: lib.tensor([1, 2]).clamp_(0.5),
    lambda lib: lib.tensor([1, 2]).pow_(0.5),
    lambda lib: lib.tensor([1, 2]).sqrt_(),
    lambda lib: _iop(lib.tensor([1, 2]), 1.5, "__imul__"),
    lambda lib: _iop(lib.tensor([1, 2]), 2, "__itruediv__"),
], ids=["add_float", "div", "mul_float_tensor", "int32_mul_double", "bool_add_int", "exp",
        "sigmoid", "clamp_float", "pow_float", "sqrt", "imul_float", "itruediv"])
def test_inplace_result_that_cannot_be_cast_back_raises_like_torch(call):
    torch = require_torch()
    with pytest.raises(RuntimeError) as expected:
        call(torch)
    with pytest.raises(type(expected.value), match="can't be cast to the desired output type"):
        call(learntorch)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([1, 2], dtype=lib.int32).add_(lib.tensor([1, 1])),
    lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16).mul_(lib.tensor([2.0], dtype=lib.float64)),
    lambda lib: lib.tensor([1.0, 2.0]).add_(lib.tensor([1, 2])),
    lambda lib: lib.tensor([True, False]).mul_(lib.tensor([True, True])),
    lambda lib: lib.tensor([250, 3], dtype=lib.uint8).add_(10),
    lambda lib: lib.tensor([7, -7]).div_(2, rounding_mode="trunc"),
], ids=["int32_add_int64", "half_mul_double", "float_add_long", "bool_mul_bool", "uint8_wrap",
        "int_div_trunc"])
def test_inplace_keeps_the_tensor_dtype_when_the_result_can_be_cast_like_torch(call):
    torch = require_torch()
    expected, actual = call(torch), call(learntorch)
    assert actual.dtype.name == str(expected.dtype).replace("torch.", "")
    assert actual.tolist() == expected.tolist()


@pytest.mark.parametrize("name", ["add_", "mul_", "sub_", "div_", "pow_", "clamp_tensor"])
def test_inplace_cannot_grow_the_tensor_by_broadcasting_like_torch(name):
    torch = require_torch()
    fn = INPLACE[name][0]
    a, o = np.ones(3), np.ones((2, 3))
    with pytest.raises(RuntimeError) as expected:
        fn(torch_tensor(a), torch_tensor(o))
    with pytest.raises(type(expected.value), match=r"\[3\].*\[2, 3\]"):
        fn(lt_tensor(a), lt_tensor(o))


def test_inplace_on_an_expanded_tensor_raises_like_torch():
    torch = require_torch()
    with pytest.raises(RuntimeError):
        torch.ones(3).expand(2, 3).add_(1)
    with pytest.raises(RuntimeError, match="clone"):
        learntorch.ones(3).expand(2, 3).add_(1)


def test_inplace_on_a_leaf_that_requires_grad_raises_like_torch():
    torch = require_torch()
    for lib in (torch, learntorch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.add_(1)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.exp_()
        with lib.no_grad():
            x.mul_(2)  # allowed: this is what an optimizer step does
        assert x.tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------- autograd through in-place
@pytest.mark.parametrize("name", sorted(INPLACE))
@given(data=st.data())
def test_gradient_through_inplace_on_a_non_leaf_matches_torch(name, data):
    torch = require_torch()
    fn, dom_self, dom_other = INPLACE[name]
    a, o = data.draw(self_and_other(dom_self, dom_other))
    g = np.random.default_rng(0).standard_normal(a.shape)
    grads = []
    for lib, make in ((torch, torch_tensor), (learntorch, lt_tensor)):
        x = make(a, requires_grad=True)
        other = _other(lib, o, requires_grad=True)
        y = x * 1.0  # a non-leaf with x's values
        out = fn(y, other)
        assert out is y
        (y * make(g)).sum().backward()
        grads.append((x.grad, other.grad if isinstance(o, np.ndarray) else None, y.grad_fn.name()))
    (tx, to, tname), (lx, lo, lname) = grads
    assert lname == tname, f"grad_fn after {name}: {lname}, torch {tname}"
    assert_close(lx, tx, rtol=1e-6, atol=1e-7, what="gradient of self")
    if isinstance(o, np.ndarray):
        assert_close(lo, to, rtol=1e-6, atol=1e-7, what="gradient of the other operand")


def test_chain_of_inplace_ops_on_a_non_leaf_matches_torch():
    torch = require_torch()
    a, b = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    grads = []
    for lib, make in ((torch, torch_tensor), (learntorch, lt_tensor)):
        x, w = make(a, requires_grad=True), make(b, requires_grad=True)
        y = x * w
        y += 1
        y.mul_(w)
        y -= x
        y.clamp_(-0.9, 5).pow_(2)
        y.div_(w).tanh_()  # tanh_ saves its output: nothing may modify y after it
        y.sum().backward()
        grads.append((x.grad, w.grad, y))
    for (t, l) in zip(grads[0], grads[1]):
        assert_close(l, t, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("modify", [lambda y: y.add_(1), lambda y: y.mul_(2),
                                    lambda y: y.exp_(), lambda y: y.sigmoid_()])
def test_modifying_a_saved_tensor_in_place_fails_at_backward_like_torch(modify):
    torch = require_torch()
    for lib in (torch, learntorch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()  # exp saves its output for backward
        z = y * 2
        modify(y)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (z.sum() + y.sum()).backward()


def test_augmented_assignment_keeps_the_same_tensor_object():
    x = learntorch.tensor([1.0, 2.0])
    alias = x
    x += 1
    x -= 0.5
    x *= 2
    x /= 3
    x **= 2
    assert x is alias
    assert np.allclose(x.numpy(), ((np.array([1.0, 2.0]) + 0.5) * 2 / 3) ** 2)
