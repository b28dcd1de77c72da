"""Observations (course/observation.py): what a check compares, as plain data that
crosses from a submission's kernel to the grader and compares the same on both sides.

- a value survives ``to_wire`` / ``read_observation`` with its comparisons and its
  description unchanged;
- the reader accepts nothing but that plain data (no other dtype, field or shape);
- equality is the plain data's: a value's own ``__eq__`` never takes part.
"""
import json

import numpy as np
import pytest

import learntorch
from course import observation as obs


def wire(value):
    """``value`` observed, sent and read back as the grader reads it."""
    return obs.read_observation(json.loads(obs.to_wire(obs.complete(obs.observe(value)))))


VALUES = [3, 2.5, True, None, "abc", (2, 3), [1.0, 2.0], {"a": [1, 2]}, {1, 2},
          np.float32(1.5), np.arange(6).reshape(2, 3), learntorch.tensor([[1.0, 2.0]]),
          learntorch.tensor(2.5), float("nan"), float("inf"), b"xy", np.array(["a", "bc"]),
          learntorch.float32, int]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_a_value_compares_and_reads_the_same_after_crossing(value):
    here, there = obs.complete(obs.observe(value)), wire(value)
    assert obs.describe_of(there) == obs.describe_of(here)
    for other in VALUES:
        mine = obs.observe(other)
        assert (obs.compare_equal(there, mine) is None) == (obs.compare_equal(here, mine) is None)
        assert _close(there, mine) == _close(here, mine)


def _close(actual, expected):
    try:
        return obs.compare_close(actual, expected) is None
    except TypeError:   # an expected value check_close cannot compare with
        return "refused"


def test_a_failure_message_is_the_same_on_both_sides():
    got, want = learntorch.tensor([1.0, 2.5, 3.0]), [1.0, 2.0, 3.0]
    local = obs.compare_close(obs.observe(got), obs.observe(want)).message("f(x)")
    crossed = obs.compare_close(wire(got), wire(want)).message("f(x)")
    assert crossed == local and "first at index (1,): got 2.5, expected 2" in crossed


def test_equality_never_asks_the_value():
    class Equal:
        def __eq__(self, other):
            return True

        def __repr__(self):
            return "Equal()"
    assert obs.compare_equal(obs.observe(Equal()), obs.observe(42)) is not None
    assert obs.compare_equal(obs.observe(Equal()), obs.observe(Equal())) is None  # same repr


@pytest.mark.parametrize("a, b, equal", [
    (1, 1.0, True), (True, 1, True), ([1, 2], (1, 2), False), ((1, 2), (1, 2), True),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True), ({1, 2}, frozenset({2, 1}), True),
    (float("nan"), float("nan"), False), (None, 0, False), ("1", 1, False)])
def test_equality_is_pythons_on_plain_data(a, b, equal):
    assert obs.same(obs.plain(a), obs.plain(b)) is equal


def _observed(value):
    return json.loads(obs.to_wire(obs.complete(obs.observe(value))))


@pytest.mark.parametrize("change, words", [
    (lambda o: o.update(extra=1), "unknown observation field"),
    (lambda o: o["array"].update(dtype="object"), "does not match"),
    (lambda o: o["array"].update(shape=[10 ** 6, 10 ** 6]), "too large"),
    (lambda o: o["array"].update(data=o["array"]["data"][:-4]), "does not match"),
    (lambda o: o.update(tensor="yes"), "not booleans"),
    (lambda o: o.update(describe="x" * 10 ** 6), "short string"),
    (lambda o: o.update(plain=["pickle", "cos\nsystem"]), "unknown plain tag"),
])
def test_the_reader_refuses_anything_but_plain_data(change, words):
    observed = _observed(np.arange(4.0))
    change(observed)
    with pytest.raises(obs.WireError, match=words):
        obs.read_observation(observed)


def test_the_reader_refuses_a_structure_nested_too_deep():
    deep = ["list", []]
    for _ in range(50):
        deep = ["list", [deep]]
    observed = _observed(1)
    observed["plain"] = deep
    with pytest.raises(obs.WireError, match="too deep"):
        obs.read_observation(observed)
