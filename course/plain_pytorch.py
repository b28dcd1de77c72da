"""Is the banner true?  Run a chapter's cells on real PyTorch and compare what they print.

Every chapter says that its code runs unchanged with ``import torch``.  A code cell
is held to that unless its metadata says otherwise (course/authoring/notebook_builder.py
writes it, with the same words on the cell's first line for the learner)::

    "pytorch": {"runs": false, "why": "..."}                        # learntorch only
    "pytorch": {"runs": true, "same_output": false, "why": "..."}   # runs; prints otherwise

``compare(source)`` runs the chapter twice, each time in one process namespace
(course/cells.py), every code cell in order except the hidden checks (a learner's
copy has none):

1. as written, on learntorch;
2. on PyTorch: in each cell that may run there, the imports of learntorch's modules
   that PyTorch also has become imports of PyTorch's (``import learntorch as torch`` ->
   ``import torch``, ``from learntorch import nn`` -> ``from torch import nn``, ...);
   learntorch-only cells are left out.

A cell marked plain must run on PyTorch, and unless marked ``same_output: false`` print
the same as on learntorch, once ``learntorch`` is read as ``torch`` in what learntorch
printed (``learntorch.float64`` is ``torch.float64``).  The result lists each cell that
breaks its promise, with both outputs.

    python -m course.plain_pytorch course/solutions/03_modules.ipynb
"""
import argparse
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .cells import CellRunner
from .notebook import marks, read_notebook

# learntorch's modules that PyTorch has under the same path (learntorch.X -> torch.X)
MIRRORED = ("", ".nn", ".nn.functional", ".nn.init", ".optim", ".optim.lr_scheduler",
            ".utils.data", ".autograd", ".distributed", ".nn.parallel", ".ao.quantization",
            ".ao.nn.quantized.dynamic", ".profiler")
_IMPORT = re.compile(r"^(\s*)(import|from)\s+learntorch((?:\.\w+)*)\b")
CELL_SECONDS = 600


def on_pytorch(source):
    """``source`` with its imports of mirrored learntorch modules turned into PyTorch's.

    >>> print(on_pytorch("import learntorch as torch\\nfrom learntorch.datasets import Digits"))
    import torch
    from learntorch.datasets import Digits
    """
    def swap(match):
        indent, keyword, path = match.groups()
        if path not in MIRRORED:
            return match.group(0)  # learntorch's own (datasets, autograd.graph): kept
        return f"{indent}{keyword} torch{path}"
    lines = (_IMPORT.sub(swap, line) for line in source.splitlines())
    # "import torch as torch" says the same as "import torch": the way a person writes it
    return "\n".join(re.sub(r"^(\s*)import (\S+) as \2$", r"\1import \2", line) for line in lines)


def promise(cell):
    """``(runs, same_output, why)``: what a code cell promises about PyTorch."""
    mark = cell.get("metadata", {}).get("pytorch") or {}
    runs = mark.get("runs", True)
    return runs, runs and mark.get("same_output", True), mark.get("why", "")


def as_torch_would_print(text):
    """learntorch's output, with its name read as PyTorch's."""
    return text.replace("learntorch", "torch")


@dataclass
class Broken:
    """A cell that does not do on PyTorch what it promises."""
    index: int
    first_line: str
    why: str

    def __str__(self):
        return f"cell {self.index + 1} ({self.first_line!r}): {self.why}"


def _code_cells(notebook):
    for index, cell in enumerate(notebook["cells"]):
        if cell.get("cell_type") == "code" and marks(cell).get("role") != "hidden-check":
            yield index, cell


def compare(source, timeout=CELL_SECONDS, log=None):
    """Run the chapter on learntorch, then on PyTorch; the cells that break their promise,
    and how many cells were compared (``(broken, ran, compared)``)."""
    import torch  # noqa: F401 -- fail early, and clearly, without the oracle

    notebook = read_notebook(source)
    say = log or (lambda line: None)
    learntorch_runner, torch_runner = CellRunner(), CellRunner()
    learntorch_output = {}
    for index, cell in _code_cells(notebook):
        run = learntorch_runner.run(cell["source"], f"cell {index + 1}", timeout)
        if not run.ok and marks(cell).get("role") is None:
            raise RuntimeError(f"{source}: cell {index + 1} fails on learntorch:\n{run.trace}")
        learntorch_output[index] = run.output
    broken, ran, compared = [], 0, 0
    for index, cell in _code_cells(notebook):
        runs, same, _ = promise(cell)
        if not runs:
            continue
        first = cell["source"].splitlines()[0] if cell["source"] else ""
        run = torch_runner.run(on_pytorch(cell["source"]), f"cell {index + 1}", timeout)
        ran += 1
        if not run.ok:
            broken.append(Broken(index, first, f"fails on PyTorch:\n{run.trace.strip()}"))
            continue
        if not same:
            continue
        compared += 1
        expected = as_torch_would_print(learntorch_output[index])
        if run.output != expected:
            diff = "\n".join(difflib.unified_diff(expected.splitlines(), run.output.splitlines(),
                                                  "learntorch", "PyTorch", lineterm=""))
            broken.append(Broken(index, first, f"prints something else on PyTorch:\n{diff}"))
        say(f"cell {index + 1}: {'same' if run.output == expected else 'DIFFERS'}")
    return broken, ran, compared


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m course.plain_pytorch", description=(
        "Run a chapter on learntorch and on PyTorch and compare the cells it calls plain."))
    parser.add_argument("source", help="a chapter notebook (instructor source or learner copy)")
    args = parser.parse_args(argv)
    broken, ran, compared = compare(Path(args.source), log=print)
    for cell in broken:
        print(f"\n{cell}")
    print(f"{ran} cells ran on PyTorch, {compared} compared, {len(broken)} broke their promise")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
