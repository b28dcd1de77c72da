"""Every CUDA kernel compiles for a real GPU (an H200, sm_90), checked on a machine without one.

The other CUDA tests run the kernels in Numba's simulator, which executes
them as plain Python and so accepts code that numba-cuda's compiler rejects
(a call to a plain Python function, a float16 constant, a conversion the
GPU has no instruction for).  Here ``ptx_compile_kernels.py`` types and
compiles every kernel of ``learntorch/backends/cuda`` to PTX with the real
compiler (NVVM; no GPU needed), for every argument type its launch site
passes.  It runs in a process of its own because the simulator, which this
directory's conftest turns on, must be off there.

Everything is checked in one test because compiling ~500 kernels takes a
minute or two: under pytest-xdist, separate tests would each pay for it.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("ptx_compile_kernels.py")
REPO = Path(__file__).resolve().parents[2]
MODULES = ["elementwise", "reduction", "matmul", "indexing", "conv", "pooling", "random",
           "optim_kernels", "scan", "mask", "sort"]
INSTALL = "pip install 'cuda-toolkit[nvrtc,nvvm]==13.*'  (or: pip install -e '.[cuda]')"


def _compile_every_kernel():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    run = subprocess.run([sys.executable, str(SCRIPT)], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, f"{SCRIPT.name} crashed:\n{run.stderr[-4000:]}"
    return json.loads(run.stdout)


def _describe(failure):
    error = "\n      ".join(failure["error"].splitlines()[:12])
    return f"  {failure['module']}.{failure['kernel']} for {failure['signature']}\n      {error}"


def test_every_cuda_kernel_compiles_to_sm_90_ptx():
    report = _compile_every_kernel()
    if report["toolchain_missing"]:
        pytest.skip(f"NVRTC/NVVM cannot be loaded ({report['toolchain_missing']}), so nothing "
                    f"can be compiled for a GPU here; install them: {INSTALL}")

    # the check bites: a kernel that calls a plain Python function runs in the simulator,
    # but the compiler refuses it
    assert report["control_error"] and "Untyped global name '_plain_python'" in \
        report["control_error"], report["control_error"]

    # no kernel escapes: every @cuda.jit kernel of the backend has launch signatures
    assert not report["unlisted"], "\n".join(report["unlisted"])

    results = report["results"]
    for module in MODULES:
        assert any(r["module"] == module for r in results), \
            f"nothing of learntorch/backends/cuda/{module}.py was compiled"

    failures = [r for r in results if r["error"]]
    assert not failures, (
        f"{len(failures)} of {len(results)} kernel signatures do not compile for sm_90 "
        "(they run in the simulator, but would fail on the first launch on a GPU):\n"
        + "\n".join(_describe(f) for f in failures))
