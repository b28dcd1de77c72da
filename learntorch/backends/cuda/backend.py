"""``CudaBackend``: the backend primitives that need their own CUDA kernel.

Most primitives of the backend contract (``backends/reference.py``) are
numpy expressions, and those run on cuda tensors as they are: the
``CudaArray`` turns each numpy call into kernels.  A few are not plain numpy
-- sigmoid splits its input by sign with boolean masks (so that ``exp``
never overflows), gelu needs ``erf``, which numpy lacks -- and the reference
hands a device array to this backend for them.  Each is one *fused*
elementwise kernel: the whole formula runs in one pass over memory instead of
one kernel per arithmetic step.
"""
import numpy as np

from ..reference import NumpyBackend
from . import elementwise
from .array import CudaArray
from .scalar_math import math, sigmoid

# The formulas below become CUDA device functions, so everything they call must
# be something numba-cuda compiles: ``math.erf`` is, a Python helper function is not.


def gelu(x):
    return 0.5 * x * (1 + math.erf(x * 0.7071067811865476))


def gelu_backward(x, grad):
    cdf = 0.5 * (1 + math.erf(x * 0.7071067811865476))
    pdf = math.exp(-0.5 * x * x) * 0.3989422804014327
    return grad * (cdf + x * pdf)


def _fused(name, fn, *arrays):
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    dtype = np.result_type(*[a.dtype for a in arrays])
    out = CudaArray.empty(shape, dtype)
    return elementwise.run(name, fn, [a.broadcast_to(shape) for a in arrays], out)


class CudaBackend(NumpyBackend):
    name = "cuda"

    def sigmoid(self, x):
        return _fused("sigmoid", sigmoid, x)

    def gelu(self, x):
        return _fused("gelu", gelu, x)

    def gelu_backward(self, x, grad):
        return _fused("gelu_backward", gelu_backward, x, grad)


cuda_backend = CudaBackend()
CudaArray.backend = cuda_backend  # what backends.reference.on_device(x) finds on a CudaArray
