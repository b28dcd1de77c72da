"""Choose a real GPU or Numba's CUDA simulator -- before ``numba.cuda`` is imported.

``numba.cuda`` decides once, when it is imported, whether kernels go to a GPU or to
its simulator (``NUMBA_ENABLE_CUDASIM=1``: every CUDA thread a Python thread on the
CPU).  ``learntorch.cuda.is_available()`` imports it, so asking that question first
would fix the answer "no GPU" for the whole process.  This file answers from the
machine instead -- is there an NVIDIA driver library? -- and never imports
``numba.cuda`` itself.  (learntorch only: torch has no simulator.)
"""
import ctypes.util
import os
import sys


def has_cuda_driver():
    """True when the NVIDIA driver library (libcuda) can be found on this machine."""
    return ctypes.util.find_library("cuda") is not None


def simulate_unless_gpu():
    """Use the CUDA simulator when there is no NVIDIA driver; True when kernels will be simulated.

    Leaves an explicit ``NUMBA_ENABLE_CUDASIM`` alone, and cannot change anything once
    ``numba.cuda`` was imported: then it only reports the choice that was made.
    """
    if "numba.cuda" not in sys.modules and "NUMBA_ENABLE_CUDASIM" not in os.environ \
            and not has_cuda_driver():
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        if "numba" in sys.modules:  # numba read its settings already: let it read them again
            sys.modules["numba"].config.reload_config()
    from numba import config
    return bool(config.ENABLE_CUDASIM)
