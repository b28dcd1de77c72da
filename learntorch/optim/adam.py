"""``Adam``: momentum plus a per-element step size from a running mean of squared gradients.

``adam_update`` below is torch's single-tensor ``_single_tensor_adam`` line for
line, on numpy arrays.  With ``g`` the gradient and ``t`` the step count:

    g <- -g                                   if maximize
    p <- p * (1 - lr * wd)                    if wd != 0 and decoupled  (AdamW)
    g <- g + wd * p                           if wd != 0 otherwise      (L2 penalty)
    m <- m + (1 - beta1) * (g - m)            (exp_avg: m.lerp_(g, 1 - beta1))
    v <- beta2 * v + (1 - beta2) * g * g      (exp_avg_sq)
    v_max <- max(v_max, v); use v_max for v   if amsgrad
    p <- p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

The two ``1 - beta**t`` factors undo the bias of m and v towards their zero
start.  Large parameters are updated by one fused Numba kernel (``_fused.py``).
"""
import numpy as np

from .._tensor import Tensor
from . import _fused
from .optimizer import (Optimizer, changed, check_fused, check_lr, increment, lerp_, new_step,
                        scalar, zeros_state)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not (all(isinstance(b, float) for b in betas) or
                all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor) and b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        check_fused(fused, foreach, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step(group["fused"])
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_state(p)
        step = increment(state["step"])
        lr, eps, wd = scalar(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = (scalar(b) for b in group["betas"])
        amsgrad, maximize = bool(group["amsgrad"]), bool(group["maximize"])
        decoupled = bool(group["decoupled_weight_decay"])
        buffers = [state["exp_avg"], state["exp_avg_sq"]]
        if amsgrad:
            buffers.append(state["max_exp_avg_sq"])
        arrays = [p._data, p.grad._data] + [b._data for b in buffers]

        if _fused.wanted("adam", group["fused"], arrays):
            weight = p._data.dtype.type(1 - beta1)
            _fused.run("adam", *arrays, *([None] if not amsgrad else []),
                       decay=1 - lr * wd, weight_decay=wd, lerp_weight=weight,
                       lerp_complement=1 - weight, beta2=beta2, one_minus_beta2=1 - beta2,
                       bias_correction2_sqrt=(1 - beta2 ** step) ** 0.5, eps=eps,
                       step_size=-(lr / (1 - beta1 ** step)), amsgrad=amsgrad,
                       maximize=maximize, decoupled=decoupled)
        else:
            adam_update(*arrays, *([None] if not amsgrad else []), step=step, lr=lr,
                        beta1=beta1, beta2=beta2, eps=eps, weight_decay=wd, amsgrad=amsgrad,
                        maximize=maximize, decoupled_weight_decay=decoupled)
        changed(p, *buffers)


def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, step, lr, beta1, beta2,
                eps, weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """One Adam step on numpy arrays (``step`` already counts this one); ``grad`` is not written."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            grad = grad + weight_decay * param

    lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * grad * grad

    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5

    if amsgrad:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = np.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
    else:
        denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
    param += -step_size * exp_avg / denom
