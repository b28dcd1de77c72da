"""A learner chapter in JupyterLab: run every cell in turn, read what each cell shows.

A learner copy raises ``NotImplementedError`` in its exercise cells until the
learner writes a solution, so "Run All" would stop at the first exercise (the
kernel drops the queued cells after an error).  A learner who has not solved it
yet runs the cells one by one (Shift+Enter) and reads on; so does this module:
every code cell, in order, each run to its end whatever the one before did.

Cells are matched by position: cell ``i`` of the notebook file, of the model in
the page and of the DOM (JupyterLab renders every cell, see conftest.py) are the
same cell; ``ChapterInLab`` checks that the three agree before anything is read.
"""
import json
from dataclasses import dataclass
from pathlib import Path

from jupyterlab_notebook import WIDGET_ERROR_TEXTS, NotebookInLab

# the cells a learner copy lets raise: the stub the learner replaces, and its check
EXERCISE_ROLES = ("solution", "check")
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"

# Start running cell ``index`` and return at once; window.__chapterCellDone says when it
# has finished.  (Awaiting here would leave Playwright waiting without a time limit.)
_START_CELL = """(index) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  window.__chapterCellDone = null;
  panel.sessionContext.ready.then(() => {
    panel.content.activeCellIndex = index;
    return app.commands.execute('notebook:run-cell');
  }).then(ok => { window.__chapterCellDone = {index, ok}; },
          error => { window.__chapterCellDone = {index, ok: false, error: String(error)}; });
}"""

_CELL_DONE = "(index) => window.__chapterCellDone && window.__chapterCellDone.index === index"

_DOM_CELL_COUNT = """() =>
  window.jupyterapp.shell.currentWidget.content.node.querySelectorAll('.jp-Cell').length"""

# Per DOM cell, its own outputs in order (one element per output of the model; an
# Output widget nested in a view has outputs of its own, left out here): whether each
# shows a live ipywidgets view, and its text.
_OUTPUTS_SHOWN = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.node.querySelectorAll('.jp-Cell');
  return Array.from(cells, cell => {
    const area = cell.querySelector('.jp-Cell-outputArea');
    const children = area ? Array.from(area.children).filter(
      child => child.classList.contains('jp-OutputArea-child')) : [];
    return children.map(child => ({
      // a view is an element inside the renderer; on failure the renderer itself takes
      // ipywidgets' class and the error text
      live: Boolean(child.querySelector('.jp-OutputArea-output > .jupyter-widgets')),
      text: child.innerText.slice(0, 300),
    }));
  });
}"""

# True while any widget output still says it is loading (the widget manager has not
# built its model yet); an error text does not count here: it will not go away.
_WIDGETS_STILL_LOADING = """() => Array.from(
  window.jupyterapp.shell.currentWidget.content.node.querySelectorAll('.jp-OutputArea-output'),
  output => output.innerText.toLowerCase()).some(text => text.includes('loading widget'))"""

# The element that scrolls the notebook: JupyterLab 4's windowed panel, else the notebook.
_SCROLLER = """(() => {
  const notebook = window.jupyterapp.shell.currentWidget.content.node;
  return notebook.querySelector('.jp-WindowedPanel-outer') || notebook;
})()"""
# How much taller the notebook's cells are than what the notebook shows (JupyterLab
# leaves empty room below the last cell, left out of the picture)
_NOTEBOOK_OVERFLOW = f"""() => {{
  const scroller = {_SCROLLER};
  const cells = scroller.querySelectorAll('.jp-Cell');
  if (!cells.length) return 0;
  const bottom = cells[cells.length - 1].getBoundingClientRect().bottom
    - scroller.getBoundingClientRect().top + scroller.scrollTop;
  return Math.max(0, Math.ceil(bottom) + 40 - scroller.clientHeight);
}}"""
# Scrolled to the top, after two animation frames (Lumino lays the panels out again
# after a resize, and the notebook may scroll back to its active cell)
_SCROLL_TO_TOP = f"""async () => {{
  const frame = () => new Promise(resolve => requestAnimationFrame(resolve));
  await frame(); await frame();
  {_SCROLLER}.scrollTop = 0;
  await frame();
}}"""

# Per DOM cell, the images of its outputs that failed to load (an <img> with no picture:
# the browser reports it as broken, even inside a closed accordion)
_BROKEN_IMAGES = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.node.querySelectorAll('.jp-Cell');
  return Array.from(cells, cell => Array.from(
    cell.querySelectorAll('.jp-OutputArea-output img'),
    img => img.complete && img.naturalWidth === 0).filter(Boolean).length);
}"""

