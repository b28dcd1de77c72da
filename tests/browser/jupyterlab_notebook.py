"""Driving one notebook in JupyterLab from Playwright: open it, run it, read it, find a cell.

The server runs with ``expose_app_in_browser``, so the page holds the JupyterLab
application as ``window.jupyterapp``; running every cell and reading the
outputs go through it (the same commands the menus call), not through brittle
clicks on menus.  What the learner *sees* -- rendered widgets, pictures,
sliders -- is read from the DOM.
"""

# JavaScript run in the page.  The notebook is the shell's current widget.
_APP_READY = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  return Boolean(panel && panel.content && panel.sessionContext && panel.context.isReady);
}"""

# JupyterLab 4 by default renders only the cells near the viewport; the settings
# override written by conftest.py turns that off, so every widget below is attached.
_WINDOWING_MODE = """() => window.jupyterapp.shell.currentWidget.content.notebookConfig.windowingMode"""

_RUN_ALL = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.ready;
  // resolves once every cell has run (or one has raised)
  return await window.jupyterapp.commands.execute('notebook:run-all-cells');
}"""

_RUN_ONE = """async (index) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = index;
  return await window.jupyterapp.commands.execute('notebook:run-cell');
}"""

_KERNEL_BUSY = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !kernel || kernel.status !== 'idle';
}"""

_NOTEBOOK_JSON = """() => window.jupyterapp.shell.currentWidget.context.model.toJSON()"""

# What the learner sees change: every picture in an output area -- <img> sources
# (PNG data, or SVG that JupyterLab shows as an image) and inline <svg> markup --
# plus the text of HTML and Output widgets.  Control read-outs (a slider's number)
# are left out: they change by themselves, and the test is about the linked output.
# JupyterLab's own icons (the output collapser) sit outside the rendered outputs.
_PICTURES_AND_TEXT = """(area) => {
  const parts = [];
  for (const output of area.querySelectorAll('.jp-OutputArea-output')) {
    for (const img of output.querySelectorAll('img')) parts.push('img:' + img.src);
    for (const svg of output.querySelectorAll('svg')) parts.push('svg:' + svg.outerHTML);
    for (const el of output.querySelectorAll('.widget-html-content, .jupyter-widgets-output-area'))
      parts.push('text:' + el.innerText);
  }
  return parts;
}"""

WIDGET_ERROR_TEXTS = ("Error displaying widget", "Loading widget", "model not found")


class NotebookInLab:
    """A notebook open in a JupyterLab page."""

    def __init__(self, page, url, timeout_s=60):
        self.page = page
        self.timeout_ms = timeout_s * 1000
        page.goto(url, timeout=self.timeout_ms)
        page.wait_for_function(_APP_READY, timeout=self.timeout_ms)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=self.timeout_ms)
        mode = page.evaluate(_WINDOWING_MODE)
        if mode != "none":
            raise AssertionError(f"the notebook's windowingMode is {mode!r}, not 'none': off-screen "
                                 "cells would stay unrendered (see the settings in conftest.py)")
        # the file browser closed: the notebook (and each screenshot) gets the width
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")

    def run_all_cells(self, timeout_s):
        """Run every cell in order from the kernel's current state; wait until it is idle."""
        self.page.evaluate(_RUN_ALL)
        self.page.wait_for_function(f"() => !({_KERNEL_BUSY})()", timeout=timeout_s * 1000)

    def run_cell(self, marker, timeout_s=60):
        """Run the code cell whose source contains ``marker`` again (as Shift+Enter would)."""
        sources = ["".join(cell["source"]) for cell in self.as_json()["cells"]]
        matches = [i for i, source in enumerate(sources) if marker in source]
        if len(matches) != 1:
            raise AssertionError(f"expected one cell containing {marker!r}, found {len(matches)}")
        self.page.evaluate(_RUN_ONE, matches[0])
        self.page.wait_for_function(f"() => !({_KERNEL_BUSY})()", timeout=timeout_s * 1000)

    def as_json(self):
        """The notebook as nbformat JSON, outputs included (what File > Save would write)."""
        return self.page.evaluate(_NOTEBOOK_JSON)

    def errors(self):
        """``[(cell source first line, 'Name: value')]`` for every cell that raised."""
        found = []
        for cell in self.as_json()["cells"]:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    source = "".join(cell["source"]).splitlines() or [""]
                    found.append((source[0], f"{output['ename']}: {output['evalue']}"))
        return found

    def code_cell(self, marker):
        """The code cell whose source contains ``marker`` (exactly one)."""
        cells = self.page.locator(".jp-CodeCell").filter(has_text=marker)
        count = cells.count()
        if count != 1:
            raise AssertionError(f"expected one code cell containing {marker!r}, found {count}")
        return cells.first

    def output_area(self, marker):
        return self.code_cell(marker).locator(".jp-Cell-outputArea")

    def wait_for_widget_view(self, area, timeout_s=30):
        """Wait until ``area`` shows a live widget view or a widget error; say which is missing.

        Returns a list of problems: empty when a view rendered and no error text is left.
        """
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        texts = [t.lower() for t in WIDGET_ERROR_TEXTS]
        try:
            self.page.wait_for_function(
                """([area, texts]) => area.querySelector('.jupyter-widgets')
                     || texts.some(t => area.innerText.toLowerCase().includes(t))""",
                arg=[area.element_handle(), texts], timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            return [f"no widget view after {timeout_s} s; the output shows: {area.inner_text()!r}"]
        return self.widget_problems(area)

    def widget_problems(self, area):
        """Texts in ``area`` that mean a widget view did not render (an empty list if fine)."""
        text = area.inner_text()
        return [t for t in WIDGET_ERROR_TEXTS if t.lower() in text.lower()]

    def pictures_and_text(self, area):
        """What ``area`` shows (pictures and output text), to compare before/after a change."""
        return area.evaluate(_PICTURES_AND_TEXT)

    def wait_for_change(self, area, before, timeout_s=10):
        """Wait until ``area`` shows something else than ``before``: the new content, or None."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try:
            self.page.wait_for_function(
                f"([area, before]) => JSON.stringify(({_PICTURES_AND_TEXT})(area)) "
                "!== JSON.stringify(before)",
                arg=[area.element_handle(), before], timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            return None
        return self.pictures_and_text(area)
