"""Fused optimizer updates on the GPU: SGD, Adam/AdamW, RMSprop and Adagrad, one thread per element.

An optimizer step on cuda parameters written with array operations launches
a dozen kernels for Adam (``NumpyBackend.adam_update``: each whole-array ``*``, ``+``,
``sqrt``... is one launch, one pass over memory and often one temporary).
These kernels do the whole update of one element in registers: read the
parameter, its gradient and its state once, write the new values once.

They are the CPU fused kernels (``backends/numba_cpu/optim_kernels.py``) with the
``for i in range(param.size)`` loop replaced by the GPU's threads, so the two
files can be read side by side.  The arithmetic is the same, operation by
operation, in the same order as torch's single-tensor code: each kernel's
docstring names its CPU twin, whose docstring holds the formula.

**Thread layout.**  Thread ``i = cuda.grid(1)`` updates element ``i`` of the
parameter and of each state buffer; threads with ``i >= n`` do nothing.  No
thread reads or writes another thread's element, so no synchronisation.

**Contract.**  Arrays are flat, C-contiguous device arrays of one float dtype
(float32 or float64), written in place (the gradient never); scalars arrive
already cast to that dtype (``run`` does it), so float32 parameters are
updated in float32 as on the CPU.  On a real GPU the compiler may fuse a
multiply and an add into one instruction (FMA, rounded once), so results can
differ from the CPU's in the last bit; in the simulator they are equal.
"""
import math

import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda

cuda = numba_cuda()


@cuda.jit(device=True)
def penalized_gradient(grad, param, i, weight_decay, maximize):
    """Element i of the gradient, negated for ``maximize``, plus the L2 term
    ``weight_decay * param`` (the first lines of SGD, RMSprop and Adagrad, in their order)."""
    g = -grad[i] if maximize else grad[i]
    if weight_decay != 0:
        g = g + weight_decay * param[i]
    return g


@cuda.jit
def sgd(param, grad, buf, lr, weight_decay, momentum, one_minus_dampening, nesterov, maximize,
        first):
    """``numba_cpu.optim_kernels.sgd`` for element i; ``buf`` is a placeholder when momentum
    == 0."""
    i = cuda.grid(1)
    if i >= param.size:
        return
    g = penalized_gradient(grad, param, i, weight_decay, maximize)
    if momentum != 0:
        if first:
            b = g
        else:
            b = buf[i] * momentum
            b = b + one_minus_dampening * g
        buf[i] = b
        if nesterov:
            g = g + momentum * b
        else:
            g = b
    param[i] = param[i] - lr * g


@cuda.jit
def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, decay, weight_decay, lerp_weight,
         lerp_complement, beta2, one_minus_beta2, bias_correction2_sqrt, eps, step_size,
         amsgrad, maximize, decoupled):
    """``numba_cpu.optim_kernels.adam`` for element i (Adam, and AdamW when ``decoupled``).

    ``max_exp_avg_sq`` is a placeholder without amsgrad.
    """
    i = cuda.grid(1)
    if i >= param.size:
        return
    g = -grad[i] if maximize else grad[i]
    p = param[i]
    if weight_decay != 0:
        if decoupled:
            p = p * decay
        else:
            g = g + weight_decay * p
    m = exp_avg[i]
    if abs(lerp_weight) < 0.5:   # torch's lerp: the formula that is exact at its end
        m = m + lerp_weight * (g - m)
    else:
        m = g - (g - m) * lerp_complement
    exp_avg[i] = m
    v = exp_avg_sq[i] * beta2
    v = v + one_minus_beta2 * g * g
    exp_avg_sq[i] = v
    if amsgrad:
        largest = max_exp_avg_sq[i]
        if largest > v or largest != largest:  # torch.maximum: a nan wins
            v = largest
        max_exp_avg_sq[i] = v
    denom = math.sqrt(v) / bias_correction2_sqrt + eps
    param[i] = p + step_size * m / denom


