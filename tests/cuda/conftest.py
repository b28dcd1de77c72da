"""The CUDA tests: on a GPU when there is one, otherwise in Numba's CUDA simulator.

The simulator has to be chosen before ``numba.cuda`` is imported, so this
runs at import time (pytest imports this file while collecting, before any
test runs, in every xdist worker too).  Without a CUDA driver it sets
``NUMBA_ENABLE_CUDASIM=1``; set the variable yourself to force either mode.
Nothing changes for the cpu tests: the cpu backends never import numba.cuda.
"""
import ctypes.util
import os
import sys

import pytest


def _has_cuda_driver():
    return ctypes.util.find_library("cuda") is not None


_SIMULATE = "NUMBA_ENABLE_CUDASIM" not in os.environ and not _has_cuda_driver()
if _SIMULATE:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if "numba" in sys.modules:  # numba read its settings already: let it read them again
        sys.modules["numba"].config.reload_config()

import learntorch  # noqa: E402

if not learntorch.cuda.is_available():  # pragma: no cover - a broken numba-cuda install
    raise RuntimeError("numba-cuda is not usable here, not even its simulator: install the "
                       "cuda extra (pip install -e '.[cuda]')")
if _SIMULATE:
    # numba.cuda chose the simulator when it was imported, for this process.  The variable
    # goes again so that the processes other tests start (a chapter run as a learner runs
    # it, a PyTorch comparison) see the machine as it is, not a simulated GPU.
    del os.environ["NUMBA_ENABLE_CUDASIM"]


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """Run a test on the cpu (the reference, itself tested against torch) and on cuda."""
    return request.param

