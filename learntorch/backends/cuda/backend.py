"""``CudaBackend``: the backend primitives that need their own CUDA kernel.

Most primitives of the backend contract (``backends/reference.py``) are
numpy expressions, and those run on cuda tensors as they are: the
``CudaArray`` turns each numpy call into kernels.  A few are not plain numpy
-- sigmoid splits its input by sign with boolean masks (so that ``exp``
never overflows), gelu needs ``erf``, which numpy lacks -- and the reference
hands a device array to this backend for them.  Each is one *fused*
elementwise kernel: the whole formula runs in one pass over memory instead of
one kernel per arithmetic step.

The sliding-window families (convolution, im2col/col2im, max and average
pooling) have kernels of their own, one GPU thread per output element
(``conv.py``, ``pooling.py``): the numpy reference's strided views of a
padded image have no device counterpart.
"""
import numpy as np

from ..reference import NumpyBackend
from . import conv, elementwise, pooling
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

    # ---- the conv family (numpy_families/conv.py)
    def conv2d(self, x, weight, bias, g, groups):
        return conv.forward(x, weight, bias, g, groups)

    def conv2d_backward_input(self, grad, weight, g, groups):
        return conv.input_gradient(grad, weight, g, groups)

    def conv2d_backward_weight(self, grad, x, g, groups):
        return conv.weight_gradient(grad, x, g, groups)

    def im2col(self, x, g):
        return conv.im2col(x, g)

    def col2im(self, cols, g):
        return conv.col2im(cols, g)

    # ---- the pooling family (numpy_families/pooling.py)
    def max_pool2d(self, x, g):
        return pooling.max_pool2d_forward(x, g)

    def max_pool2d_backward(self, grad, indices, g):
        return pooling.max_pool2d_backward(grad, indices, g)

    def avg_pool2d(self, x, g, divisor):
        return pooling.avg_pool2d_forward(x, g, divisor)

    def avg_pool2d_backward(self, grad, g, divisor):
        return pooling.avg_pool2d_backward(grad, g, divisor)


cuda_backend = CudaBackend()
