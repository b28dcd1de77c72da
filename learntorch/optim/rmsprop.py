"""``RMSprop``: divide each gradient by a running root-mean-square of its recent values.

The update itself is the backend's ``rmsprop_update`` (``backends/numpy_families/optim.py``),
torch's ``_single_tensor_rmsprop`` line for line.  With ``g`` the gradient:

    g <- -g                                  if maximize
    g <- g + wd * p                          if wd != 0
    s <- alpha * s + (1 - alpha) * g * g     (square_avg)
    a <- a + (1 - alpha) * (g - a)           if centered  (grad_avg: a.lerp_(g, 1 - alpha))
    d <- sqrt(s - a * a) + eps  if centered,  else  sqrt(s) + eps
    b <- momentum * b + g / d;  p <- p - lr * b     if momentum > 0  (momentum_buffer)
    p <- p - lr * g / d                             otherwise

``centered`` subtracts the squared mean, so that ``d`` estimates the gradient's
standard deviation rather than its root mean square.  torch's RMSprop has no
``fused`` option; the Numba backend uses its fused kernel whenever it pays.
"""
from .. import backends
from .optimizer import (Optimizer, changed, check_fused, check_lr, increment, new_step, scalar,
                        zeros_state)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_fused(None, foreach, differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["square_avg"] = zeros_state(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_state(p)
            if group["centered"]:
                state["grad_avg"] = zeros_state(p)
        increment(state["step"])  # counted, as in torch, though the update does not use it
        lr, alpha, eps = scalar(group["lr"]), group["alpha"], group["eps"]
        wd, momentum = group["weight_decay"], group["momentum"]
        centered, maximize = bool(group["centered"]), bool(group["maximize"])
        square_avg = state["square_avg"]
        grad_avg = state["grad_avg"] if centered else None
        buf = state["momentum_buffer"] if momentum > 0 else None
        backends.current.rmsprop_update(
            p._data, p.grad._data, square_avg._data,
            None if grad_avg is None else grad_avg._data, None if buf is None else buf._data,
            lr=lr, alpha=alpha, eps=eps, weight_decay=wd, momentum=momentum, centered=centered,
            maximize=maximize)
        changed(p, *[t for t in (square_avg, grad_avg, buf) if t is not None])
