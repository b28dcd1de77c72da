"""Fixtures for the course tooling's specifications: the tiny fixture chapter, its
learner copy, and submissions made from that copy by replacing solution cells."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from course.grade import grade
from course.release import release

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY_SOURCES = FIXTURES / "chapters"
# the fixture chapter's answers, as a learner would write them
RIGHT = {"01.1": "def double(x):\n    return x + x\n",
         "01.2": "def square(x):\n    return x ** 2\n",
         "01.3": "answer = 6 * 7\n"}


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


def write_submission(learner_copy, path, solutions=None, edit=None):
    """A submission at ``path``: the learner copy with each given exercise's solution
    cell replaced by its code (``edit(notebook)`` may change anything else first)."""
    notebook = json.loads(Path(learner_copy).read_text())
    if edit is not None:
        edit(notebook)
    for cell in notebook["cells"]:
        mark = cell["metadata"].get("learntorch", {})
        if mark.get("role") == "solution" and mark["exercise"] in (solutions or {}):
            cell["source"] = solutions[mark["exercise"]]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook))
    return path


def run_grader(*arguments, timeout=600):
    """``learntorch-course grade ...`` as an instructor types it; the finished process."""
    return subprocess.run([sys.executable, "-m", "course.cli", "grade", *map(str, arguments)],
                          capture_output=True, text=True, timeout=timeout)


def read_gradebook(out):
    """The gradebook's rows as {submission: {exercise: row dict}}."""
    rows = json.loads((Path(out) / "gradebook.json").read_text())
    table = {}
    for row in rows:
        table.setdefault(row["submission"], {})[row["exercise"]] = row
    return table


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
