"""``Adam``: momentum plus a per-element step size from a running mean of squared gradients.

The update itself is the backend's ``adam_update`` (``backends/numpy_families/optim.py``),
torch's single-tensor ``_single_tensor_adam`` line for line.  With ``g`` the gradient
and ``t`` the step count:

    g <- -g                                   if maximize
    p <- p * (1 - lr * wd)                    if wd != 0 and decoupled  (AdamW)
    g <- g + wd * p                           if wd != 0 otherwise      (L2 penalty)
    m <- m + (1 - beta1) * (g - m)            (exp_avg: m.lerp_(g, 1 - beta1))
    v <- beta2 * v + (1 - beta2) * g * g      (exp_avg_sq)
    v_max <- max(v_max, v); use v_max for v   if amsgrad
    p <- p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

The two ``1 - beta**t`` factors undo the bias of m and v towards their zero
start.  This file keeps the options and the state; the Numba backend updates large
parameters with one fused kernel.
"""
from .. import backends
from .._tensor import Tensor
from .optimizer import (Optimizer, changed, check_fused, check_lr, increment, new_step, scalar,
                        zeros_state)


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
        beta1, beta2 = (scalar(b) for b in group["betas"])
        amsgrad = bool(group["amsgrad"])
        buffers = [state["exp_avg"], state["exp_avg_sq"]]
        if amsgrad:
            buffers.append(state["max_exp_avg_sq"])
        backends.current.adam_update(
            p._data, p.grad._data, *[b._data for b in buffers], *([None] if not amsgrad else []),
            step=step, lr=scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
            weight_decay=group["weight_decay"], amsgrad=amsgrad,
            maximize=bool(group["maximize"]),
            decoupled_weight_decay=bool(group["decoupled_weight_decay"]), fused=group["fused"])
        changed(p, *buffers)
