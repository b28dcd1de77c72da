"""An emulated Binder build: a fresh virtual environment from binder/requirements.txt (a
learner's install: no PyTorch, no test machinery), then binder/postBuild, then every
chapter run top to bottom in it.

A full pip install (minutes, even from pip's cache), so it runs in CI (``CI`` set,
as ``.ci/run`` is) and otherwise only when asked:

    LEARNTORCH_BINDER_INSTALL=1 python -m pytest tests/course/test_course_binder_install.py
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.binder_install,
    pytest.mark.skipif(os.environ.get("LEARNTORCH_BINDER_INSTALL") != "1"
                       and not os.environ.get("CI"),
                       reason="a full pip install (about 4 minutes); CI runs it, "
                              "LEARNTORCH_BINDER_INSTALL=1 runs it here"),
]


def run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_a_fresh_binder_environment_runs_every_chapter(tmp_path):
    chapters = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    assert chapters, ("no chapters/NN_*.ipynb to run: write course/solutions/NN_*.ipynb and "
                      "run `learntorch-course release course/solutions chapters`")
    start = time.monotonic()
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    env = {**os.environ, "HOME": str(tmp_path / "home"),
           "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PYTHONPATH", None)
    (tmp_path / "home").mkdir()
    # as repo2docker does: from the repository root, so the final `.` is this repository
    run([str(venv / "bin" / "pip"), "install", "-q", "-r", "binder/requirements.txt"],
        cwd=ROOT, env=env, timeout=1800)
    installed = time.monotonic()
    warmed = run([str(ROOT / "binder" / "postBuild")], cwd=ROOT, env=env, timeout=900)
    assert "warmed" in warmed.stdout
    assert any((tmp_path / "home" / ".cache" / "learntorch-numba").rglob("*.nbi"))
    assert run([str(venv / "bin" / "python"), "-c", "import importlib.util as u; "
                "print(u.find_spec('torch') is None and u.find_spec('pytest') is None)"],
               env=env).stdout.strip() == "True", "Binder's environment has the test machinery"
    # each chapter runs in the new environment (its kernel is that environment's python),
    # started through binder/start as Binder starts JupyterLab; exercise cells of a
    # learner copy raise NotImplementedError by design, nothing else may fail
    for chapter in chapters:
        executed = tmp_path / f"executed_{chapter.name}"
        run([str(ROOT / "binder" / "start"), str(venv / "bin" / "jupyter"), "nbconvert",
             "--to", "notebook", "--execute", "--allow-errors",
             "--ExecutePreprocessor.timeout=600", "--output", str(executed), str(chapter)],
            cwd=ROOT / "chapters", env=env, timeout=1800)
        failed = [cell["source"][:200] for cell in json.loads(executed.read_text())["cells"]
                  if cell["cell_type"] == "code" and any(
                      out["output_type"] == "error" and (
                          not cell["metadata"].get("learntorch")
                          or out["ename"] != "NotImplementedError")
                      for out in cell["outputs"])]
        assert not failed, f"{chapter.name} fails in the Binder environment: {failed}"
    print(f"pip install {installed - start:.0f} s, postBuild and chapters "
          f"{time.monotonic() - installed:.0f} s")
