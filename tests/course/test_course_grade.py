"""learntorch-course grade: the submission's solution cells, the source's checks.

Each spec grades real submissions (made from the released learner copy of the fixture
chapter) with nbval, in a kernel, as the command does."""
import csv
import json
import re
import subprocess
import sys

from course_fixtures import RIGHT, TINY_SOURCES
from course import gradebook
from course.grade import grade
from course.grading.judge import HIDDEN_FEEDBACK

WRONG_SQUARE = {**RIGHT, "01.2": "def square(x):\n    return x * 2\n"}


def statuses(rows):
    return {exercise: (row.status, row.points) for exercise, row in rows.items()}


def test_right_answers_earn_full_marks(submit, grade_one):
    rows = grade_one(submit(RIGHT))
    assert statuses(rows) == {"01.1": ("passed", 2), "01.2": ("passed", 1),
                              "01.3": ("passed", 1)}
    assert all(row.max_points == {"01.1": 2}.get(e, 1) for e, row in rows.items())


def test_a_wrong_answer_costs_its_exercise_with_specific_feedback(submit, grade_one):
    rows = grade_one(submit(WRONG_SQUARE))
    assert statuses(rows) == {"01.1": ("passed", 2), "01.2": ("failed", 0),
                              "01.3": ("passed", 1)}
    feedback = rows["01.2"].feedback
    assert feedback.startswith("check failed: ExerciseCheckFailed: 01.2 square(3.0): wrong values")
    assert "input:    x = float 3.0" in feedback and "expected: float 9.0" in feedback
    assert "got:      float 6.0" in feedback
    # the instructor's message numbers the cell as the learner's copy does (its 8th cell:
    # the hidden check before it is not in the learner's copy)
    assert rows["01.2"].message.startswith("check (cell 8) failed: ExerciseCheckFailed: 01.2")


def test_editing_or_deleting_check_cells_changes_nothing(tmp_path, submit):
    def edit_checks(change):
        def edit(notebook):
            for number, cell in enumerate(list(notebook["cells"])):
                if cell["metadata"].get("learntorch", {}).get("role") == "check":
                    change(notebook, cell)
        return edit

    def delete(notebook, cell):
        notebook["cells"].remove(cell)

    tampered = {
        "honest": submit(WRONG_SQUARE, name="honest/01_tiny.ipynb"),
        "emptied": submit(WRONG_SQUARE, name="emptied/01_tiny.ipynb", edit=edit_checks(
            lambda nb, cell: cell.update(source="pass"))),
        "deleted": submit(WRONG_SQUARE, name="deleted/01_tiny.ipynb",
                          edit=edit_checks(delete)),
        "unmarked": submit(WRONG_SQUARE, name="unmarked/01_tiny.ipynb", edit=edit_checks(
            lambda nb, cell: cell["metadata"].clear())),
        # a check cell re-marked as a second solution of its exercise: that solution
        # is then duplicated, which costs that exercise (and fools nothing)
        "remarked": submit(RIGHT, name="remarked/01_tiny.ipynb", edit=edit_checks(
            lambda nb, cell: cell["metadata"]["learntorch"].update(role="solution")
            if cell["metadata"]["learntorch"]["exercise"] == "01.3" else None)),
    }
    graded = grade(TINY_SOURCES, list(tampered.values()), timeout=10, jobs=2,
                   workdir=tmp_path)
    results = {s.name.split("/")[0]: {r.exercise: (r.status, r.points, r.message)
                                      for r in s.rows} for s in graded}
    for name in ("emptied", "deleted", "unmarked"):
        assert results[name] == results["honest"], name
    assert results["honest"]["01.2"][:2] == ("failed", 0)
    assert results["remarked"]["01.3"][:2] == ("duplicated", 0)
    assert results["remarked"]["01.1"][:2] == ("passed", 2)


def test_a_missing_or_duplicated_solution_cell_costs_only_that_exercise(submit, grade_one):
    def delete_solution(exercise_id):
        def edit(notebook):
            notebook["cells"] = [c for c in notebook["cells"] if c["metadata"].get(
                "learntorch", {}) != {"exercise": exercise_id, "role": "solution",
                                      "points": 1, "hint": "answer = 42"}]
        return edit

    rows = grade_one(submit(RIGHT, edit=delete_solution("01.3")))
    assert statuses(rows) == {"01.1": ("passed", 2), "01.2": ("passed", 1),
                              "01.3": ("missing", 0)}
    assert "no solution cell for exercise 01.3" in rows["01.3"].message

    def duplicate_solution(notebook):
        cells = notebook["cells"]
        at = next(i for i, c in enumerate(cells) if c["id"] == "ex2-solution")
        cells.insert(at, dict(cells[at], id="a-copy"))

    rows = grade_one(submit(RIGHT, edit=duplicate_solution))
    assert statuses(rows)["01.2"] == ("duplicated", 0)
    assert "2 solution cells for exercise 01.2" in rows["01.2"].message
    assert statuses(rows)["01.1"] == ("passed", 2)


