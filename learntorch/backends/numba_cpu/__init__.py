"""The Numba CPU backend: compiled, multi-threaded kernels where they beat numpy.

Files, one idea each:

* ``backend.py``      -- ``NumbaBackend``: decides per call whether a kernel is worth
  it (size thresholds, dtypes, layout) and otherwise defers to the numpy reference;
* ``activations.py``  -- fused relu / tanh / sigmoid / gelu / silu and their backward;
* ``softmax.py``      -- row kernels: softmax, log_softmax, their backward, logsumexp;
* ``arithmetic.py``   -- add / sub / mul / div of large same-shape arrays on all cores;
* ``reduction.py``    -- sum over trailing dimensions, SIMD running sums;
* ``pool_kernels.py`` / ``im2col_kernels.py`` / ``col2im_kernels.py`` -- max pooling,
  and the convolution's window copy and its scatter-add; ``pooling_backend.py`` /
  ``conv_backend.py`` are the backend methods that run them (``layer_dispatch.py``
  decides when), and the convolution's faster product layout with scratch memory reused
  between calls (``workspace.py``);
* ``cross_entropy.py`` -- cross-entropy with class-number targets, forward and backward
  in one loop each (``losses_backend.py`` overrides the loss family's rows with them);
* ``optim_kernels.py`` -- the optimizer updates fused into one loop each
  (``optim_backend.py`` overrides the optimizer family with them);
* ``teaching_matmul.py`` -- a readable tiled matmul (the backend itself keeps BLAS);
* ``loader.py``       -- imports kernel modules on first need; thread-count and
  wait-policy defaults (``NUMBA_NUM_THREADS``, ``OMP_WAIT_POLICY``); fork safety;
* ``warmup.py``       -- compiles the common kernels ahead of time;
* ``tuning.py``       -- the thresholds those choices use, read from ``tuning.json``, which
  ``python -m benchmarks.calibrate`` measures on each machine.

**Numba is imported lazily.**  This package imports only numpy; a kernel module
(and with it ``numba``, ~0.5 s) is imported the first time an array is big
enough for it.  ``import learntorch`` and small tensors never touch Numba.

**Compiled kernels are cached on disk** (every kernel is ``@njit(cache=True)``),
so compilation happens once per machine, dtype and layout, not once per Python
process.  By default Numba writes the cache into ``__pycache__`` next to these
source files; when that folder is not writable (a system-wide install), or to
keep the cache elsewhere (a Docker layer, a Binder image), set the environment
variable ``NUMBA_CACHE_DIR`` to a writable folder *before* Python starts, e.g.
``NUMBA_CACHE_DIR=~/.cache/learntorch-numba``.  ``learntorch.backends.warmup()``
compiles (or loads from the cache) the common kernels for float32 and float64
up front, so that the first large operation in a notebook is fast; Binder's
build runs it once.
"""
from .backend import NumbaBackend
from .warmup import warmup

__all__ = ["NumbaBackend", "warmup"]
