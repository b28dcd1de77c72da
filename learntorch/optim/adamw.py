"""``AdamW``: Adam with *decoupled* weight decay (Loshchilov & Hutter).

Adam's ``weight_decay`` adds ``wd * p`` to the gradient, so the decay is then
rescaled by Adam's per-element step size -- large for rarely-updated weights,
small for busy ones.  AdamW instead shrinks the weights directly,
``p <- p * (1 - lr * wd)``, before the Adam step, the same for every weight.
As in torch 2.13 it is ``Adam(..., decoupled_weight_decay=True)``, with a
default ``weight_decay`` of 1e-2 instead of 0.
"""
from .adam import Adam


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
