"""A class-sized batch: 100 submissions of the tiny fixture chapter, graded with
``jobs=2``, finish in a couple of minutes whatever the individual submissions do, and
every submission gets exactly the points its answers earn.

A right answer never loses a check it passed: the grader reads each cell's result
from the reply to the request it sent for that cell, and the checks' observations
from a pipe that drops nothing, so a check is "not run" only when its kernel died or
ran out of time -- which the row then says."""
import json
import time

import pytest

from course_fixtures import RIGHT, TINY_SOURCES
from course import gradebook
from course.grade import grade
from course.release import release

KINDS = {
    "right": RIGHT,
    "wrong": {**RIGHT, "01.2": "def square(x):\n    return x + x\n"},
    "untouched": {},
    "syntax_error": {**RIGHT, "01.1": "def double(x) return 2 * x\n"},
    "crash": {**RIGHT, "01.3": "import os\nos._exit(1)\n"},
    "loop": {**RIGHT, "01.3": "while True:\n    pass\n"},
}
# mostly ordinary submissions, as in a real class, with a few misbehaving ones
MIX = ["right"] * 60 + ["wrong"] * 20 + ["untouched"] * 12 + ["syntax_error"] * 5 + \
      ["crash"] * 2 + ["loop"]
EXPECTED_POINTS = {"right": 4, "wrong": 3, "untouched": 0, "syntax_error": 2, "crash": 3,
                   "loop": 3}


@pytest.mark.batch
def test_a_hundred_submissions_are_graded_in_parallel(tmp_path, capsys):
    [copy] = release(TINY_SOURCES, tmp_path / "released")
    paths = []
    for number, kind in enumerate(MIX):
        notebook = json.loads(copy.read_text())
        for cell in notebook["cells"]:
            mark = cell["metadata"].get("learntorch", {})
            if mark.get("role") == "solution" and mark["exercise"] in KINDS[kind]:
                cell["source"] = KINDS[kind][mark["exercise"]]
        path = tmp_path / "submissions" / f"{number:03d}-{kind}" / "01_tiny.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(notebook))
        paths.append(path)
    assert len(paths) == 100
    start = time.monotonic()
    # a cell limit that a loaded CI machine never reaches by accident, while the one
    # looping submission still costs only its 30 s
    graded = grade(TINY_SOURCES, paths, timeout=30, jobs=2, workdir=tmp_path)
    seconds = time.monotonic() - start
    with capsys.disabled():
        print(f"\n100 submissions graded in {seconds:.0f} s with jobs=2")
    rows = [row for submission in graded for row in submission.rows]
    gradebook.write(rows, tmp_path / "out")
    assert len(graded) == 100 and len(rows) == 300
    for submission in graded:
        kind = submission.path.parent.name.split("-", 1)[1]
        assert sum(r.points for r in submission.rows) == EXPECTED_POINTS[kind], (
            submission.name, [(r.exercise, r.status, r.message) for r in submission.rows])
    assert len(list((tmp_path / "out" / "feedback").rglob("*.md"))) == 100
    # generous for a loaded 2-core machine; about a minute when it is quiet
    assert seconds < 240
