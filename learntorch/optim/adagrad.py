"""``Adagrad``: a per-element step size that shrinks with the sum of all past squared gradients.

The update itself is the backend's ``adagrad_update`` (``backends/numpy_families/optim.py``),
torch's ``_single_tensor_adagrad`` (dense gradients) line for line.  With ``g`` the
gradient and ``t`` the step count:

    g <- -g                                  if maximize
    g <- g + wd * p                          if wd != 0
    clr = lr / (1 + (t - 1) * lr_decay)
    s <- s + g * g                           (sum, starting at initial_accumulator_value)
    p <- p - clr * g / (sqrt(s) + eps)

Weights with large past gradients take small steps from then on, which is why
Adagrad suits sparse features -- and why its steps eventually fade out
(RMSprop and Adam forget old gradients instead).
"""
import numpy as np

from .. import backends
from .._tensor import Tensor
from .optimizer import (Optimizer, changed, check_fused, check_lr, increment, new_step, scalar)


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_fused(fused, foreach, differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # unlike the other optimizers, torch creates Adagrad's state up front
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value, group["fused"])

    def _init_state(self, p, initial_accumulator_value, fused):
        state = self.state[p]
        state["step"] = new_step(fused)
        # (like torch.full_like: the parameter's shape, dtype, device and memory layout)
        state["sum"] = Tensor._wrap(np.full_like(p._data, initial_accumulator_value))

    def _update(self, p, group):
        state = self.state[p]
        if len(state) == 0:  # a group added later; torch reads the optimizer's default here
            self._init_state(p, self.defaults["initial_accumulator_value"], group["fused"])
        step = increment(state["step"])
        lr, lr_decay, eps = scalar(group["lr"]), group["lr_decay"], group["eps"]
        wd, maximize = group["weight_decay"], bool(group["maximize"])
        state_sum = state["sum"]
        backends.current.adagrad_update(p._data, p.grad._data, state_sum._data, step=step, lr=lr,
                                        lr_decay=lr_decay, weight_decay=wd, eps=eps,
                                        maximize=maximize, fused=group["fused"])
        changed(p, state_sum)
