"""Trigonometric, hyperbolic and special functions, logit, nan_to_num, atan2, hypot, xlogy:
forward, gradient and second derivative against torch, on strided and broadcast inputs."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import (arrays, as_numpy, assert_close, both_raise, broadcastable_pair,
                    check_against_torch, require_torch, torch)

UNIT = st.floats(-0.95, 0.95)
ANY = st.floats(-3, 3)
ABOVE_ONE = st.floats(1.05, 4)
POSITIVE = st.floats(0.1, 5)
PROBABILITY = st.floats(0.02, 0.98)

# name -> (elements the function is smooth on, the call)
UNARY = {
    "tan": (st.floats(-1.4, 1.4), lambda m, x: m.tan(x)),
    "asin": (UNIT, lambda m, x: m.asin(x)),
    "acos": (UNIT, lambda m, x: x.acos()),
    "atan": (ANY, lambda m, x: m.atan(x)),
    "sinh": (ANY, lambda m, x: x.sinh()),
    "cosh": (ANY, lambda m, x: m.cosh(x)),
    "asinh": (ANY, lambda m, x: m.asinh(x)),
    "acosh": (ABOVE_ONE, lambda m, x: m.acosh(x)),
    "atanh": (UNIT, lambda m, x: x.atanh()),
    "arctan": (ANY, lambda m, x: m.arctan(x)),
    "lgamma": (st.floats(-3.9, 5).filter(lambda v: abs(v - round(v)) > 0.05),
               lambda m, x: m.lgamma(x)),
    "digamma": (st.floats(-3.9, 5).filter(lambda v: abs(v - round(v)) > 0.05),
                lambda m, x: x.digamma()),
    "polygamma1": (POSITIVE, lambda m, x: m.polygamma(1, x)),
    "polygamma3": (POSITIVE, lambda m, x: m.polygamma(3, x)),
    "logit": (PROBABILITY, lambda m, x: m.logit(x)),
    "logit eps": (PROBABILITY, lambda m, x: x.logit(eps=0.25)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary_function_and_gradient_match_torch(name, data):
    elements, fn = UNARY[name]
    a = data.draw(arrays(elements=elements), label="x")
    check_against_torch(lambda x: fn(learntorch, x), lambda x: fn(torch, x), a,
                        rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_second_derivative_matches_torch(name):
    require_torch()
    elements, fn = UNARY[name]
    a = np.array([0.31, 0.52, 0.77]) if name not in ("acosh",) else np.array([1.3, 2.0, 3.1])
    got = []
    for lib in (learntorch, torch):
        x = lib.tensor(a, requires_grad=True)
        g, = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad((g * g).sum(), x)
        got.append((as_numpy(g), as_numpy(g2)))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-9)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_integer_and_half_inputs_give_torchs_dtypes(dtype):
    require_torch()
    for name in ("tan", "asinh", "atan", "lgamma", "digamma"):
        a = np.array([1, 2, 3], dtype=dtype)
        got = UNARY[name][1](learntorch, learntorch.tensor(a))
        want = UNARY[name][1](torch, torch.tensor(a))
        assert got.dtype.name == str(want.dtype)[6:]
        np.testing.assert_allclose(as_numpy(got).astype(np.float64),
                                   as_numpy(want).astype(np.float64), rtol=2e-3)


def test_special_functions_at_poles_and_infinities_are_torchs():
    require_torch()
    values = [0.0, -0.0, -1.0, -2.0, math.inf, -math.inf, math.nan, 1e-300, 1e10]
    for name in ("lgamma", "digamma"):
        got = getattr(learntorch, name)(learntorch.tensor(values, dtype=learntorch.float64))
        want = getattr(torch, name)(torch.tensor(values, dtype=torch.float64))
        np.testing.assert_allclose(as_numpy(got), as_numpy(want), rtol=1e-12, equal_nan=True)
    for n in (1, 2, 3):  # (torch's own trigamma is off at the negative poles: not compared)
        v = [0.0, math.inf, 0.5, 30.0, -2.5]
        got = learntorch.polygamma(n, learntorch.tensor(v, dtype=learntorch.float64))
        want = torch.polygamma(n, torch.tensor(v, dtype=torch.float64))
        np.testing.assert_allclose(as_numpy(got), as_numpy(want), rtol=1e-8, equal_nan=True)


@pytest.mark.parametrize("kwargs", [{}, {"nan": 2.0}, {"posinf": 1e3, "neginf": -7.0}])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_to_num_values_and_gradient(kwargs, dtype):
    a = np.array([math.nan, math.inf, -math.inf, 1.5, -2.0], dtype=dtype)
    check_against_torch(lambda x: learntorch.nan_to_num(x, **kwargs),
                        lambda x: torch.nan_to_num(x, **kwargs), a)
    got = learntorch.nan_to_num(learntorch.tensor([1, 2]))
    assert got.dtype is learntorch.int64 and got.tolist() == [1, 2]


BINARY = {
    "atan2": lambda m, a, b: m.atan2(a, b),
    "hypot": lambda m, a, b: a.hypot(b),
    "xlogy": lambda m, a, b: m.xlogy(a, b.abs() + 0.1),
    "arctan2": lambda m, a, b: m.arctan2(a, b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(data=st.data())
def test_binary_function_and_gradients_match_torch_with_broadcasting(name, data):
    a, b = data.draw(broadcastable_pair(elements=st.floats(-3, 3).filter(lambda v: abs(v) > 0.05)))
    fn = BINARY[name]
    check_against_torch(lambda x, y: fn(learntorch, x, y), lambda x, y: fn(torch, x, y), a, b,
                        rtol=1e-7, atol=1e-9)


def test_xlogy_at_zero_and_with_numbers():
    require_torch()
    xs, ys = [0.0, 0.0, 2.0, 0.0, 1.0], [3.0, 0.0, -1.0, math.nan, 0.0]
    for lib in (learntorch, torch):
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(ys, dtype=lib.float64, requires_grad=True)
        lib.xlogy(x, y).sum().backward()
        out = (lib.xlogy(x, y), x.grad, y.grad, lib.xlogy(2.0, y), lib.xlogy(x, 3))
        if lib is learntorch:
            got = out
        else:
            want = out
    for g, w in zip(got, want):
        assert_close(g, w, rtol=1e-12, atol=0)


def test_integer_operands_of_binary_functions_compute_in_the_default_float():
    require_torch()
    both_raise(lambda lib: lib.hypot(lib.tensor([3]), lib.tensor([4])))
    for name in ("atan2", "xlogy"):
        got = BINARY[name](learntorch, learntorch.tensor([3, 4]), learntorch.tensor([4, 3]))
        want = BINARY[name](torch, torch.tensor([3, 4]), torch.tensor([4, 3]))
        assert got.dtype is learntorch.float32 and str(want.dtype) == "torch.float32"
        np.testing.assert_allclose(as_numpy(got), as_numpy(want), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib: lib.atan2(lib.tensor([1.0]), 2.0),
    lambda lib: lib.hypot(1.0, lib.tensor([1.0])),
    lambda lib: lib.polygamma(-1, lib.tensor([1.0])),
    lambda lib: lib.tan([1.0]),
])
def test_bad_arguments_raise_torchs_type(call):
    both_raise(call)


def test_finfo_and_iinfo_give_torchs_limits():
    require_torch()
    for name in ("float16", "bfloat16", "float32", "float64"):
        got, want = learntorch.finfo(getattr(learntorch, name)), torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(got, attr) == getattr(want, attr), (name, attr)
    assert learntorch.finfo().dtype == torch.finfo().dtype == "float32"
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        got, want = learntorch.iinfo(getattr(learntorch, name)), torch.iinfo(getattr(torch, name))
        assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min,
                                                           want.dtype)


def test_finfo_is_one_table_entry_per_floating_dtype():
    from learntorch import _type_info
    floats = {d.name for d in learntorch._dtypes.ALL_DTYPES if d.is_floating_point}
    assert set(_type_info._FLOAT_INFO) == floats == {"float16", "bfloat16", "float32", "float64"}


def test_set_num_threads_caps_the_kernels_and_get_num_threads_reads_it():
    before = learntorch.get_num_threads()
    try:
        learntorch.set_num_threads(1)
        assert learntorch.get_num_threads() == 1
        x = learntorch.randn(300, 300)  # still computes
        assert learntorch.allclose((x + 1) - 1, x, atol=1e-6)
    finally:
        learntorch.set_num_threads(before)
    assert learntorch.get_num_threads() == before >= 1


def test_set_printoptions_changes_how_tensors_print_like_torch():
    require_torch()
    values = [1.23456789, 2.5, 1000.0]
    try:
        for kwargs in ({"precision": 2}, {"profile": "short"}, {"sci_mode": True},
                       {"threshold": 3, "edgeitems": 1}):
            texts = []
            for lib in (learntorch, torch):
                lib.set_printoptions(profile="default")
                lib.set_printoptions(**kwargs)
                texts.append(repr(lib.tensor(values)).replace(lib.__name__, "lib"))
            assert texts[0] == texts[1], kwargs
    finally:
        learntorch.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
        learntorch.set_printoptions(sci_mode=None)
        torch.set_printoptions(sci_mode=None)


def test_numba_and_numpy_backends_agree_on_the_new_math(backend):
    x = learntorch.tensor(np.linspace(-0.9, 0.9, 50))
    for fn in (learntorch.tan, learntorch.asinh, learntorch.atanh, learntorch.digamma):
        with learntorch.backends.use("numpy"):
            want = fn(x)
        np.testing.assert_array_equal(as_numpy(fn(x)), as_numpy(want))

