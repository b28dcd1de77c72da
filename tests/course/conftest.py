"""Fixtures for the course tooling's specifications: the tiny fixture chapter, its
learner copy, and submissions made from that copy by replacing solution cells."""
import pytest

from course.grade import grade
from course.release import release
from course_fixtures import TINY_SOURCES, write_submission


def pytest_configure(config):
    config.addinivalue_line("markers", "batch: grades a 100-submission batch (about a minute)")
    config.addinivalue_line("markers", "binder_install: a full pip install of binder/ "
                                       "into a fresh virtual environment (minutes)")


@pytest.fixture(scope="session")
def learner_copy(tmp_path_factory):
    """The released learner copy of the fixture chapter (read-only: copy it to edit)."""
    out = tmp_path_factory.mktemp("released")
    release(TINY_SOURCES, out)
    return out / "01_tiny.ipynb"


@pytest.fixture
def submit(tmp_path, learner_copy):
    """``submit({"01.1": code}, name=..., edit=fn)``: a submission made from the learner
    copy, each given exercise's solution cell replaced by ``code``; ``edit(notebook)``
    may change anything else first.  Returns its path."""
    def make(solutions=None, name="alice/01_tiny.ipynb", edit=None):
        return write_submission(learner_copy, tmp_path / "submissions" / name, solutions,
                                edit)
    return make


@pytest.fixture
def grade_one(tmp_path):
    """Grade one submission against the fixture chapter; returns {exercise: Row}
    (the Submission itself is the ``.submission`` attribute of the returned dict)."""
    def run(path, source_dir=TINY_SOURCES, timeout=10):
        [graded] = grade(source_dir, [path], timeout=timeout, workdir=tmp_path)
        rows = Rows((row.exercise, row) for row in graded.rows)
        rows.submission = graded
        return rows
    return run


class Rows(dict):
    """Gradebook rows by exercise id, with the graded Submission attached."""
    submission = None
