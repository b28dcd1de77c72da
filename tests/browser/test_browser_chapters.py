"""In a real browser, every learner chapter runs and its widgets render.

Each notebook in ``chapters/`` (the learner copies) is opened in JupyterLab in
Chromium, and its code cells are run one by one, in order, as a learner who has
not solved the exercises yet would (see chapter_pages.py).  Then:

* no cell raises, except the exercises' solution and check cells (marked in the
  cells' ``learntorch`` metadata), where the learner copy's stubs raise by design;
* every widget output shows a live view: no "Error displaying widget", nothing
  left "Loading widget..." once the widget manager has settled;
* each chapter shows at least one widget (DESIGN.md, section 6);
* a picture of the whole run chapter is saved as
  ``test-artifacts/browser/chapters/NN_topic.png``, to look at.

One JupyterLab server (conftest.py's) serves all chapters; each chapter gets a
fresh kernel, shut down when its checks are done.
"""
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from chapter_pages import ChapterInLab

# kept in one xdist worker with the other browser tests (see test_browser_widgets.py)
pytestmark = [pytest.mark.xdist_group("browser"), pytest.mark.timeout(600)]

CHAPTERS_DIR = Path(__file__).resolve().parents[2] / "chapters"
CHAPTERS = sorted(CHAPTERS_DIR.glob("[0-9][0-9]_*.ipynb"))
CELL_SECONDS = 180        # one cell; a cold Numba cache compiles kernels on first use
WIDGETS_SETTLE_SECONDS = 20


def test_there_are_chapters_to_run():
    # without this, an empty chapters/ would leave the tests below with nothing to fail on
    assert CHAPTERS, (f"no learner chapters (NN_topic.ipynb) in {CHAPTERS_DIR}: "
                      "run `learntorch-course release course/solutions chapters`")


@pytest.fixture(scope="module")
def served_chapters(jupyter_lab):
    """The chapters copied into the server's folder, under chapters/."""
    folder = jupyter_lab.root_dir / "chapters"
    folder.mkdir(exist_ok=True)
    for path in CHAPTERS:
        shutil.copy(path, folder / path.name)
    return "chapters"


@dataclass
class ChapterRun:
    """What one chapter showed after every cell ran (read before its kernel was shut down)."""
    name: str
    exercises: dict            # {cell index: '02.1 solution'}
    never_ran: list            # code cells without an execution count
    errors: list               # CellError, every cell
    widgets: list              # WidgetOutput, every widget view the kernel sent
    screenshot: Path


@pytest.fixture(scope="module", params=CHAPTERS, ids=lambda path: path.stem)
def chapter_run(request, jupyter_lab, served_chapters, page, artifacts):
    """The chapter opened in its own JupyterLab workspace, every code cell run in turn."""
    path = request.param
    # a workspace per chapter: JupyterLab restores no other chapter's tab (and kernel)
    url = jupyter_lab.url(f"lab/workspaces/{path.stem}/tree/{served_chapters}/{path.name}")
    chapter = ChapterInLab(page, url, path)
    try:
        chapter.run_every_cell_in_turn(CELL_SECONDS)
        chapter.wait_until_widgets_settle(WIDGETS_SETTLE_SECONDS)
        screenshot = artifacts / "chapters" / f"{path.stem}.png"
        chapter.screenshot_whole_notebook(screenshot)
        return ChapterRun(path.name, chapter.exercises, chapter.cells_that_never_ran(),
                          chapter.errors_by_cell(), chapter.widget_outputs(), screenshot)
    finally:
        chapter.shut_down()


def test_every_code_cell_ran(chapter_run):
    assert chapter_run.never_ran == [], (
        f"{chapter_run.name}: these code cells have no execution count, so the run never "
        f"reached them: {chapter_run.never_ran}")


def test_no_cell_outside_the_exercises_raises(chapter_run):
    outside = [str(e) for e in chapter_run.errors if e.index not in chapter_run.exercises]
    assert outside == [], f"{chapter_run.name}: cells outside the exercises raised: {outside}"


def test_each_exercise_check_reports_the_unsolved_stub(chapter_run):
    # the learner copy's promise (its stubs raise NotImplementedError when a check calls
    # them), and proof that the errors above are really read from the page
    checks = {}
    for index, role in chapter_run.exercises.items():
        exercise_id, kind = role.split()
        if kind == "check":
            checks.setdefault(exercise_id, []).append(index)
    assert checks, f"{chapter_run.name} has no exercise check cell"
    raised = {e.index for e in chapter_run.errors if e.error.startswith("NotImplementedError")}
    silent = {exercise_id: cells for exercise_id, cells in checks.items()
              if not raised.intersection(cells)}
    assert silent == {}, (
        f"{chapter_run.name}: the check cells of these exercises did not raise the stub's "
        f"NotImplementedError: {silent}; the errors were {[str(e) for e in chapter_run.errors]}")


def test_every_widget_output_renders_a_live_view(chapter_run):
    problems = [p for p in (w.problem() for w in chapter_run.widgets) if p]
    assert problems == [], f"{chapter_run.name}: widget outputs that did not render: {problems}"


def test_the_chapter_shows_a_widget(chapter_run):
    assert any(w.live for w in chapter_run.widgets), (
        f"{chapter_run.name} shows no widget; every chapter shows at least one (DESIGN.md, "
        "section 6)")
