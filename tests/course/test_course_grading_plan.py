"""How grading prepares a chapter source (course/grading/plan.py, taint.py): every
check call numbered, trusted calls' expected values withheld from the submission's
copy, relational calls -- whose reference comes from the learner's own values -- told
apart, so that a right answer written differently is never failed by the
instructor's particular values.

Each spec writes a small source notebook and reads its Plan."""
import json

import pytest

from course.grading.plan import SITE, WITHHELD, Plan
from course.notebook import SourceError

SETUP = "from course.checks import check_close, check_equal, check_raises, exercise\n"


def source(tmp_path, *cells, name="01_demo.ipynb"):
    """A chapter source of code cells: ``(code, role)`` pairs; solutions belong to
    exercise 01.1 and hold a BEGIN/END region, as ``read_source`` requires."""
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    for number, (code, role) in enumerate(cells):
        metadata = {"learntorch": {"exercise": "01.1", "role": role}} if role else {}
        if role == "solution":
            code = f"### BEGIN SOLUTION\n{code}### END SOLUTION\n"
        notebook["cells"].append({"cell_type": "code", "id": f"c{number}", "metadata": metadata,
                                  "outputs": [], "execution_count": None, "source": code})
    path = tmp_path / name
    path.write_text(json.dumps(notebook))
    return Plan(path)


def relational(plan):
    return {n: site.relational for n, site in plan.sites.items()}


def test_each_check_call_is_numbered_and_a_trusted_one_loses_its_expected_value(tmp_path):
    plan = source(tmp_path, (SETUP, None), ("def double(x):\n    return 2 * x\n", "solution"),
                  ('check_equal(double(21), 42, name="double(21)")\n', "hidden-check"))
    assert relational(plan) == {1: False}
    assert plan.trusted_source(2) == f"{SITE}(1, check_equal)(double(21), 42, name='double(21)')\n"
    assert plan.sandbox_source(2) == \
        f"{SITE}(1, check_equal)(double(21), {WITHHELD}, name='double(21)')\n"
    assert plan.sandbox_source(0) == SETUP   # a cell without checks goes as written


def test_checks_are_found_however_they_were_imported(tmp_path):
    plan = source(tmp_path, ("from course.checks import check_equal as same\n"
                             "import course.checks as c\nfrom course import checks\n", None),
                  ("value = 3\n", "solution"),
                  ("same(value, 3)\nc.check_equal(value, 3)\nchecks.check_shape([1], (1,))\n",
                   "check"))
    assert [s.check for s in plan.sites.values()] == ["check_equal", "check_equal",
                                                       "check_shape"]
    assert plan.sandbox_source(2).count(WITHHELD) == 3


def test_a_reference_computed_from_the_learners_objects_is_relational(tmp_path):
    plan = source(tmp_path, (SETUP, None),
                  ("class Model:\n    def __init__(self):\n        self.w = 2.0\n"
                   "    def __call__(self, x):\n        return self.w * x\n", "solution"),
                  ("model = Model()\nweights = model.w\n"
                   "check_close(model(3.0), weights * 3.0)\n"          # relational
                   "check_close(model(3.0), 6.0)\n", "check"))          # trusted
    assert relational(plan) == {1: True, 2: False}
    assert WITHHELD not in plan.sandbox_source(2).splitlines()[2]
    assert WITHHELD in plan.sandbox_source(2).splitlines()[3]


def test_a_reference_computed_before_the_learners_code_ran_stays_trusted(tmp_path):
    # the learner's code may change what it is given -- from then on, not before
    plan = source(tmp_path, (SETUP, None),
                  ("def scale(values):\n    return [2 * v for v in values]\n", "solution"),
                  ("values = [1.0, 2.0]\nexpected = [2 * v for v in values]\n"
                   "got = scale(values)\ncheck_close(got, expected)\n"      # trusted
                   "check_close(got, [2 * v for v in values])\n", "check"))  # relational
    assert relational(plan) == {1: False, 2: True}


def test_a_helper_of_a_check_cell_is_followed_into(tmp_path):
    plan = source(tmp_path, (SETUP, None), ("def f(x):\n    return x + 1\n", "solution"),
                  ("def compare(x):\n    reference = x + 1\n    got = f(x)\n"
                   "    check_close(got, reference)\n"                        # trusted
                   "def uses_learner(x):\n    return f(x)\n"
                   "check_close(f(1.0), uses_learner(1.0))\n"              # relational
                   "compare(1.0)\n", "check"))
    lines = plan.trusted_source(2).splitlines()
    inside = next(line for line in lines if "reference" in line and SITE in line)
    outside = next(line for line in lines if "uses_learner(1.0)" in line and SITE in line)
    number = {line: int(line.split(f"{SITE}(")[1].split(",")[0]) for line in (inside, outside)}
    assert plan.sites[number[inside]].relational is False
    assert plan.sites[number[outside]].relational is True


def test_a_loop_rebinding_its_name_starts_clean_each_pass(tmp_path):
    plan = source(tmp_path, (SETUP, None), ("def step(value):\n    return value\n",
                                            "solution"),
                  ("for value in [1.0, 2.0]:\n    before = value\n    step(value)\n"
                   "    check_equal(value, before)\n", "check"))
    assert relational(plan) == {1: False}


def test_a_teaching_cell_check_keeps_its_expected_value(tmp_path):
    # a cell outside the exercises may show a failing check on purpose: it must fail
    # in the submission's run as it does for the learner
    plan = source(tmp_path, (SETUP, None),
                  ("try:\n    check_equal(1, 2)\nexcept AssertionError:\n    pass\n", None),
                  ("x = 1\n", "solution"), ("check_equal(x, 1)\n", "check"))
    assert [s.withheld for s in plan.sites.values()] == [False, True]
    assert WITHHELD not in plan.sandbox_source(1)


def test_literal_cases_of_check_function_lose_their_expected_values(tmp_path):
    plan = source(tmp_path, ("from course.checks import check_function\n", None),
                  ("def double(x):\n    return 2 * x\n", "solution"),
                  ("check_function(double, [((1,), 2), ((21,), 42), (('a',), TypeError)])\n",
                   "hidden-check"))
    sent = plan.sandbox_source(2)
    assert sent.count(WITHHELD) == 3 and "42" not in sent and "TypeError" not in sent
    assert "((21,), " in sent   # the inputs stay: the learner's code is called with them


def test_a_source_cell_that_is_not_python_is_refused(tmp_path):
    with pytest.raises(SourceError, match="not valid Python"):
        source(tmp_path, (SETUP, None), ("x = 1\n", "solution"), ("check_equal(x, \n", "check"))


def test_ipython_syntax_in_a_source_cell_is_understood(tmp_path):
    plan = source(tmp_path, ("%load_ext autoreload\n" + SETUP, None), ("x = 1\n", "solution"),
                  ("check_equal(x, 1)\n", "check"))
    assert len(plan.sites) == 1
