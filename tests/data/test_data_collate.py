"""default_collate and default_convert, specified against torch's on equivalent inputs.

A batch is built twice from one description -- once with learntorch tensors,
once with torch tensors (numbers, strings and numpy arrays are shared) -- and
both collations must give the same structure: the same container types, keys
and order, and tensors of the same dtype, shape and values.
"""
import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from learntorch.utils.data import default_collate, default_convert
from oracle import require_torch, torch

Point = collections.namedtuple("Point", ["x", "y"])


def assert_same(lt_out, th_out, path="batch"):
    """Structural equality of a learntorch result and a torch result."""
    if isinstance(th_out, torch.Tensor):
        assert isinstance(lt_out, learntorch.Tensor), f"{path}: {type(lt_out)} is not a tensor"
        assert str(lt_out.dtype).split(".")[-1] == str(th_out.dtype).split(".")[-1], \
            f"{path}: dtype {lt_out.dtype} != torch's {th_out.dtype}"
        assert tuple(lt_out.shape) == tuple(th_out.shape), f"{path}: shape"
        np.testing.assert_array_equal(lt_out.numpy(), th_out.numpy(), err_msg=path)
        return
    assert type(lt_out) is type(th_out), f"{path}: {type(lt_out)} vs torch's {type(th_out)}"
    if isinstance(th_out, dict):
        assert list(lt_out) == list(th_out), f"{path}: keys"
        for k in th_out:
            assert_same(lt_out[k], th_out[k], f"{path}[{k!r}]")
    elif isinstance(th_out, (list, tuple)):
        assert len(lt_out) == len(th_out), f"{path}: length"
        for i, (a, b) in enumerate(zip(lt_out, th_out)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(th_out, np.ndarray):
        np.testing.assert_array_equal(lt_out, th_out, err_msg=path)
    else:
        assert lt_out == th_out, f"{path}: {lt_out!r} != {th_out!r}"


def collate_both(make_batch):
    """``make_batch(T)`` builds a batch with tensors made by ``T(numpy array)``."""
    require_torch()
    lt_out = default_collate(make_batch(lambda a: learntorch.from_numpy(np.array(a))))
    th_out = torch.utils.data.default_collate(make_batch(lambda a: torch.from_numpy(np.array(a))))
    assert_same(lt_out, th_out)
    return lt_out


CASES = {
    "float tensors": lambda T: [T(np.float32([1, 2])), T(np.float32([3, 4]))],
    "0-d tensors": lambda T: [T(np.int64(3)), T(np.int64(4))],
    "2-d int tensors": lambda T: [T(np.arange(6).reshape(2, 3)) * k for k in range(3)],
    "bool tensors": lambda T: [T(np.array([True, False])), T(np.array([False, False]))],
    "python floats": lambda T: [1.5, 2.25, -3.0],
    "python ints": lambda T: [1, 2, 3],
    "python bools": lambda T: [True, False, True],
    "numpy float32 arrays": lambda T: [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)],
    "numpy uint8 arrays": lambda T: [np.arange(4, dtype=np.uint8), np.arange(4, dtype=np.uint8)],
    "numpy int32 scalars": lambda T: [np.int32(1), np.int32(5)],
    "numpy float64 scalars": lambda T: [np.float64(1.5), np.float64(2.5)],
    "numpy bool scalars": lambda T: [np.bool_(True), np.bool_(False)],
    "strings": lambda T: ["cat", "dog"],
    "bytes": lambda T: [b"a", b"b"],
    "tuples become lists": lambda T: [(T(np.float32([1])), 1, "a"), (T(np.float32([2])), 2, "b")],
    "lists": lambda T: [[1, 2.0], [3, 4.0]],
    "dicts": lambda T: [{"image": T(np.zeros((1, 2, 2), np.float32)), "label": 3, "w": 0.5},
                        {"image": T(np.ones((1, 2, 2), np.float32)), "label": 7, "w": 1.5}],
    "ordered dicts": lambda T: [collections.OrderedDict(b=1, a=2.0),
                                collections.OrderedDict(b=3, a=4.0)],
    "namedtuples": lambda T: [Point(1, T(np.float32([0.5]))), Point(2, T(np.float32([1.5])))],
    "nested": lambda T: [{"a": [1, (2.0, np.array([1, 2]))], "s": "x"},
                         {"a": [3, (4.0, np.array([3, 4]))], "s": "y"}],
    "one sample": lambda T: [(T(np.float32([1, 2])), 0)],
}


@pytest.mark.parametrize("case", list(CASES))
def test_default_collate_matches_torch(case):
    collate_both(CASES[case])


