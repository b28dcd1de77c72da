"""What the course tooling's specifications share: the tiny fixture chapter, its right
answers, and helpers that write a submission, run the grader and read its gradebook.

(A module of its own, not conftest.py: tests import these names, and several test folders
have a conftest.py, so ``from conftest import`` could find another folder's.)"""
import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY_SOURCES = FIXTURES / "chapters"
# the fixture chapter's answers, as a learner would write them
RIGHT = {"01.1": "def double(x):\n    return x + x\n",
         "01.2": "def square(x):\n    return x ** 2\n",
         "01.3": "answer = 6 * 7\n"}



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
