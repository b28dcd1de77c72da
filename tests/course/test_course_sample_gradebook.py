"""A sample batch, graded through the command an instructor types, kept as an artifact.

Eight learners hand in the fixture chapter: one right, one wrong, one who weakened a
check cell, one who deleted a solution cell, one who pasted a solution twice, one
whose solution loops forever, one whose kernel dies, one who calls sys.exit().  The
gradebook, its JSON twin and the feedback files are copied to
test-artifacts/course/sample-gradebook/ so that a person can read what the tool
writes; each row is also checked here.
"""
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

from course_fixtures import RIGHT, TINY_SOURCES

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "course" / "sample-gradebook"


def _solution_cells(notebook, exercise):
    return [c for c in notebook["cells"]
            if c["metadata"].get("learntorch", {}).get("role") == "solution"
            and c["metadata"]["learntorch"]["exercise"] == exercise]


def _weaken_check(notebook):
    for cell in notebook["cells"]:
        mark = cell["metadata"].get("learntorch", {})
        if mark.get("role") == "check" and mark.get("exercise") == "01.1":
            cell["source"] = "pass  # the check is gone\n"


def _delete_solution(notebook):
    notebook["cells"].remove(_solution_cells(notebook, "01.2")[0])


def _duplicate_solution(notebook):
    cell = _solution_cells(notebook, "01.3")[0]
    notebook["cells"].insert(notebook["cells"].index(cell), json.loads(json.dumps(cell)))


LEARNERS = {
    # name: (solutions replacing the stubs, other edits)
    "ada_right": (RIGHT, None),
    "ben_wrong": ({**RIGHT, "01.1": "def double(x):\n    return x + 2\n"}, None),
    "cy_tampered": ({**RIGHT, "01.1": "def double(x):\n    return 0\n"}, _weaken_check),
    "dee_missing": (RIGHT, _delete_solution),
    "eve_duplicated": (RIGHT, _duplicate_solution),
    "fay_loops": ({**RIGHT, "01.2": "def square(x):\n    while True:\n        pass\n"}, None),
    "gus_crashes": ({**RIGHT, "01.1": "import os\nos._exit(1)\n"}, None),
    "hal_exits": ({**RIGHT, "01.3": "import sys\nsys.exit(0)\n"}, None),
}

EXPECTED = {  # (learner, exercise) -> (status, points); anything not listed: passed, full marks
    ("ben_wrong", "01.1"): ("failed", 0),
    ("cy_tampered", "01.1"): ("failed", 0),
    ("dee_missing", "01.2"): ("missing", 0),
    ("eve_duplicated", "01.3"): ("duplicated", 0),
    ("fay_loops", "01.2"): ("timeout", 0),
    ("gus_crashes", "01.1"): ("crashed", 0),
    ("hal_exits", "01.3"): ("failed", 0),
}
MAX_POINTS = {"01.1": 2, "01.2": 1, "01.3": 1}


def _submission(learner_copy, folder, name, solutions, edit):
    notebook = json.loads(learner_copy.read_text())
    if edit is not None:
        edit(notebook)
    for cell in notebook["cells"]:
        mark = cell["metadata"].get("learntorch", {})
        if mark.get("role") == "solution" and mark["exercise"] in solutions:
            cell["source"] = solutions[mark["exercise"]]
    path = folder / name / "01_tiny.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(notebook))
    return path


def test_a_mixed_batch_gives_each_learner_what_they_earned(tmp_path, learner_copy):
    paths = [_submission(learner_copy, tmp_path / "inbox", name, *spec)
             for name, spec in LEARNERS.items()]
    out = tmp_path / "graded"
    done = subprocess.run(
        [sys.executable, "-m", "course.cli", "grade", "--source", str(TINY_SOURCES),
         *map(str, paths), "--out", str(out), "--timeout", "20", "--jobs", "2"],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out / "gradebook.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["submission", "student", "chapter", "exercise", "points",
                             "max_points", "student_points", "student_max_points", "status",
                             "message"]
    got = {}
    for row in rows:
        learner = next(name for name in LEARNERS if name in row["submission"])
        got[learner, row["exercise"]] = (row["status"], float(row["points"]))
    for learner in LEARNERS:
        for exercise, most in MAX_POINTS.items():
            status, points = EXPECTED.get((learner, exercise), ("passed", most))
            assert got[learner, exercise] == (status, points), (learner, exercise, rows)
    assert json.loads((out / "gradebook.json").read_text()) is not None
    # kept for people to read; the folder is git-ignored
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    shutil.copytree(out, ARTIFACTS)
