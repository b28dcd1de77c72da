"""Build an instructor chapter notebook from Python, so that a chapter is reviewed as code.

A chapter source (``course/solutions/NN_topic.ipynb``) is written by a small
script next to this file (``build_03_modules.py``, ...) that lists the cells in
reading order::

    chapter = Chapter("03", "modules")
    chapter.markdown("# 03 · Modules ...")
    chapter.code("import learntorch as torch")
    chapter.solution("03.1", points=3, hint="...", source="def f(x):\\n    ### BEGIN SOLUTION ...")
    chapter.check("03.1", "with exercise('03.1'): ...")
    chapter.hidden_check("03.1", "...")
    chapter.write()            # -> course/solutions/03_modules.ipynb

**Plain PyTorch.**  Every chapter promises that its code runs unchanged with ``import
torch``.  A code cell is plain PyTorch that prints the same on PyTorch unless it says
otherwise, and it says so where the learner reads it, on its first line, and in its
metadata (``"pytorch"``), where tests/course/test_course_plain_pytorch.py reads it::

    chapter.code("...", on_pytorch="other random numbers")        # runs; prints other numbers
    chapter.code("...", learntorch_only="the widgets draw learntorch's graph")   # does not run

The first becomes a cell starting ``# on PyTorch: other random numbers``, the second
``# learntorch only: the widgets draw learntorch's graph``.

``python course/authoring/build_03_modules.py --check`` only compares: it exits with
status 1 when the stored notebook is not what the script builds (someone edited the
notebook instead of the script, or forgot to rebuild).

The notebook comes out the way the course tooling expects a source (see
``course/checks.py`` for the metadata format): no outputs, no execution counts,
exercise metadata under ``"learntorch"``, and cell ids derived from the position
and role of each cell, so that rebuilding an unchanged chapter rewrites the same
bytes and a changed one gives a readable diff.
"""
import re
import sys
import textwrap
from pathlib import Path

import nbformat

SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"

_BEGIN, _END = "### BEGIN SOLUTION", "### END SOLUTION"


def _tidy(source):
    """Dedent a triple-quoted cell body and drop the blank first and last lines."""
    return textwrap.dedent(source).strip("\n")


ON_PYTORCH, LEARNTORCH_ONLY = "# on PyTorch: ", "# learntorch only: "


def _code_cell(source, on_pytorch, learntorch_only):
    """A code cell, its PyTorch mark (if any) on its first line and in its metadata."""
    if on_pytorch and learntorch_only:
        raise ValueError("a cell either runs on PyTorch (on_pytorch=...) or not "
                         "(learntorch_only=...), not both")
    body = _tidy(source)
    if on_pytorch:
        body = ON_PYTORCH + on_pytorch + "\n" + body
    elif learntorch_only:
        body = LEARNTORCH_ONLY + learntorch_only + "\n" + body
    cell = nbformat.v4.new_code_cell(body)
    if on_pytorch:
        cell["metadata"]["pytorch"] = {"runs": True, "same_output": False, "why": on_pytorch}
    elif learntorch_only:
        cell["metadata"]["pytorch"] = {"runs": False, "why": learntorch_only}
    return cell


class Chapter:
    """The cells of one chapter, in order, and where they are written."""

    def __init__(self, number, topic):
        self.number = number            # "03"
        self.topic = topic              # "modules"
        self.cells = []

    @property
    def path(self):
        return SOLUTIONS_DIR / f"{self.number}_{self.topic}.ipynb"

    def _add(self, cell, label):
        # ids like "03-017-code" or "03-031-ex03.1-check": stable while the chapter is unchanged
        cell["id"] = re.sub(r"[^A-Za-z0-9_-]", "-", f"{self.number}-{len(self.cells):03d}-{label}")
        self.cells.append(cell)
        return cell

    def markdown(self, text):
        return self._add(nbformat.v4.new_markdown_cell(_tidy(text)), "md")

    def code(self, source, *, on_pytorch=None, learntorch_only=None):
        """A code cell; plain PyTorch unless ``on_pytorch`` says what prints differently
        there, or ``learntorch_only`` why it cannot run there (see the module's docstring)."""
        return self._add(_code_cell(source, on_pytorch, learntorch_only), "code")

    def _exercise_cell(self, exercise, role, source, on_pytorch=None, learntorch_only=None,
                       **extra):
        if not exercise.startswith(self.number + "."):
            raise ValueError(f"exercise {exercise!r} does not belong to chapter {self.number}")
        cell = _code_cell(source, on_pytorch, learntorch_only)
        cell["metadata"]["learntorch"] = {"exercise": exercise, "role": role, **extra}
        return self._add(cell, f"ex{exercise}-{role}")

    def solution(self, exercise, source, *, points, hint, on_pytorch=None, learntorch_only=None):
        """The cell the learner writes: its answer between BEGIN/END SOLUTION lines."""
        body = _tidy(source)
        if body.count(_BEGIN) == 0 or body.count(_BEGIN) != body.count(_END):
            raise ValueError(f"solution of {exercise} needs matching {_BEGIN!r} / {_END!r} lines")
        return self._exercise_cell(exercise, "solution", body, on_pytorch, learntorch_only,
                                   points=points, hint=hint)

    def check(self, exercise, source, *, on_pytorch=None, learntorch_only=None):
        """A check the learner sees and runs: specific feedback, from course.checks."""
        return self._exercise_cell(exercise, "check", source, on_pytorch, learntorch_only)

    def hidden_check(self, exercise, source):
        """More cases, graded but never shown to the learner."""
        return self._exercise_cell(exercise, "hidden-check", source)

    def notebook(self):
        nb = nbformat.v4.new_notebook()
        nb.cells = self.cells
        nb.metadata = {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "learntorch": {"chapter": self.number},
        }
        return nb

    def text(self):
        """The notebook as the text it is stored as (Jupyter's layout, as course/notebook.py)."""
        nb = self.notebook()
        nbformat.validate(nb)
        return nbformat.writes(nb) + "\n"

    def write(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.text(), encoding="utf-8")
        print(f"wrote {self._shown_path()} ({len(self.cells)} cells)")
        return self.path

    def is_fresh(self):
        """True when the stored notebook is exactly what this script builds."""
        return self.path.exists() and self.path.read_text(encoding="utf-8") == self.text()

    def _shown_path(self):
        return self.path.relative_to(SOLUTIONS_DIR.parent.parent)

    def main(self, argv=None):
        """The build script's command line: write the notebook, or with ``--check`` only
        say whether the stored one is up to date (exit status 1 when it is not)."""
        args = sys.argv[1:] if argv is None else argv
        if args == ["--check"]:
            if self.is_fresh():
                print(f"{self._shown_path()} is up to date")
                return 0
            print(f"{self._shown_path()} differs from what its build script writes: "
                  f"run python course/authoring/build_{self.number}_{self.topic}.py")
            return 1
        if args:
            print(f"usage: build_{self.number}_{self.topic}.py [--check]", file=sys.stderr)
            return 2
        self.write()
        return 0
