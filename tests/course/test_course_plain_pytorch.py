"""Every banner is true: the cells a chapter calls plain PyTorch run on real PyTorch (2.13)
with ``import torch`` swapped in, and print what they print on learntorch.

A cell says otherwise on its first line and in its metadata (written by
course/authoring/notebook_builder.py): ``# learntorch only: <why>`` (not run on PyTorch)
or ``# on PyTorch: <what differs>`` (run, output not compared).  course/plain_pytorch.py
does the two runs; one process per chapter.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.notebook import chapter_sources, read_notebook
from course.plain_pytorch import on_pytorch, promise
from oracle import require_torch

ROOT = Path(__file__).resolve().parents[2]
SOURCES = chapter_sources(ROOT / "course" / "solutions")
sys.path.insert(0, str(ROOT / "course" / "authoring"))
from notebook_builder import Chapter  # noqa: E402


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_cells_called_plain_pytorch_run_on_pytorch_and_print_the_same(source):
    require_torch()
    done = subprocess.run([sys.executable, "-m", "course.plain_pytorch", str(source)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1500,
                          env={**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, (f"{source.name} breaks its PyTorch banner:\n"
                                  f"{done.stdout[-6000:]}\n{done.stderr[-3000:]}")
    assert " 0 broke their promise" in done.stdout


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_cell_that_is_not_plain_pytorch_says_why_on_its_first_line(source):
    for index, cell in enumerate(read_notebook(source)["cells"]):
        if cell["cell_type"] != "code" or "pytorch" not in cell["metadata"]:
            continue
        runs, _, why = promise(cell)
        first = cell["source"].splitlines()[0]
        expected = f"# on PyTorch: {why}" if runs else f"# learntorch only: {why}"
        assert why and first == expected, (f"{source.name} cell {index + 1}: its first line "
                                           f"{first!r} should be {expected!r}")


def test_the_banner_of_every_chapter_points_at_the_marks():
    for source in SOURCES:
        text = "\n".join(cell["source"] for cell in read_notebook(source)["cells"]
                         if cell["cell_type"] == "markdown")
        assert "# learntorch only" in text and "# on PyTorch" in text, (
            f"{source.name} does not tell the learner how cells that are not plain PyTorch "
            f"are marked")


def test_imports_of_modules_pytorch_has_are_swapped_and_learntorch_own_kept():
    cell = ("import numpy as np\nimport learntorch as torch\nfrom learntorch import nn\n"
            "import learntorch.nn.functional as F\nfrom learntorch.utils.data import DataLoader\n"
            "from learntorch.datasets import Digits\nfrom learntorch.autograd.graph import walk\n"
            "    import learntorch.optim as optim")
    assert on_pytorch(cell).splitlines() == [
        "import numpy as np", "import torch", "from torch import nn",
        "import torch.nn.functional as F", "from torch.utils.data import DataLoader",
        "from learntorch.datasets import Digits", "from learntorch.autograd.graph import walk",
        "    import torch.optim as optim"]


def test_the_builder_writes_each_mark_on_the_first_line_and_in_the_metadata():
    chapter = Chapter("98", "marks")
    plain = chapter.code("x = 1")
    differs = chapter.code("print(torch.randn(2))", on_pytorch="other random numbers")
    only = chapter.code("show_graph(y)", learntorch_only="a widget")
    assert "pytorch" not in plain["metadata"] and promise(plain) == (True, True, "")
    assert differs["source"] == "# on PyTorch: other random numbers\nprint(torch.randn(2))"
    assert promise(differs) == (True, False, "other random numbers")
    assert only["source"] == "# learntorch only: a widget\nshow_graph(y)"
    assert promise(only) == (False, False, "a widget")
    with pytest.raises(ValueError, match="not both"):
        chapter.code("x", on_pytorch="a", learntorch_only="b")
    json.dumps(chapter.notebook())  # still a plain notebook


def test_the_examples_in_the_module_docstrings_hold():
    import doctest

    import course.plain_pytorch

    assert doctest.testmod(course.plain_pytorch).failed == 0
