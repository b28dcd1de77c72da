"""A right answer written differently from the instructor's keeps its points.

Grading compares a submission with the instructor's run, so two things could fail a
right answer that merely differs: a check whose reference is built from the
learner's own objects (other random weights than the instructor's), and random
inputs that shift because the learner's code drew a different number of random
values before them.  The first kind of check is relational (both sides from the
submission's run); every cell that is not a solution starts with the random
generators where the instructor's run had them.

The source below has one exercise of each kind; the instructor's solution draws its
random numbers one way, the variant another (and draws extra ones on the side)."""
import json

import pytest

from course.grade import grade

SETUP = ("import numpy as np\n"
         "from course.checks import check_close, check_shape, exercise\n")
LAYER = ("class Layer:\n"
         "    def __init__(self, n):\n"
         "        self.weight = np.random.uniform(-1, 1, size=n)\n"
         "    def __call__(self, x):\n"
         "        return x * self.weight\n")
LAYER_VARIANT = ("np.random.random(7)   # extra draws on the side\n"
                 "class Layer:\n"
                 "    def __init__(self, n):\n"
                 "        self.weight = 2 * np.random.random(n)[::-1] - 1\n"
                 "    def __call__(self, x):\n"
                 "        return self.weight * x\n")
SCALE = "def scale(x, factor):\n    return x * factor\n"
SCALE_VARIANT = "np.random.random(3)\ndef scale(x, factor):\n    return factor * x\n"
CHECKS = {
    "01.1": ("with exercise('01.1'):\n"
             "    layer = Layer(4)\n"
             "    x = np.random.normal(size=4)\n"
             "    check_shape(layer(x), (4,), name='Layer(4)(x)')\n"
             "    check_close(layer(x), x * layer.weight, name='Layer(4)(x) against its weight')\n"),
    "01.2": ("with exercise('01.2'):\n"
             "    x = np.random.normal(size=3)\n"
             "    expected = 2.0 * x\n"
             "    check_close(scale(x, 2.0), expected, name='scale(x, 2.0)')\n"),
}


def _cell(number, code, mark=None):
    return {"cell_type": "code", "id": f"c{number}", "execution_count": None, "outputs": [],
            "metadata": {"learntorch": mark} if mark else {}, "source": code}


@pytest.fixture
def chapter(tmp_path):
    cells = [_cell(0, SETUP)]
    for exercise, answer in (("01.1", LAYER), ("01.2", SCALE)):
        cells.append(_cell(len(cells), f"### BEGIN SOLUTION\n{answer}### END SOLUTION\n",
                           {"exercise": exercise, "role": "solution"}))
        cells.append(_cell(len(cells), CHECKS[exercise], {"exercise": exercise,
                                                          "role": "check"}))
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "01_variants.ipynb").write_text(json.dumps(
        {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    return sources


def _submission(tmp_path, name, answers):
    notebook = json.loads((tmp_path / "sources" / "01_variants.ipynb").read_text())
    for cell in notebook["cells"]:
        mark = cell["metadata"].get("learntorch", {})
        if mark.get("role") == "solution":
            cell["source"] = answers[mark["exercise"]]
    path = tmp_path / name / "01_variants.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(notebook))
    return path


def test_a_right_answer_drawing_its_random_numbers_otherwise_keeps_its_points(tmp_path,
                                                                             chapter):
    paths = [_submission(tmp_path, "variant", {"01.1": LAYER_VARIANT, "01.2": SCALE_VARIANT}),
             _submission(tmp_path, "wrong", {"01.1": LAYER.replace("x * self.weight", "x"),
                                             "01.2": SCALE.replace("x * factor", "x + factor")})]
    variant, wrong = grade(chapter, paths, timeout=30, jobs=2, workdir=tmp_path)
    assert [(r.exercise, r.status) for r in variant.rows] == [("01.1", "passed"),
                                                              ("01.2", "passed")], \
        [r.message for r in variant.rows]
    assert [(r.exercise, r.status) for r in wrong.rows] == [("01.1", "failed"),
                                                            ("01.2", "failed")]
