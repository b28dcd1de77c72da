"""The question every layer kernel (pooling, col2im, ...) asks first: *is this array worth it?*

The same as ``NumbaBackend._accepts`` asks for the elementwise kernels, with the layers'
own thresholds (``tuning.json``'s ``layer_min_sizes``): a float32/float64 numpy array of
at least that many elements, in a process where kernels may run (``loader.py``).
Anything else -- a small array (toys never import Numba), float16, integers, a device
array -- goes to the numpy reference method the kernel overrides (``super()``).
"""
import numpy as np

from . import tuning
from .loader import kernels_allowed, use_threads

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class LayerKernels:
    #: smallest array (elements) for which each layer kernel runs, and each kernel's
    #: one-thread cost in ns per float32 element (which picks a call's thread count)
    layer_min_sizes = tuning.load()["layer_min_sizes"]
    layer_ns_per_element = tuning.load()["layer_ns_per_element"]

    def _layer_kernel_serves(self, op, a):
        return (type(a) is np.ndarray and a.size >= max(self.layer_min_sizes[op], 1)
                and a.dtype in _FLOATS and kernels_allowed())

    def _layer_threads(self, op, a):
        """One thread, or all of them when kernel ``op`` over ``a`` is long enough to share."""
        use_threads(a.size * self.layer_ns_per_element[op] * (a.itemsize / 4))