# Every graph picture (Graphviz's SVG of widgets._dot, shown by show_graph or the stepper) as the
# page shows it: its cell, its width on screen, and the smallest node text in CSS pixels there
# (font size in the drawing's units times the scale the page draws it at).
_GRAPH_PICTURES = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.node.querySelectorAll('.jp-Cell');
  const found = [];
  cells.forEach((cell, index) => {
    for (const svg of cell.querySelectorAll('.jp-OutputArea-output svg')) {
      const title = svg.querySelector(':scope > g > title');
      if (!title || title.textContent !== 'learntorch_graph') continue;
      const box = svg.getBoundingClientRect();
      if (box.width === 0) continue;  // not shown (a static picture behind a live view)
      const scale = box.width / svg.viewBox.baseVal.width;
      const sizes = Array.from(svg.querySelectorAll('g.node text'),
                               t => parseFloat(t.getAttribute('font-size')) * scale);
      found.push({index, width: box.width, text_px: Math.min(...sizes)});
    }
  });
  return found;
}"""

_SHUT_DOWN_AND_CLOSE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;  // close without the "save your changes?" dialog
  panel.dispose();
}"""

# a cap on a picture's height (a chapter longer than this is pictured down to here):
# Chromium's largest texture is 16384 pixels high
MAX_SCREENSHOT_HEIGHT = 16000


def exercise_cells(notebook):
    """``{cell index: ('02.1', 'solution')}`` for the cells marked as an exercise's
    solution or check (course/checks.py describes the marks)."""
    marked = {}
    for index, cell in enumerate(notebook["cells"]):
        mark = cell.get("metadata", {}).get("learntorch") or {}
        if mark.get("role") in EXERCISE_ROLES:
            marked[index] = (str(mark.get("exercise")), mark["role"])
    return marked


def first_line(cell):
    lines = "".join(cell["source"]).splitlines()
    return lines[0] if lines else ""


@dataclass
class CellError:
    index: int
    first_line: str
    error: str

    def __str__(self):
        return f"cell {self.index} ({self.first_line!r}): {self.error}"


@dataclass
class WidgetOutput:
    index: int     # its cell
    live: bool     # a live ipywidgets view rendered
    text: str      # what the output shows as text (an error message, "Loading widget...")

    def problem(self):
        """Why this output is not a rendered widget, or None if it is one."""
        lowered = self.text.lower()
        errors = [t for t in WIDGET_ERROR_TEXTS if t.lower() in lowered]
        if errors or not self.live:
            return f"cell {self.index}: {errors or 'no live view'}; it shows {self.text!r}"
        return None


class ChapterInLab(NotebookInLab):
    """A learner chapter open in JupyterLab, its file read alongside."""

    def __init__(self, page, url, path, timeout_s=60):
        super().__init__(page, url, timeout_s)
        self.path = Path(path)
        self.file = json.loads(self.path.read_text(encoding="utf-8"))
        self.exercises = exercise_cells(self.file)
        try:
            self._check_cells_line_up()
        except AssertionError:
            self.shut_down()
            raise

    def _check_cells_line_up(self):
        """The file, the page's model and the DOM hold the same cells in the same order."""
        sources = ["".join(cell["source"]) for cell in self.file["cells"]]
        in_page = ["".join(cell["source"]) for cell in self.as_json()["cells"]]
        if in_page != sources:
            raise AssertionError(f"{self.path.name}: the page holds other cells than the file "
                                 f"({len(in_page)} vs {len(sources)} cells)")
        in_dom = self.page.evaluate(_DOM_CELL_COUNT)
        if in_dom != len(sources):
            raise AssertionError(f"{self.path.name}: the page shows {in_dom} cells, the file has "
                                 f"{len(sources)}: cells cannot be matched by position")

    def run_every_cell_in_turn(self, cell_timeout_s):
        """Run each code cell in order, as Shift+Enter would, errors or not."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        for index, cell in enumerate(self.file["cells"]):
            if cell["cell_type"] != "code":
                continue
            self.page.evaluate(_START_CELL, index)
            try:
                self.page.wait_for_function(_CELL_DONE, arg=index, timeout=cell_timeout_s * 1000)
            except PlaywrightTimeout:
                raise AssertionError(f"{self.path.name}: cell {index} ({first_line(cell)!r}) did "
                                     f"not finish within {cell_timeout_s} s") from None

    def cells_that_never_ran(self):
        """Indices of code cells without an execution count (the run did not reach them)."""
        return [index for index, cell in enumerate(self.as_json()["cells"])
                if cell["cell_type"] == "code" and cell.get("execution_count") is None]

    def errors_by_cell(self):
        """Every error output in the page's model, with its cell."""
        found = []
        for index, cell in enumerate(self.as_json()["cells"]):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    found.append(CellError(index, first_line(cell),
                                           f"{output['ename']}: {output['evalue']}"))
        return found

    def wait_until_widgets_settle(self, timeout_s):
        """Wait until no widget output says "Loading widget" (what is left then is read as is)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try:
            self.page.wait_for_function(f"() => !({_WIDGETS_STILL_LOADING})()",
                                        timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            pass  # the outputs still loading are reported by widget_outputs

    def widget_outputs(self):
        """Every widget view the kernel sent (per the page's model), as the page shows it."""
        shown = self.page.evaluate(_OUTPUTS_SHOWN)
        found = []
        for index, cell in enumerate(self.as_json()["cells"]):
            for position, output in enumerate(cell.get("outputs", [])):
                if WIDGET_VIEW_MIME not in output.get("data", {}):
                    continue
                if position < len(shown[index]):
                    found.append(WidgetOutput(index, **shown[index][position]))
                else:
                    found.append(WidgetOutput(index, False, "(no output element in the page)"))
        return found

    def screenshot_whole_notebook(self, path):
        """A picture of the whole notebook, top to bottom, not just the visible part.

        JupyterLab scrolls the notebook inside a fixed-size page, so Playwright's
        ``full_page`` sees only one screen: the viewport is made as tall as the notebook
        for the picture (up to Chromium's limit), then put back.
        """
        viewport = self.page.viewport_size
        overflow = self.page.evaluate(_NOTEBOOK_OVERFLOW)
        height = min(viewport["height"] + overflow, MAX_SCREENSHOT_HEIGHT)
        self.page.set_viewport_size({"width": viewport["width"], "height": height})
        try:
            self.page.evaluate(_SCROLL_TO_TOP)
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(path))
        finally:
            self.page.set_viewport_size(viewport)

    def broken_images(self):
        """``{cell index: count}`` of the output images that failed to load."""
        return {index: count for index, count in enumerate(self.page.evaluate(_BROKEN_IMAGES))
                if count}

    def graph_pictures(self, screenshots=None):
        """Every graph picture shown (``GraphPicture``); each saved as ``screenshots/cell_NN.png``
        when a folder is given."""
        pictures = [GraphPicture(**found) for found in self.page.evaluate(_GRAPH_PICTURES)]
        if screenshots is not None:
            Path(screenshots).mkdir(parents=True, exist_ok=True)
            cells = self.page.locator(".jp-Notebook .jp-Cell")
            for picture in pictures:
                area = cells.nth(picture.index).locator(".jp-Cell-outputArea")
                area.screenshot(path=str(Path(screenshots) / f"cell_{picture.index:02d}.png"))
        return pictures

    def shut_down(self):
        """Stop this chapter's kernel and close its tab (the next chapter gets the CPU)."""
        self.page.evaluate(_SHUT_DOWN_AND_CLOSE)


