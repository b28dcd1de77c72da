"""remainder (``%``) and fmod, bit for bit as torch's CPU loop: fmod (exact), then ``+ b``
where the signs differ; a zero result keeps the sign of ``a`` (numpy's and Python's ``%``
give it b's sign, and a later ``x // 0.0`` or ``1 / r`` tells the two apart).

Every case runs in both libraries (tests/oracle.py) and compares values *and* the sign
bits, over every float dtype (half precision too), large quotients (``a % 1e-3``),
nan/inf/-0.0, Python scalars on either side, strided and broadcast operands, integers.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from oracle import as_numpy, both, check_against_torch, require_torch

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTEGERS = ("uint8", "int8", "int16", "int32", "int64")
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]


def bits(t):
    """Values as float64 with their sign bits: equal arrays and equal signs of zero."""
    if not isinstance(t, learntorch.Tensor) and str(t.dtype) == "torch.bfloat16":
        t = t.double()  # (torch's numpy() has no bfloat16; every bfloat16 is a double)
    a = as_numpy(t).astype(np.float64)
    return np.where(np.isnan(a), 0, a), np.signbit(a) & ~np.isnan(a), np.isnan(a)


def assert_same_bits(got, want):
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    assert tuple(got.shape) == tuple(want.shape)
    for g, w in zip(bits(got), bits(want)):
        np.testing.assert_array_equal(g, w)


def run_both(program):
    got, want = both(program)
    assert_same_bits(got, want)


def values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype in INTEGERS:
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -300), min(info.max, 300), n).tolist()
    v = np.round(rng.uniform(-400, 400, n), 2)
    v[: len(SPECIAL)] = SPECIAL[:n]
    return v.tolist()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["remainder", "fmod"])
@pytest.mark.parametrize("divisor", [1e-3, 1e-7, 0.37, -1.5, 3, -7.0, 2049, 1e30, np.inf,
                                     -np.inf, 0.0, -0.0, np.nan])
def test_float_tensor_by_number_bit_for_bit(dtype, op, divisor):
    require_torch()
    run_both(lambda lib: getattr(lib, op)(
        lib.tensor(values("float64", 70, 0), dtype=getattr(lib, dtype)), divisor))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("number", [3.0, -2.5, 0.0, -0.0, 1e-3, 2049])
def test_number_remainder_tensor_bit_for_bit(dtype, number):
    require_torch()
    run_both(lambda lib: number % lib.tensor(values("float64", 70, 1),
                                             dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["remainder", "fmod"])
def test_broadcast_and_strided_tensors_bit_for_bit(dtype, op):
    """Every pair of special and plain values (a (n, 1) column against a (1, n) row), and a
    strided, transposed operand: torch's loop takes other paths there, same formula."""
    require_torch()
    grid = SPECIAL + [0.37, -1.5, 3.99, 400.01, -1e-3, 2.0, -2.0, 4.0]

    def program(lib):
        a = lib.tensor(grid, dtype=getattr(lib, dtype))
        wide = lib.tensor(np.repeat(np.array(values("float64", 20, 2)), 2).reshape(4, 10),
                          dtype=getattr(lib, dtype))
        return (getattr(lib, op)(a[:, None], a[None, :]),
                getattr(lib, op)(wide[:, ::2].t(), a[:4]))
    got, want = both(program)
    for g, w in zip(got, want):
        assert_same_bits(g, w)


def test_zero_sign_reaches_a_later_division():
    """The case the fuzzer found: exp(-inf) % -inf is +0.0 in torch, so -inf // it is -inf."""
    require_torch()
    run_both(lambda lib: lib.div(lib.tensor([-np.inf, 1.0]),
                                 lib.tensor([0.0, 1.0]) % lib.tensor([-np.inf, -np.inf]),
                                 rounding_mode="floor"))


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("op", ["remainder", "fmod"])
def test_integers_exact(dtype, op):
    require_torch()
    info = np.iinfo(dtype)
    a = [info.min, info.max, -1, 0, 1, 9, 7] + values(dtype, 20, 3)
    b = [3, -3, 2, 5, -1 if info.min < 0 else 1, 4, 9] + [v or 1 for v in values(dtype, 20, 4)]

    def program(lib):
        x, y = lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype))
        return getattr(lib, op)(x, y), getattr(lib, op)(x, 3), getattr(lib, op)(x, 0.37)
    got, want = both(program)
    for g, w in zip(got, want):
        assert_same_bits(g, w)


@given(a=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=40),
       b=st.one_of(st.floats(-10, 10, width=32).filter(lambda v: v != 0),
                   st.sampled_from([1e-3, 1e-5, -3e-4])))
@settings(max_examples=60, deadline=None)
def test_large_quotients_hypothesis(a, b):
    require_torch()
    for dtype in ("float32", "float64"):
        run_both(lambda lib: lib.tensor(a, dtype=getattr(lib, dtype)) % b)
        run_both(lambda lib: lib.fmod(lib.tensor(a, dtype=getattr(lib, dtype)), b))


@pytest.mark.parametrize("program", [
    lambda lib: lib.fmod(lib.tensor([True]), lib.tensor([True])),
    lambda lib: lib.fmod(lib.tensor([5]), 0),
    lambda lib: lib.fmod(lib.tensor([5, 1]), lib.tensor([1, 0])),
    lambda lib: lib.fmod(3, lib.tensor([2.0])),
])
def test_fmod_refuses_as_torch(program):
    require_torch()
    import torch
    errors = []
    for lib in (learntorch, torch):
        with pytest.raises(Exception) as info:
            program(lib)
        errors.append(type(info.value))
    assert errors[0] is errors[1] or issubclass(errors[0], errors[1])


def test_fmod_gradients_and_node_names():
    require_torch()
    check_against_torch(lambda a, b: learntorch.fmod(a, b),
                        lambda a, b: __import__("torch").fmod(a, b),
                        np.array([[-5.5, 3.25, 7.0], [0.5, -0.75, 9.5]]),
                        np.array([2.0, -1.5, 4.0]))
    got, want = both(lambda lib: (
        lib.fmod(lib.ones(2, requires_grad=True), 2).grad_fn.name(),
        lib.fmod(lib.ones(2, requires_grad=True), lib.ones(2)).grad_fn.name(),
        lib.ones(2, requires_grad=True).fmod(lib.ones(2)).grad_fn.name()))
    assert got == want


def test_fmod_in_place_method():
    require_torch()
    run_both(lambda lib: lib.tensor([-5.5, 3.0, -0.0, 7.25]).fmod_(-2.0))
