"""dtype conversions and ``new_*`` factories: dtypes, values and gradients vs torch."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import arrays, as_numpy, check_against_torch, require_torch, torch

VALUES = [[1.5, -2.7, 0.0], [3.2, -0.5, 255.9]]


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def same(fn):
    """``fn(lib)`` gives a tensor; learntorch's and torch's agree in dtype, shape and values."""
    require_torch()
    got, expected = fn(learntorch), fn(torch)
    assert dtype_name(got) == dtype_name(expected)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(as_numpy(got), as_numpy(expected))
    assert got.requires_grad == expected.requires_grad
    return got


@pytest.mark.parametrize("method", ["float", "double", "half", "long", "int", "short", "bool",
                                    "byte"])
def test_conversion_methods_match_torch(method):
    same(lambda lib: getattr(lib.tensor(VALUES[:1] if method == "byte" else VALUES), method)())
    same(lambda lib: getattr(lib.tensor([True, False]), method)())


@pytest.mark.parametrize("target", ["float64", "int64", "bool", "float16", "int32"])
def test_to_with_a_dtype_positional_keyword_or_tensor_matches_torch(target):
    same(lambda lib: lib.tensor(VALUES).to(getattr(lib, target)))
    same(lambda lib: lib.tensor(VALUES).to(dtype=getattr(lib, target)))
    same(lambda lib: lib.tensor(VALUES).to(lib.zeros(1, dtype=getattr(lib, target))))
    same(lambda lib: lib.tensor(VALUES).to("cpu", getattr(lib, target)))
    same(lambda lib: lib.tensor(VALUES).type_as(lib.zeros(1, dtype=getattr(lib, target))))
    same(lambda lib: lib.tensor(VALUES).type(getattr(lib, target)))


def test_to_the_same_dtype_returns_the_tensor_itself_unless_copy():
    for lib in (learntorch, require_torch()):
        x = lib.tensor(VALUES)
        assert x.to(lib.float32) is x and x.float() is x
        y = x.to(lib.float32, copy=True)
        assert y is not x and y.tolist() == x.tolist()
        y[0, 0] = 100.0
        assert x[0, 0].item() == 1.5


def test_type_with_no_argument_names_the_tensor_type():
    for lib in (learntorch, require_torch()):
        assert lib.tensor(VALUES).type() == "torch.FloatTensor"
        assert lib.tensor([1]).type() == "torch.LongTensor"


@given(arrays(dtype=np.float32))
def test_gradient_flows_through_to_float64_back_to_float32(a):
    require_torch()
    out = check_against_torch(lambda x: (x.to(learntorch.float64) ** 2).sum(),
                              lambda x: (x.to(torch.float64) ** 2).sum(), a)
    assert out.dtype == learntorch.float64
    x = learntorch.tensor(a, requires_grad=True)
    x.double().sum().backward()
    assert x.grad.dtype == learntorch.float32


def test_conversion_to_an_integer_type_cuts_the_graph_like_torch():
    for lib in (learntorch, require_torch()):
        x = lib.tensor(VALUES, requires_grad=True)
        y = x.long()
        assert not y.requires_grad and y.grad_fn is None
        assert x.double().grad_fn.name() == "ToCopyBackward0"


NEW = {
    "new_zeros varargs": lambda lib, x: x.new_zeros(2, 3),
    "new_zeros tuple": lambda lib, x: x.new_zeros((2, 3)),
    "new_zeros scalar shape": lambda lib, x: x.new_zeros(()),
    "new_ones with dtype": lambda lib, x: x.new_ones(3, dtype=lib.int64),
    "new_ones list": lambda lib, x: x.new_ones([2]),
    "new_full int value": lambda lib, x: x.new_full((2,), 7),
    "new_full on an int tensor": lambda lib, x: x.long().new_full((2,), 7.5),
    "new_full with dtype": lambda lib, x: x.new_full((1, 2), 3, dtype=lib.bool),
    "new_tensor": lambda lib, x: x.new_tensor([1, 2]),
    "new_tensor of floats on an int tensor": lambda lib, x: x.long().new_tensor([1.5, 2]),
    "new_tensor requires_grad": lambda lib, x: x.new_tensor([1.5, 2], requires_grad=True),
    "new_zeros requires_grad": lambda lib, x: x.new_zeros(2, requires_grad=True),
    "new_empty dtype and shape": lambda lib, x: x.new_empty((2, 1), dtype=lib.int64).zero_(),
}


@pytest.mark.parametrize("name", list(NEW))
def test_new_factories_take_dtype_from_the_tensor_like_torch(name):
    made = same(lambda lib: NEW[name](lib, lib.tensor(VALUES, dtype=lib.float64)))
    assert made.is_leaf


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")  # torch warns too
def test_new_tensor_copies_its_data():
    x = learntorch.zeros(2)
    source = learntorch.ones(2)
    y = x.new_tensor(source)
    y[0] = 5.0
    assert source.tolist() == [1.0, 1.0]


@given(st.sampled_from(["float32", "float64", "float16", "int64", "int32", "bool"]))
def test_round_trip_through_a_wider_type_keeps_values(name):
    require_torch()
    same(lambda lib: lib.tensor([[0, 1], [1, 0]]).to(getattr(lib, name)).double()
         .to(getattr(lib, name)))
