"""``cast`` between float32 and bfloat16 as one-pass Numba kernels: ``NumbaBackend``'s
override of ``Copies.cast`` (``backends/numpy_families/copies.py``, ``ndarray.astype``
through ``ml_dtypes``) for those two directions.

Autocast converts every weight and every activation a 16-bit op reads, and the
gradients back (``learntorch/amp``); the numpy backend's bfloat16 methods widen their
inputs to float32 and round their results (``backends/opmath.py``).  On a small MLP
that is some forty conversions per training step, and ``astype`` spends ~3 ns per
element on float32 -> bfloat16.  The kernels (``bfloat16_casts.py``) are bit for bit the
same conversion.  They serve C-contiguous arrays and transposed ones (F-contiguous: the
kernel runs on the transpose, and the result keeps the input's layout, as ``astype``
does) of at least ``min_sizes["to_bfloat16"]`` / ``["from_bfloat16"]`` elements
(``tuning.json``); every other cast goes to the reference (``super()``).
"""
import numpy as np

from ..opmath import is_bfloat16
from .loader import kernels, kernels_allowed

_FLOAT32 = np.dtype(np.float32)
_BITS16 = np.dtype(np.uint16)

# (min_sizes key, kernel, what the kernel reads the input as, the output's dtype); the
# kernels take n-d arrays, so that no reshape is made here (each view costs ~0.3 us)
_TO_BFLOAT16 = ("to_bfloat16", "float32_to_bfloat16", None, _BITS16)
_FROM_BFLOAT16 = ("from_bfloat16", "bfloat16_to_float32", _BITS16, _FLOAT32)


class NumbaCasts:
    def cast(self, a, dtype):
        # which conversion: (identity tests for float32: numpy keeps one object per built-in
        # dtype, and hashing a dtype would cost more; bfloat16 is told by its kind, so that
        # ml_dtypes is not imported to ask)
        if a.__class__ is not np.ndarray:
            return super().cast(a, dtype)
        source = a.dtype
        if source is _FLOAT32 and isinstance(dtype, np.dtype) and is_bfloat16(dtype):
            key, name, source_bits, out_dtype = _TO_BFLOAT16  # (a caller may pass a scalar
            # type, np.float64: never bfloat16)
        elif dtype is _FLOAT32 and is_bfloat16(source):
            key, name, source_bits, out_dtype = _FROM_BFLOAT16
        else:
            return super().cast(a, dtype)
        limit = self.min_sizes[key]
        if limit is None or a.size < limit:
            # what the reference does for these two float dtypes, one call shorter:
            # autocast makes some thirty casts a step, most of them small (the size is
            # asked first: reading ``a.flags`` makes a new object)
            return a.astype(dtype)
        flags = a.flags
        if not flags.aligned or not kernels_allowed():
            return a.astype(dtype)
        if flags.c_contiguous:
            transposed = False
        elif flags.f_contiguous:  # a transposed matrix (``x.T``): convert its transpose
            a, transposed = a.T, True
        else:
            return a.astype(dtype)
        out = np.empty(a.shape, out_dtype)
        getattr(kernels("bfloat16_casts"), name)(
            a if source_bits is None else a.view(source_bits), out)
        if out_dtype is not dtype:
            out = out.view(dtype)
        return out.T if transposed else out