def test_collated_tensors_get_a_new_first_dimension_of_batch_size():
    out = collate_both(lambda T: [(T(np.zeros((1, 8, 8), np.float32)), k) for k in range(5)])
    images, labels = out
    assert list(images.shape) == [5, 1, 8, 8] and images.dtype == learntorch.float32
    assert list(labels.shape) == [5] and labels.dtype == learntorch.int64


# ------------------------------------------------------------ property: any structure
leaf_kinds = st.sampled_from(["int", "float", "bool", "str", "tensor", "ndarray", "npscalar"])
templates = st.recursive(
    st.tuples(leaf_kinds, st.lists(st.integers(1, 3), max_size=2)),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda c: ("list", c)),
        st.lists(children, min_size=1, max_size=3).map(lambda c: ("tuple", c)),
        st.dictionaries(st.sampled_from("abcd"), children, min_size=1, max_size=3)
          .map(lambda d: ("dict", d))),
    max_leaves=6)


def instantiate(template, rng, T):
    kind, arg = template
    if kind == "list":
        return [instantiate(t, rng, T) for t in arg]
    if kind == "tuple":
        return tuple(instantiate(t, rng, T) for t in arg)
    if kind == "dict":
        return {k: instantiate(t, rng, T) for k, t in arg.items()}
    shape = tuple(arg)
    return {"int": lambda: int(rng.integers(-9, 9)), "float": lambda: float(rng.normal()),
            "bool": lambda: bool(rng.integers(2)), "str": lambda: "s" * int(rng.integers(1, 4)),
            "tensor": lambda: T(rng.normal(size=shape).astype(np.float32)),
            "ndarray": lambda: rng.integers(0, 9, size=shape),
            "npscalar": lambda: np.float32(rng.normal())}[kind]()


@given(templates, st.integers(1, 4), st.integers(0, 2 ** 16))
def test_default_collate_matches_torch_on_random_nested_samples(template, batch_size, seed):
    def make_batch(T):
        rng = np.random.default_rng(seed)  # the same values for both libraries
        return [instantiate(template, rng, T) for _ in range(batch_size)]
    collate_both(make_batch)


# ---------------------------------------------------------------------- errors
def test_tensors_of_different_shapes_raise_runtime_error_naming_both_shapes():
    require_torch()
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.utils.data.default_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError, match=r"equal size, but got \[2\] at entry 0 and \[3\] "
                                           r"at entry 1"):
        default_collate([learntorch.zeros(2), learntorch.zeros(3)])


def test_numpy_arrays_of_different_shapes_raise_runtime_error():
    with pytest.raises(RuntimeError, match=r"\[2, 2\] at entry 0 and \[3, 2\] at entry 1"):
        default_collate([np.zeros((2, 2)), np.zeros((3, 2))])


def test_samples_of_different_lengths_raise_runtime_error_like_torch():
    require_torch()
    with pytest.raises(RuntimeError, match="should be of equal size"):
        torch.utils.data.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match=r"should be of equal size \(got lengths \[2, 1\]\)"):
        default_collate([[1, 2], [3]])


@pytest.mark.parametrize("batch", [[object(), object()], [np.array(["a"]), np.array(["b"])],
                                   [np.array([None]), np.array([None])], [None, None]])
def test_types_that_cannot_become_tensors_raise_type_error_like_torch(batch):
    require_torch()
    with pytest.raises(TypeError):
        torch.utils.data.default_collate(batch)
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate(batch)


def test_dicts_with_different_keys_raise_key_error_naming_the_key():
    with pytest.raises(KeyError, match=r"sample 1 .* \['y'\]"):
        default_collate([{"x": 1, "y": 2}, {"x": 3}])


# ------------------------------------------------------------- default_convert
CONVERT_CASES = {
    "numpy array": lambda: np.arange(3),
    "numpy scalar": lambda: np.float32(2.5),
    "python number": lambda: 3,
    "string": lambda: "abc",
    "string array is kept": lambda: np.array(["a", "b"]),
    "tuple becomes list": lambda: (np.arange(2), 1.5),
    "dict": lambda: {"x": np.ones(2), "y": "label"},
    "namedtuple": lambda: Point(np.zeros(1), 2),
    "list": lambda: [np.arange(2), [np.arange(1)]],
}


@pytest.mark.parametrize("case", list(CONVERT_CASES))
def test_default_convert_matches_torch(case):
    require_torch()
    make = CONVERT_CASES[case]
    assert_same(default_convert(make()), torch.utils.data.default_convert(make()))


def test_default_convert_keeps_tensors_as_they_are():
    t = learntorch.ones(2)
    assert default_convert(t) is t
