"""Every course program that claims PyTorch compatibility runs on both libraries.

The chapters' cells are held to their banner by test_course_plain_pytorch.py.  The course's
programs (``course/programs/*.py``, run from the command line; chapter 14 runs one on both
libraries) claim it with their first import, ``import learntorch as torch``: each one runs here
as written and with the imports swapped by ``course.plain_pytorch.on_pytorch`` (the same swap
the chapters get), in fresh processes, and both runs must finish and report comparable results.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.plain_pytorch import on_pytorch
from oracle import require_torch

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(path for path in (ROOT / "course" / "programs").glob("*.py")
                  if "\nimport learntorch as torch\n" in path.read_text(encoding="utf-8"))


def _run(path, *args):
    done = subprocess.run([sys.executable, str(path), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"})
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_course_has_programs_that_claim_pytorch_compatibility():
    assert [p.name for p in PROGRAMS] == ["train_digits_mlp.py"]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_the_program_runs_on_learntorch_and_on_pytorch_with_one_import_changed(program, tmp_path):
    require_torch()
    source = program.read_text(encoding="utf-8")
    swapped = on_pytorch(source)
    changed = [(a, b) for a, b in zip(source.splitlines(), swapped.splitlines()) if a != b]
    assert changed == [("import learntorch as torch", "import torch")], changed
    ported = tmp_path / program.name
    ported.write_text(swapped, encoding="utf-8")

    ours, theirs = _run(program, "--epochs", "3"), _run(ported, "--epochs", "3")
    assert (ours["library"], theirs["library"]) == ("learntorch", "torch")
    # each library seeds its own generator: other initial weights, another shuffle, so the
    # accuracies differ a little; three epochs of this MLP reach about 0.9 on both
    assert ours["accuracy"] > 0.85 and theirs["accuracy"] > 0.85, (ours, theirs)
    assert abs(ours["accuracy"] - theirs["accuracy"]) < 0.05, (ours, theirs)
