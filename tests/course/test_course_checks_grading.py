"""The checks under grading: every comparison goes through ``course.checks._verdict``,
which in a submission's kernel only reports what the learner's code gave, and in the
instructor's run reports what it compared as well as judging it.

The reports are read back here exactly as the grader reads them
(``course.grading.kernel.read_record``)."""
import os

import pytest

from course import checks
from course.checks import (ExerciseCheckFailed, check_close, check_equal, check_function,
                           check_raises, check_shape)
from course.grading.kernel import read_record

WITHHELD = checks._WITHHELD


@pytest.fixture
def grading():
    """Put this process's checks in a grading mode; yields ``(set_mode, records)``."""
    reader, writer = os.pipe()
    os.set_blocking(reader, False)

    def set_mode(mode):
        checks._grading.mode, checks._grading.channel = mode, writer

    def records():
        data = b""
        while True:
            try:
                chunk = os.read(reader, 1 << 20)
            except BlockingIOError:
                break
            data += chunk
        return [read_record(line)["check"] for line in data.splitlines()]
    yield set_mode, records
    checks._grading.mode, checks._grading.channel, checks._grading.site = None, None, None
    os.close(reader)
    os.close(writer)


def test_in_a_submission_a_check_only_reports_what_the_learners_code_gave(grading):
    set_mode, records = grading
    set_mode("sandbox")
    check_close(2.0, WITHHELD, name="double(1.0)", inputs={"x": 1.0})   # no verdict here
    [record] = records()
    assert (record["kind"], record["name"], record["expected"]) == ("close", "double(1.0)",
                                                                     None)
    assert record["actual"]["describe"] == "float 2.0"
    assert record["inputs"] == "  input:    x = float 1.0\n"


def test_in_a_submission_a_check_that_has_its_expected_value_still_judges(grading):
    # a teaching cell's check, or a relational one: the cell goes on as the learner's did
    set_mode, records = grading
    set_mode("sandbox")
    with pytest.raises(ExerciseCheckFailed, match="wrong values"):
        check_equal(1, 2, name="n")
    [record] = records()
    assert record["expected"]["describe"] == "int 2"


def test_in_the_instructors_run_a_check_reports_and_judges(grading):
    set_mode, records = grading
    set_mode("trusted")
    check_shape([[1, 2]], (1, 2), name="m")
    with pytest.raises(ExerciseCheckFailed):
        check_close(1.0, 2.0, name="f(1)", atol=0.1)
    passed, failed = records()
    assert passed["expected"] == {"shape": [1, 2]} and passed["failure"] is None
    assert failed["options"] == {"atol": 0.1, "rtol": 1e-5, "check_dtype": False}
    assert failed["failure"].startswith("f(1): wrong values")


def test_each_observation_names_the_check_call_it_came_from(grading):
    set_mode, records = grading
    set_mode("sandbox")
    checks._at_site(7, check_function)(abs, [((-1,), WITHHELD), ((2,), WITHHELD)])
    checks._at_site(8, check_equal)(1, WITHHELD)
    assert [(r["site"], r["kind"]) for r in records()] == [(7, "call"), (7, "call"),
                                                           (8, "equal")]


def test_in_a_submission_what_a_call_raised_is_reported_not_raised(grading):
    set_mode, records = grading
    set_mode("sandbox")

    def stub(x):
        raise NotImplementedError("exercise 01.1: write it")
    check_raises(stub, (1,), raises=WITHHELD)
    check_function(stub, [((1,), WITHHELD)])
    raised, called = records()
    assert raised["kind"] == "raises" and raised["actual"]["raised"]["name"] == \
        "NotImplementedError"
    assert "builtins.NotImplementedError" in called["actual"]["raised"]["types"]


def test_the_checks_declare_which_arguments_grading_withholds():
    assert {name: getattr(checks, name)._learntorch_withheld for name in checks.__all__
            if name.startswith("check_")} == {
        "check_close": ("expected",), "check_equal": ("expected",),
        "check_shape": ("expected_shape",), "check_raises": ("raises", "match"),
        "check_function": ("cases[*][1]",),
        # the "how" checks state a rule (names, calls, what a message must mention), not an
        # expected value: what they observe goes to the grader, and nothing is withheld
        "check_not_used": (), "check_not_called": (), "check_error_mentions": (),
        "check_saved_for_backward": ()}


def test_a_new_check_built_on_the_existing_ones_is_graded_without_more(grading):
    @checks._reports
    def check_sorted(values, expected, *, name="sorted values"):
        check_equal(sorted(values), expected, name=name)
    assert check_sorted._learntorch_withheld == ("expected",)
    set_mode, records = grading
    set_mode("sandbox")
    checks._at_site(3, check_sorted)([3, 1, 2], WITHHELD)
    [record] = records()
    assert (record["site"], record["actual"]["describe"]) == (3, "list [1, 2, 3]")
