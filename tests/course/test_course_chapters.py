"""Invariants for every chapter source: the tiny fixture chapter and every notebook in
course/solutions/ (chapters written later are covered without touching this file).

- the source runs top to bottom under nbval (lax mode, this environment);
- graded as a submission, the source earns full marks;
- the untouched learner copy earns zero on every exercise and raises nowhere outside
  the exercises: proof that every check tells the stub from a solution;
- every exercise has at least one check call whose expected value grading takes from
  the instructor's run (a *trusted* call, course/grading/taint.py): a submission that
  lies about its own values cannot pass it;
- chapters/ is exactly the release of course/solutions/ (fresh, byte for byte).
"""
import subprocess
import sys
from pathlib import Path

import pytest

from course_fixtures import FIXTURES, TINY_SOURCES
from course.grade import grade
from course.grading.plan import Plan
from course.notebook import chapter_sources
from course.release import release

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "course" / "solutions"
CHAPTERS = ROOT / "chapters"
SOURCES = chapter_sources(TINY_SOURCES) + chapter_sources(FIXTURES / "blocks") + \
    chapter_sources(SOLUTIONS)
IDS = [f"{path.parent.name}/{path.name}" for path in SOURCES]
REGENERATE = "learntorch-course release course/solutions chapters"


def test_course_solutions_holds_the_chapters():
    assert chapter_sources(SOLUTIONS), (
        "course/solutions/ has no chapter sources (NN_topic.ipynb): the course has no "
        "chapters, so the invariants below check only the fixture chapter")


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_the_source_passes_nbval(source, tmp_path):
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir",
                           str(tmp_path), "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                           "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout", "300",
                           str(source)], capture_output=True, text=True, timeout=1800,
                          cwd=source.parent)
    assert done.returncode == 0, f"{source.name} fails under nbval:\n{done.stdout[-4000:]}"


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_the_source_graded_as_a_submission_earns_full_marks(source, tmp_path):
    [graded] = grade(source.parent, [source], timeout=300, workdir=tmp_path)
    assert graded.rows, f"{source.name} has no exercises"
    wrong = [(r.exercise, r.status, r.message) for r in graded.rows
             if r.status != "passed" or r.points != r.max_points]
    assert not wrong, f"{source.name}: the instructor's own solutions lose points: {wrong}"


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_the_untouched_learner_copy_earns_zero_and_raises_only_in_exercises(source, tmp_path):
    release(source.parent, tmp_path / "released")
    copy = tmp_path / "released" / source.name
    [graded] = grade(source.parent, [copy], timeout=300, workdir=tmp_path)
    earning = [(r.exercise, r.status) for r in graded.rows if r.points or r.status == "passed"]
    assert not earning, (f"{source.name}: these exercises' checks pass on the stub, so they "
                         f"cannot tell a solution from no solution: {earning}")
    assert all(r.status == "failed" for r in graded.rows), [(r.exercise, r.status, r.message)
                                                            for r in graded.rows]
    elsewhere = [(cell.index + 1, cell.outcome, cell.error) for cell in graded.cells
                 if cell.exercise is None and cell.outcome != "passed"]
    assert not elsewhere, (f"{source.name}: cells outside the exercises fail in the learner "
                           f"copy (cell number, outcome, error): {elsewhere}")


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_every_exercise_has_a_check_call_graded_against_the_instructors_run(source):
    plan = Plan(source)
    untrusted = [exercise.id for exercise in plan.exercises
                 if not any(not site.relational for site in plan.sites.values()
                            if site.cell in exercise.checks + exercise.hidden_checks)]
    assert not untrusted, (
        f"{source.name}: exercises {untrusted} compare only values their own code made "
        f"(relational checks), which a lying submission can fake; give each a check "
        f"against a fixed or engine-computed value, computed before the learner's code "
        f"runs on it")


def test_chapters_are_the_fresh_release_of_the_sources(tmp_path):
    if not chapter_sources(SOLUTIONS):
        pytest.fail("course/solutions/ has no chapter sources to release")
    release(SOLUTIONS, tmp_path)
    fresh = {path.name: path.read_bytes() for path in tmp_path.glob("*.ipynb")}
    committed = {path.name: path.read_bytes() for path in CHAPTERS.glob("*.ipynb")}
    assert sorted(committed) == sorted(fresh), (
        f"chapters/ holds {sorted(committed)} but the sources release {sorted(fresh)}; "
        f"run `{REGENERATE}` (and delete chapters that have no source)")
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"chapters/{stale} are stale: run `{REGENERATE}` and commit the result"
