"""``SGD``: stochastic gradient descent, optionally with momentum (heavy-ball or Nesterov).

The update itself is the backend's ``sgd_update`` (``backends/numpy_families/optim.py``),
torch's single-tensor ``_single_tensor_sgd`` line for line, so both libraries give the
same numbers step for step.  With ``g`` the gradient:

    g <- -g                              if maximize
    g <- g + weight_decay * p            if weight_decay != 0   (L2 penalty)
    b <- g (first step), else b <- momentum * b + (1 - dampening) * g
    g <- g + momentum * b  (nesterov)    or   g <- b            if momentum != 0
    p <- p - lr * g

This file keeps the options and the state (the momentum buffer); the Numba backend
updates large parameters with one fused kernel computing the same formula in one pass.
"""
from .. import backends
from .._tensor import Tensor
from .optimizer import Optimizer, changed, check_fused, check_lr, scalar


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_fused(fused, foreach, differentiable)
        super().__init__(params, defaults)

    def _update(self, p, group):
        momentum = group["momentum"]
        state = self.state[p] if momentum != 0 else {}  # plain SGD keeps no state
        buf = state.get("momentum_buffer")
        new_buf = backends.current.sgd_update(
            p._data, p.grad._data, None if buf is None else buf._data, lr=scalar(group["lr"]),
            weight_decay=group["weight_decay"], momentum=momentum,
            dampening=group["dampening"], nesterov=bool(group["nesterov"]),
            maximize=bool(group["maximize"]), fused=group["fused"])
        changed(p)
        if buf is not None:
            changed(buf)
        elif new_buf is not None:  # the first step with momentum: the buffer starts as g
            state["momentum_buffer"] = Tensor._wrap(new_buf)
