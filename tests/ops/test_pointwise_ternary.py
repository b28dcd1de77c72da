"""addcmul, addcdiv and lerp (and their in-place forms) against torch.

They are the pieces of a hand-written Adam (``m.lerp_(g, 1 - b1)``,
``p.addcdiv_(m, v.sqrt() + eps, value=-lr)``), so they must broadcast, promote,
refuse bad input and differentiate exactly as torch's do.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from oracle import (arrays, assert_close, check_against_finite_differences, check_against_torch,
                    lt_tensor, require_torch, torch, torch_tensor)


@st.composite
def broadcastable_triple(draw, elements=None):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    return tuple(draw(arrays(shape=s, elements=elements)) for s in shapes.input_shapes)


VALUES = st.sampled_from([1, -0.5, 2, 0.0, True])
AWAY_FROM_ZERO = st.one_of(st.floats(-3, -0.5, width=32), st.floats(0.5, 3, width=32))


@given(xs=broadcastable_triple(), value=VALUES)
def test_addcmul_matches_torch(xs, value):
    require_torch()
    check_against_torch(lambda a, b, c: learntorch.addcmul(a, b, c, value=value),
                        lambda a, b, c: torch.addcmul(a, b, c, value=value), *xs)


@given(xs=broadcastable_triple(elements=AWAY_FROM_ZERO), value=VALUES)
def test_addcdiv_matches_torch(xs, value):
    require_torch()
    check_against_torch(lambda a, b, c: learntorch.addcdiv(a, b, c, value=value),
                        lambda a, b, c: torch.addcdiv(a, b, c, value=value), *xs)


@given(xs=broadcastable_triple())
def test_lerp_with_a_tensor_weight_matches_torch(xs):
    require_torch()
    check_against_torch(learntorch.lerp, torch.lerp, *xs)


@given(pair=st.data(), weight=st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0, -0.5, 2, True]))
def test_lerp_with_a_number_weight_matches_torch(pair, weight):
    require_torch()
    shapes = pair.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a, b = (pair.draw(arrays(shape=s)) for s in shapes.input_shapes)
    check_against_torch(lambda x, y: learntorch.lerp(x, y, weight),
                        lambda x, y: torch.lerp(x, y, weight), a, b)


def test_lerp_rounds_like_torch_bit_for_bit_in_float32():
    # torch computes from the nearer end (weight 1 gives `end` exactly) with one rounding
    torch = require_torch()
    rng = np.random.default_rng(5)
    start = np.concatenate([[0.1, 2.0, 1e8], rng.standard_normal(1000)]).astype(np.float32)
    end = np.concatenate([[0.7, np.inf, 3.3], 100 * rng.standard_normal(1000)]).astype(np.float32)
    for w in (0.0, 1.0, 0.2, 0.6, 0.49, -0.3, 1.7):
        mine = learntorch.lerp(learntorch.tensor(start), learntorch.tensor(end), w)
        theirs = torch.lerp(torch.tensor(start), torch.tensor(end), w)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    weights = rng.uniform(-0.5, 1.5, start.shape).astype(np.float32)
    mine = learntorch.lerp(learntorch.tensor(start), learntorch.tensor(end),
                           learntorch.tensor(weights))
    theirs = torch.lerp(torch.tensor(start), torch.tensor(end), torch.tensor(weights))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp"])
def test_gradients_match_finite_differences(name):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3,))
    c = rng.uniform(0.5, 2.0, (2, 1))
    if name == "lerp":
        check_against_finite_differences(learntorch.lerp, a, b, c)
    else:
        fn = getattr(learntorch, name)
        check_against_finite_differences(lambda x, y, z: fn(x, y, z, value=-0.7), a, b, c)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp"])
def test_gradient_of_the_gradient_matches_torch(name):
    require_torch()
    rng = np.random.default_rng(2)
    arrays_in = [rng.standard_normal((2, 3)), rng.standard_normal(3), rng.uniform(0.5, 2, (2, 1))]
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        xs = [make(a, True) for a in arrays_in]
        out = getattr(lib, name)(*xs) if name == "lerp" else getattr(lib, name)(*xs, value=0.3)
        grads = lib.autograd.grad((out ** 2).sum(), xs, create_graph=True)
        results.append(lib.autograd.grad(sum((g ** 2).sum() for g in grads), xs))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs, what="gradient of the gradient")


@pytest.mark.parametrize("dtypes", [("float32", "float64", "float32"), ("int64", "int64", "int64"),
                                    ("int64", "float32", "int64"), ("float32", "int64", "int64"),
                                    ("float16", "float32", "float32")])
def test_addcmul_promotes_over_all_three_tensors(dtypes):
    require_torch()
    xs = [np.arange(1, 7).reshape(2, 3).astype(d) for d in dtypes]
    check_against_torch(lambda a, b, c: learntorch.addcmul(a, b, c, value=2),
                        lambda a, b, c: torch.addcmul(a, b, c, value=2), *xs, grad=False)


@pytest.mark.parametrize("value", [0.5, 2.5, -1.7])
def test_a_float_value_with_integer_tensors_is_truncated_like_torch(value):
    require_torch()
    xs = [np.arange(6).reshape(2, 3)] * 3
    check_against_torch(lambda a, b, c: learntorch.addcmul(a, b, c, value=value),
                        lambda a, b, c: torch.addcmul(a, b, c, value=value), *xs)


def test_addcdiv_with_one_float_operand_divides_truly():
    require_torch()
    a, b, c = np.arange(6).reshape(2, 3), np.arange(6.0).reshape(2, 3), np.full((2, 3), 4)
    check_against_torch(lambda x, y, z: learntorch.addcdiv(x, y, z),
                        lambda x, y, z: torch.addcdiv(x, y, z), a, b, c, grad=False)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv", "lerp"])
def test_in_place_forms_match_torch(name):
    torch = require_torch()
    rng = np.random.default_rng(3)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.uniform(0.5, 2, (2, 1))
    results = []
    for lib, make in ((learntorch, lt_tensor), (torch, torch_tensor)):
        leaf = make(a, True)
        x = leaf * 1.0  # in place on a non-leaf: the graph must be rebased
        args = (make(b, True), make(c, True))
        method = getattr(x, name + "_")
        out = method(*args) if name == "lerp" else method(*args, value=-2)
        assert out is x
        out.backward(make(np.ones((2, 3))))
        results.append((x, leaf.grad, args[0].grad, args[1].grad, x.grad_fn.name()))
    for mine, theirs, what in zip(*results, ["value", "grad input", "grad 1", "grad 2", "node"]):
        if what == "node":
            assert mine == theirs
        else:
            assert_close(mine, theirs, what=what)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_methods_take_value_as_a_keyword(name):
    require_torch()
    xs = [np.full((2,), v) for v in (1.0, 3.0, 2.0)]
    check_against_torch(lambda a, b, c: getattr(a, name)(b, c, value=4),
                        lambda a, b, c: getattr(a, name)(b, c, value=4), *xs)


def test_node_names_are_torchs():
    torch = require_torch()
    for program in (lambda m, x: m.addcmul(x, x, x), lambda m, x: m.addcdiv(x, x, x),
                    lambda m, x: m.lerp(x, x, 0.5), lambda m, x: m.lerp(x, x, x)):
        mine = program(learntorch, learntorch.ones(2, requires_grad=True))
        theirs = program(torch, torch.ones(2, requires_grad=True))
        assert mine.grad_fn.name() == theirs.grad_fn.name()


def _both_raise(program, error, words):
    torch = require_torch()
    with pytest.raises(error):
        program(torch)
    with pytest.raises(error) as mine:
        program(learntorch)
    for w in words:
        assert w in str(mine.value), (w, str(mine.value))


@pytest.mark.parametrize("program,error,words", [
    (lambda m: m.addcmul(m.ones(2, 3), m.ones(4), m.ones(2, 3)), RuntimeError, ["[2, 3]", "[4]"]),
    (lambda m: m.addcdiv(m.ones(2, 3), m.ones(2, 3), m.ones(2, 2)), RuntimeError, ["[2, 2]"]),
    (lambda m: m.lerp(m.ones(2, 3), m.ones(3, 2), 0.5), RuntimeError, ["[2, 3]", "[3, 2]"]),
    (lambda m: m.addcmul(m.ones(2), 2.0, m.ones(2)), TypeError, ["tensor1", "float"]),
    (lambda m: m.addcdiv(3, m.ones(2), m.ones(2)), TypeError, ["input", "int"]),
    (lambda m: m.lerp(m.ones(2), 2.0, 0.5), TypeError, ["end", "float"]),
    (lambda m: m.addcmul(m.ones(2), m.ones(2), m.ones(2), 2), TypeError, []),
    (lambda m: m.addcdiv(m.ones(2, dtype=m.long), m.ones(2, dtype=m.long),
                         m.ones(2, dtype=m.long)), RuntimeError, ["Integer division", "trunc"]),
    (lambda m: m.addcmul(*[m.ones(2, dtype=m.bool)] * 3), NotImplementedError, ["Bool"]),
    (lambda m: m.lerp(m.ones(2), m.ones(2, dtype=m.float64), 0.5), RuntimeError,
     ["for `end`", "float64"]),
    (lambda m: m.lerp(m.ones(2), m.ones(2), m.ones(2, dtype=m.float64)), RuntimeError,
     ["for `weight`", "float64"]),
    (lambda m: m.lerp(m.ones(2, dtype=m.long), m.ones(2, dtype=m.long), 0.5),
     NotImplementedError, ["int64"]),
    (lambda m: m.ones(3).addcmul_(m.ones(2, 3), m.ones(2, 3)), RuntimeError, ["[3]", "[2, 3]"]),
    (lambda m: m.ones(3, dtype=m.long).addcdiv_(m.ones(3), m.ones(3)), RuntimeError,
     ["can't be cast"]),
], ids=["addcmul_shapes", "addcdiv_shapes", "lerp_shapes", "number_tensor1", "number_input",
        "number_end", "value_positional", "integer_addcdiv", "bool_addcmul", "lerp_end_dtype",
        "lerp_weight_dtype", "lerp_integer", "inplace_broadcast_shape", "inplace_float_into_long"])
def test_bad_input_raises_torchs_exception_with_a_clear_message(program, error, words):
    _both_raise(program, error, words)


def test_a_0d_weight_of_another_dtype_is_accepted_like_torch():
    torch = require_torch()
    a, b = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    for w in (np.array(0.25), np.array(1)):
        check_against_torch(lambda x, y, z: learntorch.lerp(x, y, z),
                            lambda x, y, z: torch.lerp(x, y, z), a, b, w, grad=False)
