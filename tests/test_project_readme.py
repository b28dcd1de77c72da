"""The README's code runs, prints what the README says, and runs the same on PyTorch.

Each ```python block of README.md is run in a fresh interpreter (so that one
block's ``set_backend`` cannot leak into the next test).  When a ```text block
follows it, the printed output must be exactly that text.  A block that starts
with ``import learntorch as torch`` makes the project's promise, so it is run
again with ``import torch`` and must print the same.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oracle import require_torch

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
PROMISE = "import learntorch as torch\n"


def python_blocks():
    """(code, expected output or None) for each ```python block, in order."""
    fences = list(FENCE.finditer(README))
    blocks = []
    for i, fence in enumerate(fences):
        if fence.group(1) != "python":
            continue
        expected = None
        if i + 1 < len(fences) and fences[i + 1].group(1) == "text":
            between = README[fence.end():fences[i + 1].start()]
            if len(between.strip().splitlines()) <= 2:  # a short "prints:" line at most
                expected = fences[i + 1].group(2)
        blocks.append((fence.group(2), expected))
    return blocks


BLOCKS = python_blocks()


def run(code):
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"this README block fails:\n{code}\n{result.stderr}"
    return result.stdout


def test_the_readme_has_runnable_examples_with_their_output():
    assert len(BLOCKS) >= 2
    assert any(code.startswith(PROMISE) and expected for code, expected in BLOCKS)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_and_prints_what_the_readme_says(index):
    code, expected = BLOCKS[index]
    printed = run(code)
    if expected is not None:
        assert printed == expected, (f"README block {index} prints\n{printed}\nbut the README "
                                     f"shows\n{expected}")


@pytest.mark.parametrize("index", [i for i, (code, _) in enumerate(BLOCKS)
                                   if code.startswith(PROMISE)])
def test_readme_block_prints_the_same_on_pytorch(index):
    require_torch()
    code, _ = BLOCKS[index]
    assert run(code) == run("import torch\n" + code[len(PROMISE):])
