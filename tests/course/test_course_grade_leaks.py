"""Feedback never leaks: not a hidden check, not a solution, not a path of the
grading machine -- even when the submission tries to smuggle them out.

The smuggler records the text of every cell it is sent (an input transformer that
changes nothing), then fails a visible check with an exception whose message holds
all it gathered: those cells, the course's instructor sources and authoring scripts
if it can read them, and every path it can see.  The feedback must carry none of the
secrets, and a failed hidden check only its exercise and a fixed sentence.
"""
import pytest

from course_fixtures import RIGHT, TINY_SOURCES, read_gradebook, run_grader, write_submission
from course.grading.judge import HIDDEN_FEEDBACK, VISIBLE_LIMIT

RECORD = '''
SEEN = []
def remember(lines):
    SEEN.append("".join(lines))
    return lines
get_ipython().input_transformers_cleanup.append(remember)
def double(x):
    return 0 if isinstance(x, int) else 2 * x
'''

SMUGGLE = '''
def square(x):
    import course, glob, os, sys
    found = list(SEEN)
    root = os.path.dirname(os.path.dirname(course.__file__))
    for pattern in ("course/solutions/*.ipynb", "course/authoring/*.py", "tests/**/*.ipynb"):
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            try:
                found.append(open(path).read())
            except OSError:
                pass
    found += [course.__file__, sys.executable, sys.prefix, os.getcwd(), "{source}"]
    raise ValueError(" | ".join(found))
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory, learner_copy):
    folder = tmp_path_factory.mktemp("leaks")
    out = folder / "graded"
    smuggler = {**RIGHT, "01.1": RECORD, "01.2": SMUGGLE.format(source=TINY_SOURCES)}
    path = write_submission(learner_copy, folder / "inbox" / "smuggler" / "01_tiny.ipynb",
                            smuggler)
    done = run_grader("--source", TINY_SOURCES, path, "--out", out, "--timeout", "20")
    assert done.returncode == 0, done.stderr
    [rows] = read_gradebook(out).values()
    feedback = (out / "feedback" / "01_tiny.md").read_text()
    return rows, feedback


def test_a_failed_hidden_check_shows_only_its_exercise_and_a_fixed_sentence(graded):
    rows, feedback = graded
    assert rows["01.1"]["status"] == "failed"
    assert f"exercise 01.1: {HIDDEN_FEEDBACK}" in feedback
    assert "double(21)" not in feedback.split("## exercise 01.2")[0]


def test_a_visible_check_message_is_capped(graded):
    rows, feedback = graded
    section = feedback.split("## exercise 01.2")[1].split("## exercise 01.3")[0]
    assert rows["01.2"]["status"] == "failed" and "ValueError" in section
    assert len(section) < VISIBLE_LIMIT + 200


def test_nothing_secret_is_smuggled_into_the_feedback(graded):
    _, feedback = graded
    # the hidden check as written (its expected value withheld from the submission)
    assert 'check_equal(double(21), 42' not in feedback
    assert "42, name=" not in feedback
    for secret in ("BEGIN SOLUTION", "END SOLUTION", "hidden-check", str(TINY_SOURCES)):
        assert secret not in feedback


def test_no_path_of_the_grading_machine_appears(graded):
    import sys

    import course
    _, feedback = graded
    from pathlib import Path
    for path in (sys.prefix, sys.base_prefix, str(Path(course.__file__).parents[1])):
        assert path not in feedback
