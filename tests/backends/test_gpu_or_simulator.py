"""``backends.gpu_or_simulator`` chooses Numba's CUDA simulator exactly when there is no NVIDIA
driver, before ``numba.cuda`` is imported, and never overrides an explicit choice.

Each case runs in a fresh interpreter: numba.cuda makes its choice once per process.
The oracle is Numba itself: ``numba.config.ENABLE_CUDASIM`` after the call, and whether
``numba.cuda`` then runs a kernel.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from learntorch.backends.gpu_or_simulator import has_cuda_driver

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, os, sys
{before}
from learntorch.backends.gpu_or_simulator import simulate_unless_gpu
simulated = simulate_unless_gpu()
import numba
from numba import cuda
out = [0.0]
if cuda.is_available():
    @cuda.jit
    def one(a):
        a[0] = 1.0
    import numpy as np
    a = np.zeros(1, np.float32)
    one[1, 1](a)
    out = a.tolist()
print(json.dumps({{"simulated": simulated, "config": bool(numba.config.ENABLE_CUDASIM),
                  "env": os.environ.get("NUMBA_ENABLE_CUDASIM"), "ran": out}}))
"""


def probe(before="", **env):
    base = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", PROBE.format(before=before)], cwd=ROOT,
                          env={**base, "PYTHONPATH": str(ROOT), **env}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_a_driver_it_simulates_and_a_kernel_runs():
    seen = probe()
    assert seen["simulated"] == seen["config"] == (not has_cuda_driver())
    if not has_cuda_driver():
        assert seen["env"] == "1" and seen["ran"] == [1.0]


def test_numba_imported_first_is_told_to_read_its_settings_again():
    seen = probe(before="import numba")
    assert seen["simulated"] == seen["config"] == (not has_cuda_driver())


def test_an_explicit_choice_is_left_alone():
    seen = probe(NUMBA_ENABLE_CUDASIM="0")
    assert seen == {**seen, "simulated": False, "config": False, "env": "0"}


def test_after_numba_cuda_was_imported_it_only_reports_the_choice_made():
    seen = probe(before="from numba import cuda")
    assert seen["simulated"] is False and seen["env"] is None