def test_cells_are_matched_by_exercise_id_not_by_cell_id_or_position(submit, grade_one):
    def scramble(notebook):
        for number, cell in enumerate(notebook["cells"]):
            cell["id"] = f"renamed-{number}"
        notebook["cells"].reverse()

    rows = grade_one(submit(RIGHT, edit=scramble))
    assert statuses(rows) == {"01.1": ("passed", 2), "01.2": ("passed", 1),
                              "01.3": ("passed", 1)}


def test_a_failed_hidden_check_tells_the_learner_only_its_exercise(submit, grade_one):
    # right for the visible check's floats and arrays, wrong for the hidden check's int
    sneaky = {**RIGHT, "01.1": "def double(x):\n    return 2 * x if not isinstance(x, int) "
                               "else 0\n"}
    rows = grade_one(submit(sneaky))
    row = rows["01.1"]
    assert (row.status, row.points) == ("failed", 0)
    assert row.feedback == f"exercise 01.1: {HIDDEN_FEEDBACK}"
    # the instructor sees everything: which hidden check, its inputs, what was expected
    assert row.message.startswith("hidden check (cell 6 of the instructor source) failed: "
                                  "ExerciseCheckFailed: 01.1 double(21): wrong values")
    assert "expected: int 42" in row.message and "got:      int 0" in row.message
    hidden_source = 'check_equal(double(21), 42, name="double(21)")'
    assert hidden_source not in row.message


def test_the_chapter_is_found_by_metadata_or_by_name(tmp_path, submit):
    by_metadata = submit(RIGHT, name="renamed/my homework.ipynb")
    by_name = submit(RIGHT, name="plain/01_tiny-final.ipynb",
                     edit=lambda nb: nb["metadata"].pop("learntorch"))
    unknown = submit(RIGHT, name="lost/homework.ipynb",
                     edit=lambda nb: nb["metadata"].pop("learntorch"))
    broken = tmp_path / "broken" / "01_tiny.ipynb"
    broken.parent.mkdir()
    broken.write_text("{ this is not json")
    graded = grade(TINY_SOURCES, [by_metadata, by_name, unknown, broken], timeout=10, jobs=2,
                   workdir=tmp_path)
    by = {s.path.parent.name: s.rows for s in graded}
    assert [r.status for r in by["renamed"]] == ["passed"] * 3
    assert [r.status for r in by["plain"]] == ["passed"] * 3
    [lost] = by["lost"]
    assert (lost.status, lost.exercise) == ("error", "") and "cannot tell which chapter" in lost.message
    [unreadable] = by["broken"]
    assert unreadable.status == "error" and "not a readable notebook" in unreadable.message


def test_the_command_writes_gradebook_csv_json_feedback_and_a_digest(tmp_path, submit):
    right, wrong = submit(RIGHT, name="alice/01_tiny.ipynb"), submit(WRONG_SQUARE,
                                                                      name="bob/01_tiny.ipynb")
    out = tmp_path / "grades"
    done = subprocess.run([sys.executable, "-m", "course.cli", "grade", "--source",
                           str(TINY_SOURCES), str(right), str(wrong), "--out", str(out),
                           "--timeout", "10", "--jobs", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "graded 2 submissions (5 of 6 exercises passed, 7 points)" in done.stdout
    with open(out / "gradebook.csv", newline="") as stream:
        table = list(csv.DictReader(stream))
    assert list(table[0]) == ["submission", "student", "chapter", "exercise", "points",
                              "max_points", "student_points", "student_max_points", "status",
                              "message"]
    as_json = json.loads((out / "gradebook.json").read_text())
    assert [{k: str(v) for k, v in row.items()} for row in as_json] == table
    assert [(r["student"], r["exercise"], r["points"], r["student_points"],
             r["student_max_points"], r["status"]) for r in table] == [
        ("alice", "01.1", "2", "4", "4", "passed"), ("alice", "01.2", "1", "4", "4", "passed"),
        ("alice", "01.3", "1", "4", "4", "passed"), ("bob", "01.1", "2", "3", "4", "passed"),
        ("bob", "01.2", "0", "3", "4", "failed"), ("bob", "01.3", "1", "3", "4", "passed")]
    feedback = (out / "feedback" / "bob" / "01_tiny.md").read_text()
    assert "Chapter 01_tiny: 3 of 4 points." in feedback
    assert "## exercise 01.2: failed (0/1)" in feedback and "got:      float 6.0" in feedback
    assert (out / "feedback" / "alice" / "01_tiny.md").exists()
    [digest] = re.findall(r"gradebook digest: (sha256:[0-9a-f]{64})", done.stdout)
    assert gradebook.verify(out, digest) == []


def test_grading_refuses_missing_files_and_bad_sources(tmp_path):
    done = subprocess.run([sys.executable, "-m", "course.cli", "grade", "--source",
                           str(TINY_SOURCES), str(tmp_path / "nope.ipynb"), "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no such file" in done.stderr
