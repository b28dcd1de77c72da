"""Every graph a chapter draws fits a notebook and runs the way its text says.

The chapters draw the recorded graph with ``show_graph`` and ``BackpropStepper``, and
say that it runs "left to right".  Each chapter that draws one runs here in one process
(course/cells.py), every picture made on the way is kept, and each must be:

* drawn left to right, as the text promises;
* at most ``MAX_WIDTH_PX`` wide at its own size (an output area of a 1400 px wide
  JupyterLab is about 1200 px), so that it is shown at that size, not shrunk;
* written with node text of at least ``MIN_TEXT_PX`` CSS pixels.

tests/browser/test_browser_chapters.py measures the same in Chromium.
"""
import re
from pathlib import Path

import pytest

from course.cells import CellRunner
from course.notebook import chapter_sources, marks, read_notebook
from widgets import BackpropStepper, GraphView
from widgets._svg_fit import PIXELS_PER_UNIT, natural_size

ROOT = Path(__file__).resolve().parents[2]
MAX_WIDTH_PX = 1050
MIN_TEXT_PX = 10
DRAWS = ("show_graph(", "BackpropStepper(")
SOURCES = [p for p in chapter_sources(ROOT / "course" / "solutions")
           if any(word in p.read_text(encoding="utf-8") for word in DRAWS)]


def pictures_of(source, monkeypatch):
    """``[(what, svg, direction)]`` for every graph the chapter draws, in order."""
    made = []
    for cls in (GraphView, BackpropStepper):
        original = cls.__init__

        def keep(self, *args, _original=original, **kwargs):
            _original(self, *args, **kwargs)
            made.append(self)
        monkeypatch.setattr(cls, "__init__", keep)
    runner = CellRunner()
    for index, cell in enumerate(read_notebook(source)["cells"]):
        if cell["cell_type"] == "code" and marks(cell).get("role") != "hidden-check":
            run = runner.run(cell["source"], f"cell {index + 1}")
            assert run.ok or marks(cell).get("role"), f"cell {index + 1} failed:\n{run.trace}"
    pictures = []
    for view in made:
        svg = view.static_svg()
        pictures.append((repr(view), svg, view.direction))
    return pictures


def smallest_text_px(svg):
    """The smallest font size of the picture's text, in CSS pixels at its own size."""
    unit = re.search(r'<svg[^>]*\swidth="[0-9.]+(pt|px)?"', svg).group(1)
    sizes = [float(s) for s in re.findall(r'font-size="([0-9.]+)"', svg)]
    return min(sizes) * PIXELS_PER_UNIT[unit]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_graph_a_chapter_draws_fits_and_runs_left_to_right(source, monkeypatch):
    pictures = pictures_of(source, monkeypatch)
    assert pictures, f"{source.name} mentions show_graph or BackpropStepper but drew nothing"
    text = " ".join(cell["source"] for cell in read_notebook(source)["cells"]
                    if cell["cell_type"] == "markdown")
    assert "left to right" in text
    for what, svg, direction in pictures:
        width, _ = natural_size(svg)
        assert direction == "LR", f"{source.name}: {what} is drawn {direction}, the text says left to right"
        assert width <= MAX_WIDTH_PX, f"{source.name}: {what} is {width:.0f} px wide"
        assert smallest_text_px(svg) >= MIN_TEXT_PX, f"{source.name}: {what} has text under 10 px"


def test_the_measures_read_an_svg_as_a_browser_does():
    svg = ('<svg width="600pt" height="100pt" viewBox="0 0 600 100"><text font-size="10.00">a</text>'
           '<text font-size="7.50">b</text></svg>')
    assert natural_size(svg) == pytest.approx((800.0, 400 / 3))
    assert smallest_text_px(svg) == 10.0
