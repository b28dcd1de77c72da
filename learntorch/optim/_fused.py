"""When an optimizer updates a parameter with one fused Numba kernel, and how it calls it.

Each optimizer has a readable numpy update (``sgd_update``, ``adam_update``,
...) and a kernel in ``_kernels.py`` computing the same thing in one pass.
Which one runs, per parameter:

* ``fused=False`` (a group option, as in torch): numpy, always;
* ``fused=True``: the kernel whenever the arrays allow it;
* ``fused=None`` (the default) -- and always for RMSprop, which has no such
  option in torch: the kernel once the parameter has ``MIN_SIZE[name]``
  elements.  Below that the numpy path is as fast, and small demos never import
  Numba or compile anything.

Parameters on cuda always take the kernel (``backends/cuda/optim_kernels.py``,
the GPU twins of ``_kernels.py``) unless ``fused=False``: there one launch
beats a dozen at any size.

"Allow it" means: float32 or float64, one dtype and C-contiguous memory for the
parameter, its gradient and its state, and Numba installed.  Otherwise the
numpy path runs, which gives the same values.

Crossover, measured with ``python -m learntorch.optim._crossover`` on the
shared 2-core x86-64 machine the engine's other thresholds come from: numpy
time / kernel time for one ``step()`` on one float32 parameter (default
options; SGD with momentum), kernel already compiled:

    elements      1e2    1e3    1e4    3e4    1e5    1e6
    sgd           0.72   0.81   1.01   1.24   1.91   2.0
    adam          0.90   1.04   1.57   2.53   4.06   13.8
    adamw         0.95   1.10   1.66   2.58   4.23   6.9
    rmsprop       0.78   0.89   1.39   2.27   4.17   5.9
    adagrad       0.87   1.04   1.58   2.60   4.00   7.5

Below ~1e3 elements the call into compiled code (a few microseconds) costs
more than numpy's whole update; from 1e4 the kernel wins, by more the more
whole-array passes the numpy version makes (SGD makes few, Adam a dozen).
float64 crosses over at the same sizes (sgd 1.22 and adam 2.39 at 1e4).  The
thresholds below sit at the first measured size with a clear win.

The first kernel call in a process imports Numba and loads the kernel from
Numba's disk cache (about 0.2 s in all); the very first one on a machine
compiles it instead (about 0.4 s per kernel and dtype).  ``warmup()`` does
that ahead of time, e.g. in a Binder build.
"""
import importlib.util
import inspect

import numpy as np

from ..backends.numba_cpu import tuning

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

#: smallest parameter (in elements) that the kernel updates when ``fused`` is None
MIN_SIZE = {name: tuning.threshold("layer_min_sizes", name)  # (tuning.json)
            for name in ("sgd", "adam", "rmsprop", "adagrad")}

_kernels = None


def kernels():
    """The kernel module, imported (with Numba) on first use."""
    global _kernels
    if _kernels is None:
        from . import _kernels as module
        _kernels = module
    return _kernels


def available():
    return _kernels is not None or importlib.util.find_spec("numba") is not None


def wanted(name, fused, arrays):
    """True when the kernel ``name`` should update these arrays (see the module docstring)."""
    if fused is False:
        return False
    first = arrays[0]
    # on a GPU one launch beats a dozen at any size (backends/cuda/optim_kernels.py has the
    # GPU twin of every kernel here)
    on_cuda = hasattr(first, "tensor_device")
    if fused is None and first.size < MIN_SIZE[name] and not on_cuda:
        return False
    if first.dtype not in _FLOATS:
        return False
    for a in arrays:
        if a.dtype != first.dtype or not a.flags.c_contiguous or not a.flags.writeable:
            return False
    return on_cuda or available()


def run(name, *arrays, **scalars):
    """Call kernel ``name`` on flattened ``arrays`` (None: an empty placeholder) and scalars.

    Float scalars are cast to the arrays' dtype first, so that float32 parameters
    are computed in float32 as on the numpy path (numpy casts a Python float the
    same way); bools stay bools.
    """
    if hasattr(arrays[0], "tensor_device"):  # cuda parameters: the GPU twins of the kernels
        from ..backends.cuda import optim_kernels
        return optim_kernels.run(name, *arrays, **scalars)
    dtype = arrays[0].dtype.type
    placeholder = np.empty(0, arrays[0].dtype)
    flat = [placeholder if a is None else a.reshape(-1) for a in arrays]
    cast = {k: v if isinstance(v, (bool, np.bool_)) else dtype(v) for k, v in scalars.items()}
    getattr(kernels(), name)(*flat, **cast)


#: each kernel's first arguments: how many arrays (parameter, gradient, state...)
_ARRAYS = {"sgd": 3, "adam": 5, "rmsprop": 5, "adagrad": 3}


def warmup(dtypes=("float32", "float64")):
    """Compile (or load from the disk cache) every optimizer kernel for ``dtypes`` now.

    Returns the names of the kernels warmed.  The kernels run on one-element
    arrays with every option off, which is all compilation needs: a kernel is
    compiled per dtype, not per option.
    """
    module = kernels()
    for dtype in dtypes:
        for name, n_arrays in _ARRAYS.items():
            kernel = getattr(module, name)
            arrays = [np.zeros(1, dtype) for _ in range(n_arrays)]
            scalars = list(inspect.signature(kernel.py_func).parameters)[n_arrays:]
            run(name, *arrays, **{k: False if k in _FLAGS else 0.0 for k in scalars})
    return sorted(_ARRAYS)


# the kernels' boolean options (every other scalar is cast to the arrays' dtype)
_FLAGS = {"nesterov", "maximize", "first", "amsgrad", "decoupled", "centered"}
