"""``learntorch.compile`` and ``learntorch.compiler``: a compiler for the engine's graphs.

``learntorch.compile(fn_or_module)`` returns a function that, on its first call,
*captures* what the engine runs into a graph, *guards* it, *fuses* its chains of
elementwise ops into generated Numba kernels and *replays* the result on later calls
(torch.compile's three steps: Dynamo, AOTAutograd, Inductor).  Read in this order:

* ``compile.py``  -- the front: the cache of guarded entries, graph breaks, recompiles;
* ``guards.py``   -- what a replay assumes about its inputs, and how a call breaks it;
* ``fusion.py``   -- which ops of a graph become one kernel;
* ``lowering.py`` -- each op as one line of scalar code, exactly as the engine computes it;
* ``codegen.py``  -- the loop around those lines: the source of one kernel;
* ``program.py``  -- the Python that calls ops and kernels, and autograd through kernels;
* ``cache.py``    -- compiled kernels kept by their source, in memory and on disk.

The capture itself is ``learntorch.fx`` (``fx/_capture.py``, and ``fx/_python.py`` for
what Python does between the ops).  ``learntorch.compiler`` holds torch's
``torch.compiler`` names: ``reset()``, ``is_compiling()``, ``list_backends()``.
"""
from .compile import CompiledFunction, OptimizedModule, compile, is_compiling, reset
from .errors import Unsupported
from . import config, explain  # noqa: F401  (torch.compiler.config; explain: _dynamo.explain's)


def list_backends(exclude_tags=None):
    """The backends ``learntorch.compile(backend=...)`` takes (torch's function name)."""
    return ["eager", "inductor", "numba", "reference"]


__all__ = ["compile", "reset", "is_compiling", "list_backends", "CompiledFunction",
           "OptimizedModule", "Unsupported"]
