"""Import + first op in a fresh Python process, with a cold and a warm Numba cache.

This is what a learner waits for when a notebook kernel starts.  Each sample
starts ``python -c SCRIPT`` and times it end to end from the parent (so the
interpreter's own start-up, the same for everyone, is included).

Numba writes compiled kernels to ``NUMBA_CACHE_DIR``.  *Cold*: every sample
gets a new empty directory, so every kernel the script needs is compiled.
*Warm*: one directory, filled beforehand by ``learntorch.backends.warmup()``
(when the engine has it) and one run of the script, as after a first session.
numpy and PyTorch do not use Numba; they run the same way for comparison.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

import learntorch

from .suite import as_fast_as, case, Contenders, within_seconds, torch
from .timing import Sampled

# learntorch and PyTorch run the *same* script: the API is PyTorch's
FIRST_OP = "import {module} as torch; x = torch.randn(1000); y = (x * 2).sum(); y.item()"
NUMPY_FIRST_OP = "import numpy as np; x = np.random.randn(1000); y = (x * 2).sum(); y.item()"

SOFTMAX = ("import {module} as torch; x = torch.randn({n}, {n}); "
           "y = torch.softmax(x, dim=-1); y.sum().item()")
NUMPY_SOFTMAX = ("import numpy as np; x = np.random.randn({n}, {n}).astype(np.float32); "
                 "e = np.exp(x - x.max(-1, keepdims=True)); y = e / e.sum(-1, keepdims=True); "
                 "y.sum().item()")

WARMUP = ("import learntorch; warmup = getattr(learntorch.backends, 'warmup', None); "
          "warmup and warmup()")

# run the children from the repository root, so they import the learntorch being benchmarked
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SCRATCH = tempfile.mkdtemp(prefix="learntorch-bench-")
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)


def run_python(script, cache_dir):
    """Run ``python -c script`` with ``NUMBA_CACHE_DIR=cache_dir``; return its wall time."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], cwd=_ROOT, env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"benchmark script failed: {script!r}\n{done.stderr}")
    return elapsed


def _cold(script):
    """One sample = one process with a fresh, empty JIT cache."""
    def sample():
        cache_dir = tempfile.mkdtemp(dir=_SCRATCH)
        try:
            return run_python(script, cache_dir)
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    return Sampled(sample)


def _warm(script, prefill):
    """Every sample reuses one JIT cache, filled before timing starts.

    numpy and PyTorch never use it: for them warm and cold are the same runs.
    """
    if not script.startswith("import learntorch"):
        return _cold(script)

    def fill_cache():  # runs only in the process that times learntorch
        run_python(script, _warm_cache(prefill))  # compiles whatever warmup() left out
    return Sampled(lambda: run_python(script, _warm_cache(prefill)), setup=fill_cache)


_warm_dirs = {}


def _warm_cache(prefill):
    """One cache directory shared by the warm cases; ``prefill``: run backends.warmup() in it.

    (The smoke test skips warmup(): compiling every kernel takes a while.)
    """
    if prefill not in _warm_dirs:
        _warm_dirs[prefill] = tempfile.mkdtemp(dir=_SCRATCH)
        if prefill:
            run_python(WARMUP, _warm_dirs[prefill])
    return _warm_dirs[prefill]


def _has_warmup():
    return hasattr(learntorch.backends, "warmup")


def _contenders(learntorch_script, numpy_script, cache, prefill=True):
    def sampler(script):
        return _cold(script) if cache == "cold" else _warm(script, prefill)
    torch_script = learntorch_script.replace("import learntorch", "import torch", 1)
    note = ""
    if cache == "warm":
        note = ("cache filled by learntorch.backends.warmup() and one run"
                if prefill and _has_warmup() else "cache filled by one run"
                + ("" if _has_warmup() else " (learntorch.backends.warmup() not available)"))
    return Contenders(learntorch=sampler(learntorch_script),
                      numpy=sampler(numpy_script),
                      torch=sampler(torch_script) if torch else None,
                      note=note)


@case("import only", tiny={})
def import_only():
    return _contenders("import learntorch", "import numpy", "cold")


@case("import + (randn(1000) * 2).sum(), cold Numba cache", cache="cold", tiny=dict(cache="cold"))
@case("import + (randn(1000) * 2).sum(), warm Numba cache", cache="warm",
      tiny=dict(cache="warm", prefill=False),
      target=within_seconds(0.5, "import + first op, warm JIT cache ≤ 0.5 s (PyTorch ~1.6 s)"))
def first_op(cache, prefill=True):
    return _contenders(FIRST_OP.format(module="learntorch"), NUMPY_FIRST_OP, cache, prefill)


@case("import + softmax 1024×1024, cold Numba cache", n=1024, cache="cold",
      tiny=dict(n=16, cache="cold"))
@case("import + softmax 1024×1024, warm Numba cache", n=1024, cache="warm",
      tiny=dict(n=16, cache="warm", prefill=False),
      # not 0.5 s: the first call of any Numba kernel, even one loaded from the cache,
      # imports numba (~0.13 s here) and fills Numba's typing registries (~0.15 s)
      target=as_fast_as("torch", "import + first Numba-kernel op, warm JIT cache, at most "
                                 "PyTorch's import + the same op"))
def first_softmax(n, cache, prefill=True):
    return _contenders(SOFTMAX.format(module="learntorch", n=n), NUMPY_SOFTMAX.format(n=n),
                       cache, prefill)
