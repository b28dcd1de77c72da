"""``import learntorch`` loads the engine, not its optional parts: a notebook kernel that
starts with it waits for numpy and the engine's own modules only.

``ml_dtypes`` (bfloat16's numpy type) takes longer to import than the rest of learntorch,
so it waits for the first use of bfloat16; onnx, mpi4py and torch are imported only by the
features that need them (export, distributed training with MPI, comparisons).  Each check
runs in a fresh Python process: this one has imported them all already.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

OPTIONAL = ("ml_dtypes", "onnx", "onnxruntime", "mpi4py", "torch")


def _run(script):
    """Run ``script`` in a fresh interpreter on this checkout's learntorch; its last
    printed line, read as JSON."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_and_a_first_float_op_load_no_optional_package():
    loaded = _run(
        "import json, sys, learntorch\n"
        "assert learntorch.__file__.startswith(%r)\n"
        "after_import = [m for m in %r if m in sys.modules]\n"
        "(learntorch.randn(1000) * 2).sum().item()\n"
        "learntorch.bfloat16, learntorch.finfo(learntorch.float16)\n"
        "after_op = [m for m in %r if m in sys.modules]\n"
        "print(json.dumps([after_import, after_op]))" % (str(ROOT), OPTIONAL, OPTIONAL))
    assert loaded == [[], []], f"imported by learntorch before anything asked for them: {loaded}"


def test_the_first_bfloat16_use_loads_ml_dtypes_and_works():
    got = _run(
        "import json, sys, learntorch\n"
        "x = learntorch.tensor([1.0, 2.0, 3.00390625], dtype=learntorch.bfloat16)\n"
        "loaded = 'ml_dtypes' in sys.modules\n"
        "import ml_dtypes, numpy as np\n"
        "print(json.dumps([loaded, (x * 2).sum().item(), x.tolist(), str(x.numpy().dtype),\n"
        "                  learntorch.finfo(learntorch.bfloat16).eps,\n"
        "                  learntorch.finfo(learntorch.bfloat16).max,\n"
        "                  x.float().dtype is learntorch.float32,\n"
        "                  x.numpy().dtype == np.dtype(ml_dtypes.bfloat16)]))")
    assert got == [True, 12.0, [1.0, 2.0, 3.0], "bfloat16", 2.0 ** -7,
                   float.fromhex("0x1.fep127"), True, True]


@pytest.mark.parametrize("first_use", [
    "learntorch.finfo(learntorch.bfloat16).bits",
    "learntorch.zeros(2).to(learntorch.bfloat16).dtype is learntorch.bfloat16",
    "learntorch.from_numpy(np.ones(2, ml_dtypes.bfloat16)).dtype is learntorch.bfloat16",
    "learntorch.tensor(np.ones(2, ml_dtypes.bfloat16)).softmax(0).dtype is learntorch.bfloat16",
])
def test_each_way_in_to_bfloat16_works_as_the_first_use(first_use):
    """Arrays of ``ml_dtypes.bfloat16`` made before learntorch's bfloat16 was ever used
    (the package imported by the user, not by learntorch) are bfloat16 tensors too."""
    got = _run("import json, numpy as np, learntorch\n"
               "import ml_dtypes\n"
               f"print(json.dumps({first_use}))")
    assert got in (True, 16)


def test_a_bfloat16_checkpoint_loads_in_a_process_that_never_used_bfloat16(tmp_path):
    path = tmp_path / "bf16.pt"
    _run("import learntorch\n"
         "w = learntorch.tensor([0.5, -3.0, 1e30]).bfloat16()\n"
         f"learntorch.save({{'w': w}}, {str(path)!r})\n"
         "print('null')")
    got = _run("import json, learntorch\n"
               f"w = learntorch.load({str(path)!r})['w']\n"
               "print(json.dumps([str(w.dtype), w.float().tolist()]))")
    rounded = float(np.float32(1e30).astype(ml_dtypes.bfloat16))
    assert got == ["learntorch.bfloat16", [0.5, -3.0, rounded]]