@dataclass
class GraphPicture:
    index: int          # its cell
    width: float        # CSS pixels, as shown
    text_px: float      # the smallest node text, CSS pixels, as shown


@dataclass
class ChapterRun:
    """What a chapter showed once every cell had run (read before its kernel was shut down)."""
    name: str
    exercises: dict     # {cell index: ('02.1', 'solution')}
    never_ran: list     # code cells without an execution count
    errors: list        # CellError, every cell
    widgets: list       # WidgetOutput, every widget view the kernel sent
    broken_images: dict = None   # {cell index: how many of its images failed to load}
    graphs: list = None          # GraphPicture, every graph picture shown

    def errors_outside_exercises(self):
        return [str(e) for e in self.errors if e.index not in self.exercises]

    def exercises_whose_checks_did_not_raise(self):
        """``{exercise id: check cells}`` for exercises none of whose checks raised the stub's
        NotImplementedError (none, in a learner copy)."""
        checks = {}
        for index, (exercise_id, role) in self.exercises.items():
            if role == "check":
                checks.setdefault(exercise_id, []).append(index)
        raised = {e.index for e in self.errors if e.error.startswith("NotImplementedError")}
        return {exercise_id: cells for exercise_id, cells in checks.items()
                if not raised.intersection(cells)}

    def widget_problems(self):
        return [problem for problem in (w.problem() for w in self.widgets) if problem]

    def live_widgets(self):
        return [w for w in self.widgets if w.live]


def run_chapter(page, url, path, cell_timeout_s, widgets_settle_s, screenshot=None):
    """Open the notebook ``path`` (served at ``url``), run every code cell in turn, let the
    widgets settle, save a picture of it all to ``screenshot`` (if given, and of each graph
    beside it), read what it shows, shut its kernel down."""
    chapter = ChapterInLab(page, url, path)
    try:
        chapter.run_every_cell_in_turn(cell_timeout_s)
        chapter.wait_until_widgets_settle(widgets_settle_s)
        graphs_folder = None
        if screenshot is not None:
            chapter.screenshot_whole_notebook(screenshot)
            graphs_folder = Path(screenshot).with_suffix("")  # chapters/02_autograd/cell_NN.png
        return ChapterRun(Path(path).name, chapter.exercises, chapter.cells_that_never_ran(),
                          chapter.errors_by_cell(), chapter.widget_outputs(),
                          chapter.broken_images(), chapter.graph_pictures(graphs_folder))
    finally:
        chapter.shut_down()
