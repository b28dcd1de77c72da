"""In a real browser, every learner chapter runs and its widgets render.

Each notebook in ``chapters/`` (the learner copies) is opened in JupyterLab in
Chromium, and its code cells are run one by one, in order, as a learner who has
not solved the exercises yet would (see chapter_pages.py).  Then:

* no cell raises, except the exercises' solution and check cells (marked in the
  cells' ``learntorch`` metadata), where the learner copy's stubs raise by design;
* every widget output shows a live view: no "Error displaying widget", nothing
  left "Loading widget..." once the widget manager has settled;
* each chapter shows at least one widget (DESIGN.md, section 6);
* no output image fails to load (an empty image is a broken one to the browser);
* every graph picture (show_graph, BackpropStepper) is at most 1050 px wide as shown, with
  node text of at least 10 px (each saved as ``test-artifacts/browser/chapters/NN_topic/``);
* a picture of the whole run chapter is saved as
  ``test-artifacts/browser/chapters/NN_topic.png``, to look at.

A small notebook with one of each fault planted shows that these checks see them.
One JupyterLab server (conftest.py's) serves everything; each notebook gets a fresh
kernel, shut down as soon as what the page shows has been read.
"""
import json
import shutil
from pathlib import Path

import pytest
from chapter_pages import run_chapter

# kept in one xdist worker with the other browser tests (see test_browser_widgets.py)
pytestmark = [pytest.mark.xdist_group("browser"), pytest.mark.timeout(600)]

CHAPTERS_DIR = Path(__file__).resolve().parents[2] / "chapters"
CHAPTERS = sorted(CHAPTERS_DIR.glob("[0-9][0-9]_*.ipynb"))
CELL_SECONDS = 180           # one cell; a cold Numba cache compiles kernels on first use
WIDGETS_SETTLE_SECONDS = 20  # after the last cell, for "Loading widget..." to go away


def test_there_are_chapters_to_run():
    # without this, an empty chapters/ would leave the tests below with nothing to fail on
    assert CHAPTERS, (f"no learner chapters (NN_topic.ipynb) in {CHAPTERS_DIR}: "
                      "run `learntorch-course release course/solutions chapters`")


def served(jupyter_lab, path, folder):
    """Copy ``path`` into the server's ``folder``; the URL that opens it in a workspace
    of its own (so JupyterLab restores no other notebook's tab, nor starts its kernel)."""
    target = jupyter_lab.root_dir / folder / path.name
    target.parent.mkdir(exist_ok=True)
    shutil.copy(path, target)
    return jupyter_lab.url(f"lab/workspaces/{path.stem}/tree/{folder}/{path.name}")


@pytest.fixture(scope="module", params=CHAPTERS, ids=lambda path: path.stem)
def chapter_run(request, jupyter_lab, page, artifacts):
    """The chapter run cell by cell in JupyterLab: what it showed (see ChapterRun)."""
    path = request.param
    return run_chapter(page, served(jupyter_lab, path, "chapters"), path, CELL_SECONDS,
                       WIDGETS_SETTLE_SECONDS, artifacts / "chapters" / f"{path.stem}.png")


def test_every_code_cell_ran(chapter_run):
    assert chapter_run.never_ran == [], (
        f"{chapter_run.name}: these code cells have no execution count, so the run never "
        f"reached them: {chapter_run.never_ran}")


def test_no_cell_outside_the_exercises_raises(chapter_run):
    assert chapter_run.errors_outside_exercises() == [], (
        f"{chapter_run.name}: cells outside the exercises raised")


def test_each_exercise_check_reports_the_unsolved_stub(chapter_run):
    # the learner copy's promise (a check calling the stub gets its NotImplementedError),
    # and proof that the errors above were really read from the page
    assert any(role == "check" for _, role in chapter_run.exercises.values()), (
        f"{chapter_run.name} has no exercise check cell")
    assert chapter_run.exercises_whose_checks_did_not_raise() == {}, (
        f"{chapter_run.name}: these exercises' check cells did not raise the stub's "
        f"NotImplementedError; the errors were {[str(e) for e in chapter_run.errors]}")


def test_every_widget_output_renders_a_live_view(chapter_run):
    assert chapter_run.widget_problems() == [], (
        f"{chapter_run.name}: widget outputs that did not render")


def test_no_output_image_fails_to_load(chapter_run):
    assert chapter_run.broken_images == {}, (
        f"{chapter_run.name}: output images that failed to load, {{cell index: count}}")


MAX_GRAPH_WIDTH_PX, MIN_GRAPH_TEXT_PX = 1050, 10


def test_every_graph_picture_fits_with_readable_text(chapter_run):
    too_big = [g for g in chapter_run.graphs
               if g.width > MAX_GRAPH_WIDTH_PX or g.text_px < MIN_GRAPH_TEXT_PX]
    assert not too_big, f"{chapter_run.name}: graph pictures too wide or with text too small"


def test_the_chapter_shows_a_widget(chapter_run):
    assert chapter_run.live_widgets(), (
        f"{chapter_run.name} shows no widget; every chapter shows at least one (DESIGN.md, "
        "section 6)")


# ---- the checks themselves see each kind of fault -----------------------------------------

def code_cell(source, exercise=None, role=None):
    metadata = {"learntorch": {"exercise": exercise, "role": role}} if role else {}
    return {"cell_type": "code", "execution_count": None, "metadata": metadata,
            "outputs": [], "source": source}


# A widget view whose model the kernel never made: what JupyterLab shows when a widget's
# front end and kernel side disagree ("Error displaying widget: model not found").
ORPHAN_VIEW = ('display({"application/vnd.jupyter.widget-view+json": {"model_id": "0" * 32, '
               '"version_major": 2, "version_minor": 0}}, raw=True)')

PLANTED_FAULTS = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# One fault of each kind"},
        code_cell("import ipywidgets\nipywidgets.IntSlider(description='fine')"),  # 1
        code_cell(ORPHAN_VIEW),                                                     # 2
        code_cell("1 / 0  # outside the exercises"),                                # 3
        code_cell("def stub():\n    raise NotImplementedError('exercise 99.1')",
                  "99.1", "solution"),                                              # 4
        code_cell("stub()", "99.1", "check"),                                       # 5
        code_cell("def stub2():\n    return 0", "99.2", "solution"),                # 6
        code_cell("stub2()  # a check that does not call a raising stub",
                  "99.2", "check"),                                                 # 7
        code_cell("ipywidgets.Image(format='png')  # no picture: a broken image"),  # 8
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def test_the_checks_see_every_planted_fault(jupyter_lab, page, tmp_path):
    path = tmp_path / "planted_faults.ipynb"
    path.write_text(json.dumps(PLANTED_FAULTS), encoding="utf-8")
    run = run_chapter(page, served(jupyter_lab, path, "controls"), path, CELL_SECONDS,
                      WIDGETS_SETTLE_SECONDS)

    assert run.never_ran == []
    # the error outside the exercises is reported; the stub's, in its check cell, is not
    [outside] = run.errors_outside_exercises()
    assert outside.startswith("cell 3 ") and "ZeroDivisionError" in outside
    # the exercise whose check did not raise is reported, the one whose check did is not
    assert run.exercises_whose_checks_did_not_raise() == {"99.2": [7]}
    # the slider is live; the orphan view is reported with what JupyterLab shows
    assert [w.index for w in run.live_widgets()] == [1, 8]
    assert run.broken_images == {8: 1}
    [problem] = run.widget_problems()
    assert problem.startswith("cell 2: ") and "Error displaying widget" in problem
