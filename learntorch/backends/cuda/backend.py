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

from ..numpy_families.optim import (adagrad_kernel_scalars, adam_kernel_scalars,
                                    rmsprop_kernel_scalars, sgd_kernel_scalars)
from ..reference import NumpyBackend
from . import conv, elementwise, optim_kernels, pooling
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

    # ---- the optimizer updates (numpy_families/optim.py): one launch beats a dozen at any
    # size, so the kernel runs unless fused=False or an array is not like the parameter
    # (float32/float64, one dtype, C-contiguous); then the numpy formula runs on the device
    def sgd_update(self, param, grad, momentum_buffer, *, lr, weight_decay, momentum, dampening,
                   nesterov, maximize, fused=None):
        if not _fused_kernel_serves(fused, param, grad, momentum_buffer):
            return NumpyBackend.sgd_update(self, param, grad, momentum_buffer, lr=lr,
                                           weight_decay=weight_decay, momentum=momentum,
                                           dampening=dampening, nesterov=nesterov,
                                           maximize=maximize, fused=fused)
        first = momentum != 0 and momentum_buffer is None
        if first:
            momentum_buffer = CudaArray.empty(param.shape, param.dtype)  # the kernel fills it
        optim_kernels.run("sgd", param, grad, momentum_buffer,
                          **sgd_kernel_scalars(lr, weight_decay, momentum, dampening, nesterov,
                                               maximize, first))
        return momentum_buffer

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, step, lr, beta1,
                    beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay,
                    fused=None):
        if not _fused_kernel_serves(fused, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq):
            return NumpyBackend.adam_update(
                self, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step=step, lr=lr,
                beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, fused=fused)
        optim_kernels.run("adam", param, grad, exp_avg, exp_avg_sq,
                          max_exp_avg_sq if amsgrad else None,
                          **adam_kernel_scalars(param.dtype, step, lr, beta1, beta2, eps,
                                                weight_decay, amsgrad, maximize,
                                                decoupled_weight_decay))

    def rmsprop_update(self, param, grad, square_avg, grad_avg, momentum_buffer, *, lr, alpha,
                       eps, weight_decay, momentum, centered, maximize, fused=None):
        if not _fused_kernel_serves(fused, param, grad, square_avg, grad_avg, momentum_buffer):
            return NumpyBackend.rmsprop_update(
                self, param, grad, square_avg, grad_avg, momentum_buffer, lr=lr, alpha=alpha,
                eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered,
                maximize=maximize, fused=fused)
        optim_kernels.run("rmsprop", param, grad, square_avg, grad_avg, momentum_buffer,
                          **rmsprop_kernel_scalars(param.dtype, lr, alpha, eps, weight_decay,
                                                   momentum, centered, maximize))

    def adagrad_update(self, param, grad, state_sum, *, step, lr, lr_decay, weight_decay, eps,
                       maximize, fused=None):
        if not _fused_kernel_serves(fused, param, grad, state_sum):
            return NumpyBackend.adagrad_update(self, param, grad, state_sum, step=step, lr=lr,
                                               lr_decay=lr_decay, weight_decay=weight_decay,
                                               eps=eps, maximize=maximize, fused=fused)
        optim_kernels.run("adagrad", param, grad, state_sum,
                          **adagrad_kernel_scalars(step, lr, lr_decay, weight_decay, eps,
                                                   maximize))

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


def _fused_kernel_serves(fused, param, *others):
    """True when a fused optimizer kernel can update ``param`` with the gradient and state
    ``others`` (None: a buffer the options leave unused)."""
    if fused is False or param.dtype not in (np.float32, np.float64):
        return False
    return all(a is None or (isinstance(a, CudaArray) and a.dtype == param.dtype
                             and a.shape == param.shape and a._is_c_contiguous())
               for a in (param, *others))


cuda_backend = CudaBackend()
CudaArray.backend = cuda_backend  # what backends.reference.on_device(x) finds on a CudaArray
