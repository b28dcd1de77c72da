"""Fused optimizer updates: one Numba loop per algorithm, one pass over the memory.

The numpy version of an Adam step (``NumpyBackend.adam_update``, in
``backends/numpy_families/optim.py``) runs about a dozen
whole-array operations -- each reads and writes every element, and several
allocate a temporary array.  A kernel reads each element of the parameter,
its gradient and its state once, does the dozen operations on numbers held in
registers, and writes the results back: the same arithmetic, a fraction of
the memory traffic.

Contract, for every kernel here:

* arrays are 1-D, C-contiguous and of one float dtype (float32 or float64); the
  caller flattens parameters of any shape (``optim_backend.run_kernel``);
* scalars arrive already cast to that dtype, so float32 parameters are
  computed in float32, operation by operation, in *the same order as the numpy
  path* (and as torch's single-tensor code): results equal the numpy path's bit
  for bit (no ``fastmath``, so the compiler may not reorder or fuse operations;
  ``tests/optim/test_optim_fused.py`` checks it);
* ``error_model="numpy"``: a division by zero gives inf/nan as in numpy instead
  of raising; the gradient array is never written;
* one thread (no ``prange``): updates are memory-bound and short, so waking a
  thread pool costs more than it saves on a few cores, and a serial kernel is
  safe in processes that fork (data-loader workers);
* ``cache=True``: compiled once per machine and dtype, then loaded from disk.

Branches on options (``maximize``, ``amsgrad``, ...) test loop-invariant
flags, which the compiler hoists out of the loop.
"""
import math

from numba import njit

_KERNEL = dict(cache=True, error_model="numpy")


@njit(**_KERNEL)
def sgd(param, grad, buf, lr, weight_decay, momentum, one_minus_dampening, nesterov, maximize,
        first):
    """``sgd_update`` for one parameter; ``buf`` is empty when momentum == 0."""
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g = g + weight_decay * param[i]
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


@njit(**_KERNEL)
def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, decay, weight_decay, lerp_weight,
         lerp_complement, beta2, one_minus_beta2, bias_correction2_sqrt, eps, step_size,
         amsgrad, maximize, decoupled):
    """``adam_update`` for one parameter; ``max_exp_avg_sq`` is empty without amsgrad.

    ``decay`` = 1 - lr * weight_decay (AdamW's decoupled decay); ``exp_avg`` moves
    towards the gradient by ``lerp_weight`` = 1 - beta1 with torch's two lerp formulas
    (``numpy_families/optim.lerp_``; ``lerp_complement`` = 1 - lerp_weight); ``step_size`` is
    -lr / (1 - beta1 ** step).
    """
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        p = param[i]
        if weight_decay != 0:
            if decoupled:
                p = p * decay
            else:
                g = g + weight_decay * p
        m = exp_avg[i]
        if abs(lerp_weight) < 0.5:
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


@njit(**_KERNEL)
def rmsprop(param, grad, square_avg, grad_avg, buf, lr, alpha, one_minus_alpha, lerp_weight,
            lerp_complement, eps, weight_decay, momentum, centered, maximize):
    """``rmsprop_update`` for one parameter; unused buffers are empty."""
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g = g + weight_decay * param[i]
        s = square_avg[i] * alpha
        s = s + one_minus_alpha * g * g
        square_avg[i] = s
        if centered:
            a = grad_avg[i]
            if abs(lerp_weight) < 0.5:
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


@njit(**_KERNEL)
def adagrad(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """``adagrad_update`` for one parameter; ``clr`` is the decayed learning rate."""
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        if weight_decay != 0:
            g = g + weight_decay * param[i]
        s = state_sum[i] + g * g
        state_sum[i] = s
        param[i] = param[i] + -clr * g / (math.sqrt(s) + eps)
