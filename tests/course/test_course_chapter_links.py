"""Each chapter ends by pointing at the next one with a link that opens it (DESIGN.md,
section 6: "the next chapter's links are right"), and the last one promises no chapter that
is not there."""
import re
from pathlib import Path

from course.notebook import chapter_sources, read_notebook

ROOT = Path(__file__).resolve().parents[2]
SOURCES = chapter_sources(ROOT / "course" / "solutions")
LINK = re.compile(r"\]\((\d\d_\w+\.ipynb)\)")


def whats_next(source):
    cells = [cell["source"] for cell in read_notebook(source)["cells"]
             if cell["cell_type"] == "markdown" and "## What's next" in cell["source"]]
    assert len(cells) == 1, f"{source.name} has no (or more than one) \"What's next\" section"
    return cells[0][cells[0].index("## What's next"):]


def test_every_chapter_but_the_last_links_to_the_next_one():
    for source, following in zip(SOURCES, SOURCES[1:]):
        links = LINK.findall(whats_next(source))
        assert links == [following.name], (f"{source.name}'s What's next links to {links}, "
                                           f"not to the next chapter, {following.name}")
        assert (ROOT / "chapters" / following.name).exists()


def test_the_last_chapter_links_to_no_chapter_that_is_not_there():
    text = whats_next(SOURCES[-1])
    assert LINK.findall(text) == [], f"{SOURCES[-1].name} links to a chapter that does not exist"
    assert "last chapter" in text
