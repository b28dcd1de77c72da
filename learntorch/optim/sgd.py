"""``SGD``: stochastic gradient descent, optionally with momentum (heavy-ball or Nesterov).

The whole algorithm is ``sgd_update`` below, written on numpy arrays line for
line as torch's single-tensor ``_single_tensor_sgd``, so both libraries give
the same numbers step for step.  With ``g`` the gradient:

    g <- -g                              if maximize
    g <- g + weight_decay * p            if weight_decay != 0   (L2 penalty)
    b <- g (first step), else b <- momentum * b + (1 - dampening) * g
    g <- g + momentum * b  (nesterov)    or   g <- b            if momentum != 0
    p <- p - lr * g

Large parameters are updated by one fused Numba kernel instead (see
``_fused.py``), which computes the same formula in one pass.
"""
import numpy as np

from .._tensor import Tensor
from . import _fused
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
        first = momentum != 0 and buf is None  # the buffer starts as the first gradient
        options = dict(lr=scalar(group["lr"]), weight_decay=group["weight_decay"],
                       momentum=momentum, dampening=group["dampening"],
                       nesterov=bool(group["nesterov"]), maximize=bool(group["maximize"]))
        arrays = [p._data, p.grad._data] + ([] if buf is None else [buf._data])

        if _fused.wanted("sgd", group["fused"], arrays):
            if first:
                buf = Tensor._wrap(np.empty_like(p.grad._data))  # the kernel fills it
            dampening = options.pop("dampening")
            _fused.run("sgd", p._data, p.grad._data, None if buf is None else buf._data,
                       one_minus_dampening=1 - dampening, first=first, **options)
        else:
            new_buf = sgd_update(p._data, p.grad._data, None if buf is None else buf._data,
                                 **options)
            if first:
                buf = Tensor._wrap(new_buf)
        changed(p)
        if buf is not None:
            if not first:
                changed(buf)
            state["momentum_buffer"] = buf


def sgd_update(param, grad, momentum_buffer, *, lr, weight_decay, momentum, dampening,
               nesterov, maximize):
    """One SGD step on numpy arrays: ``param`` (and the buffer) change in place, ``grad`` never.

    ``momentum_buffer`` is None on the first step with momentum; the new buffer
    is returned (None without momentum).
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param
    if momentum != 0:
        if momentum_buffer is None:
            momentum_buffer = grad.copy(order="K")
        else:
            momentum_buffer *= momentum
            momentum_buffer += (1 - dampening) * grad
        if nesterov:
            grad = grad + momentum * momentum_buffer
        else:
            grad = momentum_buffer
    param -= lr * grad
    return momentum_buffer
