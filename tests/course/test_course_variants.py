"""Every exercise's visible check tells right from wrong (DESIGN.md, section 6).

Each chapter source has a variant specification beside it
(``course/solutions/variants/NN_topic.py``, see ``course/variants.py``): correct
solutions written differently, which the visible check must pass, and the mistakes the
text warns about plus the common ones, which it must fail with feedback naming the
mistake.  One process per chapter runs them all (about a minute each).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_fixtures import TINY_SOURCES
from course.notebook import chapter_sources
from course.variants import (Variant, correct, edited, load_spec, mistake, run_chapter,
                             spec_path, spec_problems)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = chapter_sources(ROOT / "course" / "solutions")
TINY = TINY_SOURCES / "01_tiny.ipynb"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_exercise_has_correct_variants_and_mistakes(source):
    assert spec_path(source).exists(), (
        f"{source.name} has no variant specification: write {spec_path(source).relative_to(ROOT)} "
        f"(see course/variants.py)")
    assert spec_problems(source, load_spec(source)) == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_visible_checks_judge_every_variant_as_specified(source, tmp_path):
    report = tmp_path / "variants.json"
    done = subprocess.run([sys.executable, "-m", "course.variants", str(source), "--json",
                           str(report)], cwd=ROOT, capture_output=True, text=True, timeout=1500,
                          env=_env())
    assert report.exists(), f"the variants of {source.name} did not run:\n{done.stdout[-3000:]}" \
                            f"\n{done.stderr[-3000:]}"
    results = json.loads(report.read_text())["results"]
    assert results, f"{source.name}: no variant was tried"
    wrong = [f"{r['exercise']} {r['kind']} {r['title']!r}: {r['why']}" for r in results
             if not r["as_specified"]]
    assert not wrong, f"{source.name}: visible checks that misjudge a variant:\n" + "\n".join(wrong)


def _env():
    import os
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}


# ---- the harness itself --------------------------------------------------------------------

def test_the_harness_passes_right_answers_and_fails_wrong_ones_with_their_feedback():
    results = run_chapter(TINY)
    assert [(r.exercise, r.kind, r.outcome, r.as_specified) for r in results] == [
        ("01.1", "correct", "passed", True), ("01.1", "correct", "passed", True),
        ("01.1", "mistake", "ExerciseCheckFailed", True),
        ("01.2", "correct", "passed", True), ("01.2", "correct", "passed", True),
        ("01.2", "mistake", "ExerciseCheckFailed", True),
        ("01.3", "correct", "passed", True), ("01.3", "correct", "passed", True),
        ("01.3", "mistake", "ExerciseCheckFailed", True)]
    assert "double" in results[2].message and "wrong values" in results[2].message


def test_the_harness_reports_a_variant_the_checks_misjudge():
    spec = {"01.1": [correct("really a mistake", "def double(x):\n    return x + 2\n"),
                     mistake("really right", "def double(x):\n    return 2 * x\n",
                             feedback=["double"]),
                     mistake("feedback that never comes", "def double(x):\n    return x\n",
                             feedback=["off by a factor of two"])]}
    results = run_chapter(TINY, spec)
    whys = [r.why for r in results]
    assert not any(r.as_specified for r in results)
    assert whys[0].startswith("a correct variant must pass the visible check; it ended with "
                              "ExerciseCheckFailed")
    assert whys[1] == "a mistake must fail the visible check, and it passed"
    assert whys[2] == "the feedback does not say ['off by a factor of two']"


def test_variants_do_not_leak_into_each_other():
    spec = {"01.1": [correct("defines a helper", "helper = 'leaked'\n"
                             "def double(x):\n    return x * 2\n"),
                     correct("cannot see that helper", "def double(x):\n"
                             "    assert 'helper' not in globals()\n    return 2 * x\n")]}
    results = run_chapter(TINY, spec)
    assert [r.as_specified for r in results] == [True, True], [r.why for r in results]


def test_a_specification_lists_every_exercise_with_enough_variants_of_each_kind():
    spec = {"01.1": [correct("one", "def double(x):\n    return 2 * x\n")],
            "09.9": []}
    assert spec_problems(TINY, spec) == [
        "09.9: no such exercise in 01_tiny.ipynb",
        "01.1: 1 correct variants, at least 2 needed", "01.1: 0 mistakes, at least 1 needed",
        "01.2: 0 correct variants, at least 2 needed", "01.2: 0 mistakes, at least 1 needed",
        "01.3: 0 correct variants, at least 2 needed", "01.3: 0 mistakes, at least 1 needed"]
    assert isinstance(mistake("m", "x = 1", feedback="x"), Variant)
    with pytest.raises(ValueError, match="feedback"):
        mistake("silent", "x = 1", feedback=[])


def test_an_edited_variant_changes_the_one_place_named_and_refuses_an_ambiguous_edit():
    base = "def f(x):\n    return x + 1\n"
    assert edited(base, ("x + 1", "x - 1")) == "def f(x):\n    return x - 1\n"
    with pytest.raises(ValueError, match="stands 0 times"):
        edited(base, ("x * 2", "x"))
    with pytest.raises(ValueError, match="stands 2 times"):
        edited(base, ("x", "y"))
