"""``NumbaBackend``'s bfloat16 ``matmul``, ``linear``, ``relu`` and ``relu_backward``: one
kernel call each (``bfloat16_layers.py``) where the numpy reference widens, computes in
float32 and rounds in several (``backends/opmath.py``) -- what autocast's linear layers run
every step, forward and backward.

A kernel serves plain numpy bfloat16 arrays: matrices (a ``linear`` input's leading dims
merged, as the reference does) whose product has fewer multiply-adds than
``layer_min_sizes["bfloat16_matmul_blas"]`` (``tuning.json``: above it, widening to float32
and BLAS's product win), C-contiguous arrays for relu.  Everything else -- other dtypes,
batched products, a bias that is not one number per output column, kernels disallowed in
this process -- goes to the reference (``super()``), with the same values up to the order
of a float32 sum.
"""
import math

import numpy as np

from ..opmath import is_bfloat16
from . import tuning
from .loader import kernels, kernels_allowed

_BITS16 = np.dtype(np.uint16)
_NO_BIAS = np.zeros(0, np.uint16)


def _bfloat16(a):
    return a.__class__ is np.ndarray and is_bfloat16(a.dtype)


class NumbaBfloat16:
    #: multiply-adds from which a bfloat16 product goes to BLAS (None: always)
    _blas_from = tuning.load()["layer_min_sizes"]["bfloat16_matmul_blas"]

    def _kernel_multiplies(self, a, b, bias=None):
        """Whether the kernel computes ``a @ b (+ bias)``: bfloat16 matrices that fit."""
        if not (_bfloat16(a) and _bfloat16(b) and a.ndim == 2 and b.ndim == 2
                and a.shape[1] == b.shape[0]):
            return False
        if bias is not None and not (_bfloat16(bias) and bias.shape == (b.shape[1],)):
            return False
        limit = self._blas_from
        return (limit is None or a.shape[0] * a.shape[1] * b.shape[1] < limit) \
            and kernels_allowed()

    def _bfloat16_product(self, a, b, bias):
        out = np.empty((a.shape[0], b.shape[1]), _BITS16)
        kernels("bfloat16_layers").matmul(
            a.view(_BITS16), b.view(_BITS16),
            _NO_BIAS if bias is None else bias.view(_BITS16), bias is not None, out)
        return out.view(a.dtype)

    def matmul(self, a, b):
        if self._kernel_multiplies(a, b):
            return self._bfloat16_product(a, b, None)
        return super().matmul(a, b)

    def linear(self, x, weight, bias):
        if x.__class__ is np.ndarray and x.ndim >= 1 and weight.ndim == 2:
            rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])  # (a view if it can)
            if self._kernel_multiplies(rows, weight.T, bias):
                out = self._bfloat16_product(rows, weight.T, bias)
                return out.reshape(x.shape[:-1] + (weight.shape[0],))
        return super().linear(x, weight, bias)

    def relu(self, x):
        if _bfloat16(x) and x.flags.c_contiguous and kernels_allowed():
            out = np.empty(x.shape, _BITS16)
            kernels("bfloat16_layers").relu(x.view(_BITS16), out)
            return out.view(x.dtype)
        return super().relu(x)

    def relu_backward(self, y, grad):
        if (_bfloat16(y) and _bfloat16(grad) and y.shape == grad.shape
                and y.flags.c_contiguous and grad.flags.c_contiguous and kernels_allowed()):
            out = np.empty(grad.shape, _BITS16)
            kernels("bfloat16_layers").relu_backward(y.view(_BITS16), grad.view(_BITS16), out)
            return out.view(grad.dtype)
        return super().relu_backward(y, grad)
