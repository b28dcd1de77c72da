"""Cross-entropy rows as one-pass Numba kernels: ``NumbaBackend``'s overrides of
``LossFamily.cross_entropy_rows`` and ``cross_entropy_rows_backward``
(``backends/numpy_families/losses.py``).

The numpy reference runs about twenty whole-array operations per call -- log_softmax
(max, subtract, exp, sum, log, subtract), the checks of the targets, the pick of each
row's class, the sums -- each a microsecond of call overhead on a classifier's
(batch, classes) output of a few thousand numbers.  The kernels (``cross_entropy.py``)
do the common case in one loop each: class-number targets (int64), no class weights, no
label smoothing, a C-contiguous float32/float64 (M, C) array of at least
``layer_min_sizes["cross_entropy"]`` elements (``tuning.json``; a toy should not have to
load Numba).  Everything else goes to the reference (``super()``), which gives the same
values up to the last bit of ``exp``.
"""
import numpy as np

from ..numpy_families.losses import class_rows
from . import tuning
from .loader import kernels, kernels_allowed

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _compact(a):
    """C-contiguous, aligned and writeable: the one layout each kernel is compiled for."""
    flags = a.flags
    return type(a) is np.ndarray and flags.c_contiguous and flags.aligned and flags.writeable


class NumbaLosses:
    #: smallest logits array (elements) the cross-entropy kernels take (tuning.json)
    layer_min_sizes = tuning.load()["layer_min_sizes"]

    def _cross_entropy_kernel_serves(self, x, target, weight, label_smoothing):
        return (weight is None and label_smoothing == 0 and type(x) is np.ndarray
                and x.ndim == 2 and x.dtype in _FLOATS
                and x.size >= max(self.layer_min_sizes["cross_entropy"], 1) and _compact(x)
                and type(target) is np.ndarray and target.dtype == np.int64
                and target.flags.c_contiguous and kernels_allowed())

    def cross_entropy_rows(self, x, target, weight, ignore_index, label_smoothing):
        if not self._cross_entropy_kernel_serves(x, target, weight, label_smoothing):
            return super().cross_entropy_rows(x, target, weight, ignore_index, label_smoothing)
        logp, losses = np.empty_like(x), np.empty(x.shape[0], x.dtype)
        counted = kernels("cross_entropy").cross_entropy_rows(x, target, ignore_index, logp,
                                                              losses)
        if counted < 0:
            class_rows(target, x.shape[1], ignore_index)  # torch's IndexError, naming the class
        return logp, losses, float(counted)

    def cross_entropy_rows_backward(self, logp, target, weight, ignore_index, label_smoothing,
                                    row_grad):
        if not self._cross_entropy_kernel_serves(logp, target, weight, label_smoothing):
            return super().cross_entropy_rows_backward(logp, target, weight, ignore_index,
                                                       label_smoothing, row_grad)
        row_grad = np.ascontiguousarray(row_grad, dtype=logp.dtype)  # (often one value, broadcast)
        out = np.empty_like(logp)
        kernels("cross_entropy").cross_entropy_rows_backward(logp, target, ignore_index,
                                                             row_grad, out)
        return out