@cuda.jit
def rmsprop(param, grad, square_avg, grad_avg, buf, lr, alpha, one_minus_alpha, lerp_weight,
            lerp_complement, eps, weight_decay, momentum, centered, maximize):
    """``numba_cpu.optim_kernels.rmsprop`` for element i.

    ``grad_avg`` is a placeholder unless ``centered``, ``buf`` unless momentum > 0.
    """
    i = cuda.grid(1)
    if i >= param.size:
        return
    g = penalized_gradient(grad, param, i, weight_decay, maximize)
    s = square_avg[i] * alpha
    s = s + one_minus_alpha * g * g
    square_avg[i] = s
    if centered:
        a = grad_avg[i]
        if abs(lerp_weight) < 0.5:   # torch's lerp, as in adam above
            a = a + lerp_weight * (g - a)
        else:
            a = g - (g - a) * lerp_complement
        grad_avg[i] = a
        d = math.sqrt(s - a * a)
    else:
        d = math.sqrt(s)
    d = d + eps
    if momentum > 0:
        b = buf[i] * momentum
        b = b + g / d
        buf[i] = b
        param[i] = param[i] - lr * b
    else:
        param[i] = param[i] + -lr * g / d


@cuda.jit
def adagrad(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """``numba_cpu.optim_kernels.adagrad`` for element i; ``clr`` is the decayed learning
    rate."""
    i = cuda.grid(1)
    if i >= param.size:
        return
    g = penalized_gradient(grad, param, i, weight_decay, maximize)
    s = state_sum[i] + g * g
    state_sum[i] = s
    param[i] = param[i] + -clr * g / (math.sqrt(s) + eps)


KERNELS = {"sgd": sgd, "adam": adam, "rmsprop": rmsprop, "adagrad": adagrad}
# each kernel's scalar arguments, in order (a kernel launch takes no keyword arguments)
SCALARS = {
    "sgd": ("lr", "weight_decay", "momentum", "one_minus_dampening", "nesterov", "maximize",
            "first"),
    "adam": ("decay", "weight_decay", "lerp_weight", "lerp_complement", "beta2",
             "one_minus_beta2", "bias_correction2_sqrt", "eps", "step_size", "amsgrad",
             "maximize", "decoupled"),
    "rmsprop": ("lr", "alpha", "one_minus_alpha", "lerp_weight", "lerp_complement", "eps",
                "weight_decay", "momentum", "centered", "maximize"),
    "adagrad": ("clr", "eps", "weight_decay", "maximize"),
}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_placeholders = {}


def _placeholder(dtype):
    """A one-element device array standing for a buffer the kernel will not touch."""
    if dtype not in _placeholders:
        _placeholders[dtype] = cuda.device_array(1, dtype)
    return _placeholders[dtype]


def run(name, *arrays, **scalars):
    """Call kernel ``name`` (a key of ``KERNELS``) on CudaArrays (None: unused) and scalars.

    The same call as ``numba_cpu.optim_backend.run_kernel``: arrays in the kernel's order, every
    float scalar cast to the parameter's dtype (bools stay bools).
    """
    param = arrays[0]
    dtype = param.dtype
    if dtype not in _FLOATS:
        raise TypeError(f"the fused {name} kernel updates float32 or float64 parameters, got "
                        f"{dtype}; keep the parameter in floating point")
    flat = []
    for a in arrays:
        if a is None:
            flat.append(_placeholder(dtype))
            continue
        if not isinstance(a, CudaArray):
            raise RuntimeError(f"the fused {name} kernel runs on cuda arrays; got a "
                               f"{type(a).__name__} -- every state buffer must be on the "
                               "parameter's device")
        if a.dtype != dtype or a.shape != param.shape or not a._is_c_contiguous():
            raise RuntimeError(
                f"the fused {name} kernel needs every array like the parameter ({param.shape}, "
                f"{dtype}, C-contiguous); got {a.shape}, {a.dtype}, contiguous="
                f"{a._is_c_contiguous()}: make it contiguous (.contiguous()) or of the same dtype")
        flat.append(a._flat())
    if sorted(scalars) != sorted(SCALARS[name]):
        raise TypeError(f"the fused {name} kernel takes the scalars {SCALARS[name]}, got "
                        f"{tuple(scalars)}")
    cast = [v if isinstance(v, (bool, np.bool_)) else dtype.type(v)
            for v in (scalars[k] for k in SCALARS[name])]
    if param.size:
        launch(KERNELS[name], param.size)(*flat, *cast)
