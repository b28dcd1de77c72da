"""course.checks: a check passes quietly (one ✓ line) or fails with an
ExerciseCheckFailed that names the input, what was expected and what came back."""
import numpy as np
import pytest

import learntorch
from course.checks import (ExerciseCheckFailed, check_close, check_equal, check_function,
                           check_raises, check_shape, exercise)
from oracle import require_torch


def failure(check, *args, **kwargs):
    with pytest.raises(ExerciseCheckFailed) as info:
        check(*args, **kwargs)
    assert isinstance(info.value, AssertionError)  # plain `assert`-style tools see a failure
    return str(info.value)


@pytest.mark.parametrize("make", [learntorch.tensor, np.array, list],
                         ids=["learntorch", "numpy", "list"])
def test_check_close_accepts_equal_values_of_every_kind(make, capsys):
    check_close(make([1.0, 2.0]), [1.0, 2.0 + 1e-7], name="y", exercise="02.1")
    assert capsys.readouterr().out == "✓ 02.1 passed\n"


def test_check_close_accepts_torch_tensors_and_python_numbers(capsys):
    torch = require_torch()
    check_close(torch.tensor([0.5, 1.5], requires_grad=True) * 2, np.array([1.0, 3.0]))
    check_close(3.0, 3)
    check_close(learntorch.tensor(2.5), 2.5)  # a 0-d tensor against a number
    assert capsys.readouterr().out == ""  # no exercise id: nothing printed


def test_check_close_wrong_values_names_input_expected_got_and_first_difference():
    x = learntorch.tensor([-1.0, 0.0, 2.0])
    message = failure(check_close, x, [0.0, 0.0, 2.0], name="relu(x)", inputs={"x": x})
    assert message.splitlines() == [
        "relu(x): wrong values",
        "  input:    x = learntorch Tensor, shape (3,), float32: [-1.,  0.,  2.]",
        "  expected: list [0.0, 0.0, 2.0]",
        "  got:      learntorch Tensor, shape (3,), float32: [-1.,  0.,  2.]",
        "  1 of 3 values differ; first at index (0,): got -1, expected 0 (largest "
        "difference 1; atol=1e-06, rtol=1e-05)"]


def test_check_close_tolerances_are_numpys_isclose():
    expected = np.array([1.0, 100.0])
    for got in ([1.0 + 9e-7, 100.0], [1.0, 100.0 + 9e-4]):
        assert np.allclose(got, expected, atol=1e-6, rtol=1e-5)
        check_close(np.array(got), expected)
    got = [1.0, 100.0 + 2e-3]
    assert not np.allclose(got, expected, atol=1e-6, rtol=1e-5)
    assert "1 of 2 values differ" in failure(check_close, np.array(got), expected)


def test_check_close_refuses_a_broadcastable_but_different_shape():
    message = failure(check_close, learntorch.zeros(3, 1), np.zeros(3), name="y")
    assert "y: wrong shape" in message and "shape (3, 1) instead of (3,)" in message


def test_check_close_wants_a_tensor_when_a_tensor_is_expected():
    message = failure(check_close, np.zeros(2), learntorch.zeros(2), name="y")
    assert "expected a tensor" in message and "ndarray" in message


def test_check_close_nan_matches_nothing():
    assert "wrong values" in failure(check_close, [float("nan")], [float("nan")])


def test_check_close_says_when_nothing_was_returned():
    assert "did the function forget to `return`" in failure(check_close, None, [1.0])


def test_check_close_compares_dtypes_when_asked():
    check_close(np.zeros(2, np.float64), np.zeros(2, np.float32))
    message = failure(check_close, np.zeros(2, np.float64), learntorch.zeros(2).numpy(),
                      check_dtype=True)
    assert "dtype float64 instead of float32" in message


def test_large_values_are_shown_compactly():
    message = failure(check_close, np.zeros((100, 100)), np.ones((100, 100)), name="big")
    assert len(message.splitlines()) < 20 and "..." in message


def test_check_equal_on_arrays_shapes_and_objects():
    check_equal(learntorch.tensor([1, 2]), [1, 2])
    check_equal((2, 3), (2, 3))
    check_equal("abc", "abc")
    assert "first at index (1,): got 5, expected 2" in failure(check_equal, [1, 5], [1, 2])
    assert "wrong result" in failure(check_equal, {"a": 1}, {"a": 2}, name="d")
    assert "expected: tuple (3, 2)" in failure(check_equal, (2, 3), (3, 2))


def test_check_shape():
    check_shape(learntorch.zeros(2, 3), (2, 3))
    check_shape([[1, 2, 3]], (1, 3))
    message = failure(check_shape, learntorch.zeros(2, 3), (3, 2), name="w")
    assert "expected: shape (3, 2)" in message and "got:      shape (2, 3)" in message


def test_check_raises_passes_on_the_right_exception_and_message():
    check_raises(int, ("x",), raises=ValueError, match="invalid literal")


def test_check_raises_reports_no_exception_wrong_type_and_wrong_message():
    assert "no exception raised" in failure(check_raises, abs, (-1,), raises=TypeError)
    assert "got:      returned int 1" in failure(check_raises, abs, (-1,), raises=TypeError)
    assert "ZeroDivisionError: division by zero" in failure(
        check_raises, lambda: 1 / 0, raises=TypeError)
    assert "wrong error message" in failure(check_raises, int, "x", raises=ValueError,
                                            match="nope")


def test_check_raises_lets_the_stub_speak_for_itself():
    def stub(x):
        raise NotImplementedError("exercise 02.1: write it")
    with pytest.raises(NotImplementedError, match="exercise 02.1"):
        check_raises(stub, 1, raises=TypeError)


def test_check_function_reports_the_first_wrong_case_with_its_arguments(capsys):
    cases = [((2.0,), 4.0), ((np.array([1.0, 3.0]),), [2.0, 6.0]), (("a",), "aa"),
             ((None,), TypeError)]
    check_function(lambda v: v * 2, cases, name="double", exercise="01.1")
    assert capsys.readouterr().out == "✓ 01.1 passed\n"
    message = failure(check_function, lambda v: v + 1, cases, name="double", exercise="01.1")
    assert message.startswith("01.1 double: wrong values\n  input:    double argument 1 = "
                              "float 2.0\n  expected: float 4.0\n  got:      float 3.0")


def test_check_function_keyword_inputs():
    check_function(lambda a, b: a - b, [({"a": 5, "b": 3}, 2)])
    assert "input:    b = int 3" in failure(check_function, lambda a, b: a + b,
                                             [({"a": 5, "b": 3}, 2)])


def test_exercise_block_prints_once_and_names_the_exercise_in_failures(capsys):
    with exercise("03.2"):
        check_equal(1, 1)
        check_close(2.0, 2.0)
    assert capsys.readouterr().out == "✓ 03.2 passed\n"
    with pytest.raises(ExerciseCheckFailed) as info:
        with exercise("03.2"):
            check_equal(1, 2, name="n")
    assert str(info.value).startswith("03.2 n: wrong values") and info.value.exercise == "03.2"
    assert capsys.readouterr().out == ""


def test_exercise_block_notes_the_exercise_on_other_errors():
    with pytest.raises(NotImplementedError) as info:
        with exercise("03.1"):
            raise NotImplementedError("exercise 03.1: write MyLinear")
    assert info.value.__notes__ == ["(while checking exercise 03.1)"]


def test_check_close_refuses_an_expected_value_it_cannot_compare():
    with pytest.raises(TypeError, match="use check_equal"):
        check_close(1, {"a": 1})
