"""Comparisons, logical and bitwise ops, isnan/isclose/equal, maximum/minimum and where.

Comparisons and logical ops return bool tensors that never require grad; they
broadcast and promote like arithmetic.  maximum/minimum route the gradient to
the chosen input and split it in half on ties (torch's convention); where
routes it by the condition.  Everything is compared with torch on the same
(often non-contiguous, broadcast) inputs.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import (arrays, check_against_finite_differences, check_against_torch, lt_tensor,
                    require_torch, torch_tensor)

# few distinct values, so that ties (a == b) are common
TIES = st.integers(-2, 2).map(float)


@st.composite
def pair(draw, dtype_a=np.float64, dtype_b=np.float64, elements=None):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = draw(arrays(shape=shapes.input_shapes[0], dtype=dtype_a, elements=elements))
    b = draw(arrays(shape=shapes.input_shapes[1], dtype=dtype_b, elements=elements))
    return a, b


COMPARISONS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
COMPARISON_FUNCTIONS = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                        "less_equal", "not_equal"]
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]


def small(dtype):
    return st.booleans() if dtype == np.bool_ else (
        st.integers(0, 3) if dtype == np.uint8 else st.integers(-2, 2))


# ---------------------------------------------------------------- comparisons
@pytest.mark.parametrize("op", sorted(COMPARISONS))
@given(ab=pair(elements=TIES))
def test_comparison_operators_match_torch_and_return_bool(op, ab):
    check_against_torch(COMPARISONS[op], COMPARISONS[op], *ab)


@pytest.mark.parametrize("name", COMPARISON_FUNCTIONS)
@given(data=st.data())
def test_comparison_functions_match_torch_across_dtypes(name, data):
    torch = require_torch()
    dtype_a, dtype_b = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = data.draw(arrays(shape=shapes.input_shapes[0], dtype=dtype_a, elements=small(dtype_a)))
    b = data.draw(arrays(shape=shapes.input_shapes[1], dtype=dtype_b, elements=small(dtype_b)))
    check_against_torch(getattr(learntorch, name), getattr(torch, name), a, b)
    check_against_torch(getattr(learntorch.Tensor, name), getattr(torch.Tensor, name), a, b)


@pytest.mark.parametrize("op", sorted(COMPARISONS))
@given(a=arrays(elements=TIES), dtype=st.sampled_from([np.float32, np.int64, np.uint8, np.bool_]),
       scalar=st.sampled_from([1, -1, 0.5, 2.0, True, False]))
def test_comparison_with_python_scalar_matches_torch_on_both_sides(op, a, dtype, scalar):
    a = a.astype(dtype)
    check_against_torch(lambda x: COMPARISONS[op](x, scalar), lambda x: COMPARISONS[op](x, scalar), a)
    check_against_torch(lambda x: COMPARISONS[op](scalar, x), lambda x: COMPARISONS[op](scalar, x), a)


def test_comparison_result_never_requires_grad():
    x = learntorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for out in (x > 1, x == x, learntorch.lt(x, 2.0), x.ne(x * 2), learntorch.isnan(x),
                learntorch.isclose(x, x), learntorch.logical_not(x), x.isfinite()):
        assert out.dtype == learntorch.bool
        assert not out.requires_grad and out.grad_fn is None


def test_comparisons_with_nan_follow_ieee_like_torch():
    a = np.array([np.nan, 1.0, np.inf, -np.inf, np.nan])
    b = np.array([np.nan, np.nan, np.inf, 0.0, 1.0])
    for op in COMPARISONS.values():
        check_against_torch(op, op, a, b, grad=False)


def test_comparison_broadcast_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"\[3\].*\[2, 2\]"):
        learntorch.ones(3) < learntorch.ones(2, 2)


@pytest.mark.parametrize("name", ["eq", "lt", "ge"])
def test_comparison_function_takes_a_tensor_first_like_torch(name):
    torch = require_torch()
    with pytest.raises(TypeError):
        getattr(torch, name)(2, torch.ones(2))
    with pytest.raises(TypeError, match="Tensor"):
        getattr(learntorch, name)(2, learntorch.ones(2))


@pytest.mark.parametrize("name", ["eq", "lt", "ge"])
@pytest.mark.parametrize("other", ["a", None, [1, 2]])
def test_comparison_function_with_unsupported_other_raises_type_error(name, other):
    torch = require_torch()
    with pytest.raises(TypeError):
        getattr(torch, name)(torch.ones(2), other)
    with pytest.raises(TypeError):
        getattr(learntorch, name)(learntorch.ones(2), other)


# ---------------------------------------------------------------- logical and bitwise
LOGICAL = ["logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("name", LOGICAL)
@given(data=st.data())
def test_logical_ops_match_torch_across_dtypes_and_broadcast(name, data):
    torch = require_torch()
    dtype_a, dtype_b = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = data.draw(arrays(shape=shapes.input_shapes[0], dtype=dtype_a, elements=small(dtype_a)))
    b = data.draw(arrays(shape=shapes.input_shapes[1], dtype=dtype_b, elements=small(dtype_b)))
    check_against_torch(getattr(learntorch, name), getattr(torch, name), a, b)
    check_against_torch(getattr(learntorch.Tensor, name), getattr(torch.Tensor, name), a, b)


@given(a=arrays(elements=TIES), dtype=st.sampled_from(DTYPES))
def test_logical_not_matches_torch(a, dtype):
    torch = require_torch()
    check_against_torch(learntorch.logical_not, torch.logical_not, a.astype(dtype))


def test_logical_ops_take_tensors_only_like_torch():
    torch = require_torch()
    with pytest.raises(TypeError):
        torch.logical_and(torch.ones(2), 1)
    with pytest.raises(TypeError, match="Tensor"):
        learntorch.logical_and(learntorch.ones(2), 1)


BITWISE = {"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}
INTEGRAL = [np.bool_, np.uint8, np.int8, np.int32, np.int64]


@pytest.mark.parametrize("op", sorted(BITWISE))
@given(data=st.data())
def test_bitwise_operators_on_integers_and_bools_match_torch(op, data):
    dtype_a, dtype_b = data.draw(st.sampled_from(INTEGRAL)), data.draw(st.sampled_from(INTEGRAL))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = data.draw(arrays(shape=shapes.input_shapes[0], dtype=dtype_a, elements=small(dtype_a)))
    b = data.draw(arrays(shape=shapes.input_shapes[1], dtype=dtype_b, elements=small(dtype_b)))
    check_against_torch(BITWISE[op], BITWISE[op], a, b)


@pytest.mark.parametrize("op", sorted(BITWISE))
@pytest.mark.parametrize("dtype", INTEGRAL)
@pytest.mark.parametrize("scalar", [True, False, 3])
def test_bitwise_operators_with_python_scalars_match_torch(op, dtype, scalar):
    a = np.array([0, 1, 2, 3]).astype(dtype)
    check_against_torch(lambda x: BITWISE[op](x, scalar), lambda x: BITWISE[op](x, scalar), a)
    check_against_torch(lambda x: BITWISE[op](scalar, x), lambda x: BITWISE[op](scalar, x), a)


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_invert_matches_torch(dtype):
    a = np.array([0, 1, 2, 3]).astype(dtype)
    check_against_torch(lambda x: ~x, lambda x: ~x, a)
    check_against_torch(lambda x: x.bitwise_not(), lambda x: x.bitwise_not(), a)


@pytest.mark.parametrize("op", sorted(BITWISE))
@pytest.mark.parametrize("other", [np.array([1.0, 2.0]), np.array([1, 2]), 1.5])
def test_bitwise_on_floats_is_not_implemented_like_torch(op, other):
    torch = require_torch()
    f = np.array([1.0, 2.0])
    th = torch_tensor(other) if isinstance(other, np.ndarray) else other
    lt = lt_tensor(other) if isinstance(other, np.ndarray) else other
    with pytest.raises(NotImplementedError):
        BITWISE[op](torch_tensor(f), th)
    with pytest.raises(NotImplementedError, match="Float|Double"):
        BITWISE[op](lt_tensor(f), lt)


def test_invert_of_float_raises_type_error_like_torch():
    torch = require_torch()
    with pytest.raises(TypeError):
        ~torch.ones(2)
    with pytest.raises(TypeError, match="integer"):
        ~learntorch.ones(2)


# ---------------------------------------------------------------- isnan, isinf, isfinite
SPECIAL = np.array([[np.nan, np.inf, -np.inf, 0.0], [1.5, -0.0, np.nan, 3.0]])


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.bool_])
def test_isnan_isinf_isfinite_match_torch(name, dtype):
    torch = require_torch()
    a = SPECIAL.astype(dtype) if np.issubdtype(dtype, np.floating) else np.ones((2, 3), dtype)
    check_against_torch(getattr(learntorch, name), getattr(torch, name), a)
    check_against_torch(getattr(learntorch, name), getattr(torch, name), a.T)  # a view


# ---------------------------------------------------------------- isclose, allclose, equal
@given(ab=pair(elements=st.sampled_from([0.0, 1.0, 1.00001, 1.001, -1.0, np.nan, np.inf, -np.inf])),
       rtol=st.sampled_from([1e-5, 1e-3, 0.0]), atol=st.sampled_from([1e-8, 1e-4, 0.0]),
       equal_nan=st.booleans())
def test_isclose_and_allclose_match_torch(ab, rtol, atol, equal_nan):
    torch = require_torch()
    kw = dict(rtol=rtol, atol=atol, equal_nan=equal_nan)
    check_against_torch(lambda a, b: learntorch.isclose(a, b, **kw),
                        lambda a, b: torch.isclose(a, b, **kw), *ab)
    check_against_torch(lambda a, b: a.isclose(b, **kw), lambda a, b: a.isclose(b, **kw), *ab)
    a, b = ab
    assert learntorch.allclose(lt_tensor(a), lt_tensor(b), **kw) == \
        torch.allclose(torch_tensor(a), torch_tensor(b), **kw)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_isclose_of_integers_matches_torch(dtype):
    torch = require_torch()
    a, b = np.array([0, 1, 5, 100]).astype(dtype), np.array([0, 2, 5, 101]).astype(dtype)
    for kw in ({}, dict(rtol=0.1), dict(atol=1)):
        check_against_torch(lambda x, y: learntorch.isclose(x, y, **kw),
                            lambda x, y: torch.isclose(x, y, **kw), a, b)


@pytest.mark.parametrize("fn", ["isclose", "allclose"])
def test_isclose_requires_same_dtype_and_tensors_like_torch(fn):
    torch = require_torch()
    for lib in (torch, learntorch):
        f, d = lib.ones(3), lib.ones(3, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="Float.*Double|float32.*float64"):
            getattr(lib, fn)(f, d)
        with pytest.raises(TypeError):
            getattr(lib, fn)(f, 1.0)
        with pytest.raises(RuntimeError):
            getattr(lib, fn)(lib.ones(3), lib.ones(2))


@pytest.mark.parametrize("a, b", [
    (np.array([1.0, 2.0]), np.array([1.0, 2.0])),
    (np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
    (np.array([1.0, 2.0]), np.array([[1.0, 2.0]])),
    (np.array([1.0, 2.0]), np.array([1, 2])),
    (np.array([True, False]), np.array([1, 0])),
    (np.ones((2, 3)), np.ones((2, 3)).T.T),
    (np.array(3.0), np.array([3.0])),
])
def test_equal_matches_torch(a, b):
    torch = require_torch()
    expected = torch.equal(torch_tensor(a), torch_tensor(b))
    actual = learntorch.equal(lt_tensor(a), lt_tensor(b))
    assert type(actual) is bool and actual == expected


# ---------------------------------------------------------------- maximum / minimum
@pytest.mark.parametrize("name", ["maximum", "minimum"])
@given(ab=pair(elements=TIES))
def test_maximum_minimum_match_torch_and_split_gradient_on_ties(name, ab):
    torch = require_torch()
    check_against_torch(getattr(learntorch, name), getattr(torch, name), *ab)
    check_against_torch(getattr(learntorch.Tensor, name), getattr(torch.Tensor, name), *ab)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@given(ab=pair())
def test_maximum_minimum_gradient_matches_finite_differences_away_from_ties(name, ab):
    a, b = ab
    a = np.round(a) + 0.25  # a on quarter points, b on thirds: never within 1e-6 of each other
    b = np.round(b * 3) / 3 + 1 / 9
    check_against_finite_differences(getattr(learntorch, name), a, b)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@given(data=st.data())
def test_maximum_minimum_promote_dtypes_like_torch(name, data):
    torch = require_torch()
    dtype_a, dtype_b = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    a = data.draw(arrays(dtype=dtype_a, elements=small(dtype_a)))
    b = data.draw(arrays(shape=a.shape, dtype=dtype_b, elements=small(dtype_b)))
    check_against_torch(getattr(learntorch, name), getattr(torch, name), a, b)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan_like_torch(name):
    torch = require_torch()
    a, b = np.array([np.nan, 1.0, 2.0]), np.array([0.0, np.nan, 1.0])
    check_against_torch(getattr(learntorch, name), getattr(torch, name), a, b, grad=False)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_take_tensors_only_like_torch(name):
    torch = require_torch()
    for lib in (torch, learntorch):
        with pytest.raises(TypeError):
            getattr(lib, name)(lib.ones(2), 1.0)
        with pytest.raises(TypeError):
            getattr(lib, name)(1.0, lib.ones(2))


# ---------------------------------------------------------------- where
@st.composite
def triple(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
    c = draw(arrays(shape=shapes.input_shapes[0], dtype=np.bool_))
    a = draw(arrays(shape=shapes.input_shapes[1]))
    b = draw(arrays(shape=shapes.input_shapes[2]))
    return c, a, b


@given(cab=triple())
def test_where_matches_torch_over_broadcast_condition_and_branches(cab):
    torch = require_torch()
    check_against_torch(learntorch.where, torch.where, *cab)
    check_against_torch(lambda c, a, b: a.where(c, b), lambda c, a, b: a.where(c, b), *cab)


@given(cab=triple())
def test_where_gradient_matches_finite_differences(cab):
    c, a, b = cab
    check_against_finite_differences(lambda x, y: learntorch.where(lt_tensor(c), x, y), a, b)


@given(cab=triple(), scalar=st.sampled_from([0, 1.5, True, -2]))
def test_where_with_a_python_scalar_branch_matches_torch(cab, scalar):
    torch = require_torch()
    c, a, _ = cab
    check_against_torch(lambda c, a: learntorch.where(c, a, scalar),
                        lambda c, a: torch.where(c, a, scalar), c, a)
    check_against_torch(lambda c, a: learntorch.where(c, scalar, a),
                        lambda c, a: torch.where(c, scalar, a), c, a)


@pytest.mark.parametrize("x, y", [(1, 2), (1, 2.5), (True, 2), (1.5, 2.5)])
def test_where_with_two_scalars_matches_torch(x, y):
    torch = require_torch()
    c = np.array([True, False, True])
    check_against_torch(lambda c: learntorch.where(c, x, y), lambda c: torch.where(c, x, y), c)


@given(data=st.data())
def test_where_promotes_mixed_dtypes_like_torch(data):
    torch = require_torch()
    dtype_a, dtype_b = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    c = data.draw(arrays(dtype=np.bool_))
    a = data.draw(arrays(shape=c.shape, dtype=dtype_a, elements=small(dtype_a)))
    b = data.draw(arrays(shape=c.shape[1:], dtype=dtype_b, elements=small(dtype_b)))
    check_against_torch(learntorch.where, torch.where, c, a, b)


def test_where_condition_must_be_bool_like_torch():
    torch = require_torch()
    for lib in (torch, learntorch):
        with pytest.raises(RuntimeError, match="bool"):
            lib.where(lib.tensor([1, 0]), lib.ones(2), lib.zeros(2))


def test_where_with_condition_only_is_nonzero_as_a_tuple_like_torch():
    torch = require_torch()
    c = np.array([[True, False, True], [False, True, False]])
    expected = torch.where(torch_tensor(c))
    actual = learntorch.where(lt_tensor(c))
    assert isinstance(actual, tuple) and len(actual) == len(expected)
    for x, e in zip(actual, expected):
        assert x.dtype == learntorch.int64
        np.testing.assert_array_equal(x.numpy(), e.numpy())


@pytest.mark.parametrize("call", [
    lambda lib: lib.where([True, False], lib.ones(2), lib.zeros(2)),
    lambda lib: lib.logical_not([True]), lambda lib: lib.isnan([1.0]), lambda lib: lib.isinf(1.0),
    lambda lib: lib.isfinite([1.0]), lambda lib: lib.bitwise_not([1]),
], ids=["where", "logical_not", "isnan", "isinf", "isfinite", "bitwise_not"])
def test_non_tensor_input_raises_type_error_like_torch(call):
    torch = require_torch()
    with pytest.raises(TypeError):
        call(torch)
    with pytest.raises(TypeError, match="Tensor"):
        call(learntorch)


def test_where_broadcast_mismatch_names_the_shapes():
    with pytest.raises(RuntimeError, match=r"\[3\].*\[2\]|\[2\].*\[3\]"):
        learntorch.where(learntorch.tensor([True, False, True]), learntorch.ones(2), 0.0)
