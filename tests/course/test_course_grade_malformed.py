"""Whatever a submission turns out to be, it gets one error row, and the batch goes on.

Each of these files is handed in beside an honest submission, in one batch; every
malformed one must come back as exactly one ``error`` row whose message says what is
wrong with it, and the honest one with full marks.
"""
import json

import pytest

from course_fixtures import RIGHT, TINY_SOURCES, write_submission
from course.grade import grade


def _notebook(learner_copy, change):
    notebook = json.loads(learner_copy.read_text())
    change(notebook)
    return json.dumps(notebook)


def _solution_mark(notebook):
    return next(c["metadata"]["learntorch"] for c in notebook["cells"]
                if c["metadata"].get("learntorch", {}).get("role") == "solution")


MALFORMED = {
    # name: (what to write -- bytes, text, a function of the learner copy, or "folder"),
    #       (words the error message must contain)
    "not_json": ("{ this is not json", "not JSON"),
    "empty": (b"", "empty"),
    "white_space": ("  \n", "white space"),
    "not_utf8": (b"\xff\xfe{\x00", "not UTF-8"),
    "a_list": ("[1, 2, 3]", "not a notebook"),
    "nbformat_3": ('{"nbformat": 3, "worksheets": []}', "format 3"),
    "no_nbformat": ('{"cells": []}', "format none"),
    "cells_of_numbers": ('{"nbformat": 4, "cells": [1, 2], "metadata": {}}', "cell 1 is int"),
    "cells_not_a_list": ('{"nbformat": 4, "cells": {"a": 1}, "metadata": {}}', "no list of cells"),
    "metadata_null": (lambda nb: nb.update(metadata=None), "metadata that is NoneType"),
    "cell_metadata_null": (lambda nb: nb["cells"][0].update(metadata=None),
                           "cell 1 has metadata that is NoneType"),
    "source_42": (lambda nb: nb["cells"][3].update(source=42), "cell 4 has a source that is int"),
    "source_list_of_numbers": (lambda nb: nb["cells"][3].update(source=[1, 2]),
                               "has a source that is list"),
    "exercise_id_a_list": (lambda nb: _solution_mark(nb).update(exercise=["01.1"]),
                           "exercise that is list"),
    "learntorch_mark_a_string": (
        lambda nb: nb["cells"][3]["metadata"].update(learntorch="01.1"),
        "learntorch metadata that is str"),
    "cell_type_unknown": (lambda nb: nb["cells"][0].update(cell_type=7), "cell_type 7"),
    "id_a_number": (lambda nb: nb["cells"][0].update(id=12), "id that is int"),
    "deeply_nested": ("[" * 100_000 + "]" * 100_000, "not JSON"),
    "folder": ("folder", "is a folder"),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, learner_copy):
    folder = tmp_path_factory.mktemp("malformed")
    paths = [write_submission(learner_copy, folder / "honest" / "01_tiny.ipynb", RIGHT)]
    for name, (content, _) in MALFORMED.items():
        path = folder / name / "01_tiny.ipynb"
        path.parent.mkdir()
        if content == "folder":
            path.mkdir()
        elif callable(content):
            path.write_text(_notebook(learner_copy, content))
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        paths.append(path)
    results = grade(TINY_SOURCES, paths, timeout=20, jobs=2, workdir=folder)
    return {s.path.parent.name: s for s in results}


def test_the_honest_submission_in_the_batch_keeps_full_marks(graded):
    assert [(r.exercise, r.status, r.points) for r in graded["honest"].rows] == [
        ("01.1", "passed", 2), ("01.2", "passed", 1), ("01.3", "passed", 1)]


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_submission_is_one_error_row_that_says_what_is_wrong(graded, name):
    [row] = graded[name].rows
    assert (row.status, row.exercise, row.points) == ("error", "", 0)
    assert MALFORMED[name][1] in row.message, row.message
    assert row.feedback == row.message  # the learner is told what to fix, too
