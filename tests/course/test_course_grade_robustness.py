"""Runaway and crashing submissions cost only the exercise they happen in.

All the misbehaving submissions are graded in one batch (two parallel pytest
processes, a 10-second cell limit), as an instructor's batch would be; each spec then
reads its submission's rows.  A timeout or a dead kernel makes grading run the
notebook again with that exercise stubbed, so the others are still graded."""
import json
import time

import pytest

from course_fixtures import RIGHT, TINY_SOURCES
from course.grade import grade
from course.release import release

MISBEHAVING = {
    "loop_in_solution_cell": {"01.1": "while True:\n    pass\n"},
    "loop_in_function": {"01.1": "def double(x):\n    while True:\n        pass\n"},
    "os_exit": {"01.2": "import os\nos._exit(1)\n"},
    "segfault": {"01.2": "import ctypes\nctypes.string_at(0)\n"},
    "crash_in_function": {"01.2": "def square(x):\n    import os\n    os._exit(3)\n"},
    "sys_exit": {"01.1": "import sys\nsys.exit(3)\n"},
    "two_loops": {"01.1": "while True:\n    pass\n", "01.3": "while True:\n    pass\n"},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robustness")
    [copy] = release(TINY_SOURCES, folder / "released")
    paths = []
    for name, solutions in MISBEHAVING.items():
        notebook = json.loads(copy.read_text())
        for cell in notebook["cells"]:
            mark = cell["metadata"].get("learntorch", {})
            if mark.get("role") == "solution":
                cell["source"] = {**RIGHT, **solutions}[mark["exercise"]]
        path = folder / name / "01_tiny.ipynb"
        path.parent.mkdir()
        path.write_text(json.dumps(notebook))
        paths.append(path)
    start = time.monotonic()
    # a cell limit a loaded CI machine never reaches by accident (the loops still hit it)
    results = grade(TINY_SOURCES, paths, timeout=10, jobs=2, workdir=folder)
    print(f"graded {len(paths)} misbehaving submissions in {time.monotonic() - start:.0f} s")
    return {s.path.parent.name: s for s in results}


def outcome(submission):
    return {row.exercise: (row.status, row.points) for row in submission.rows}


@pytest.mark.parametrize("name", ["loop_in_solution_cell", "loop_in_function"])
def test_an_infinite_loop_costs_only_its_exercise(graded, name):
    submission = graded[name]
    assert outcome(submission) == {"01.1": ("timeout", 0), "01.2": ("passed", 1),
                                   "01.3": ("passed", 1)}
    message = next(r.message for r in submission.rows if r.exercise == "01.1")
    assert "ran longer than the 10 s limit for one cell" in message
    assert "graded again without this solution" in message
    assert submission.runs == 2


@pytest.mark.parametrize("name", ["os_exit", "segfault", "crash_in_function"])
def test_a_crashing_kernel_costs_only_its_exercise(graded, name):
    submission = graded[name]
    assert outcome(submission) == {"01.1": ("passed", 2), "01.2": ("crashed", 0),
                                   "01.3": ("passed", 1)}
    message = next(r.message for r in submission.rows if r.exercise == "01.2")
    assert "killed the kernel" in message
    # the stubbed re-run got every later cell through a live kernel
    assert all(cell.outcome is not None for cell in submission.cells)


def test_sys_exit_is_only_an_exception_in_its_cell(graded):
    submission = graded["sys_exit"]
    assert outcome(submission) == {"01.1": ("failed", 0), "01.2": ("passed", 1),
                                   "01.3": ("passed", 1)}
    assert "your solution cell raised SystemExit: 3" in submission.rows[0].feedback
    assert submission.runs == 1


def test_two_runaway_exercises_are_stubbed_one_after_the_other(graded):
    submission = graded["two_loops"]
    assert outcome(submission) == {"01.1": ("timeout", 0), "01.2": ("passed", 1),
                                   "01.3": ("timeout", 0)}
    # 01.3 is the last exercise: nothing after it to grade, so no third run
    assert submission.runs == 2
