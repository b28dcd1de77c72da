"""Regression losses: how far ``input`` is from ``target``, element by element.

With d = input - target (broadcast), and g the gradient of each element's loss
(``grad`` or ``grad / count``, see ``loss_reduction``):

=============  =================================  =================================
loss           per element                        d(loss)/d(input) = -d(loss)/d(target)
=============  =================================  =================================
MSE            d**2                               2 d g
Huber(delta)   d**2 / 2           if |d| < delta  clamp(d, -delta, delta) g
               delta (|d| - delta/2) otherwise
SmoothL1(beta) d**2 / (2 beta)    if |d| < beta   clamp(d, -beta, beta) / beta g
               |d| - beta/2       otherwise
=============  =================================  =================================

Huber and SmoothL1 are the same curve scaled: SmoothL1(beta) = Huber(beta) / beta.
Both are quadratic near 0 (smooth gradients for small errors) and linear far out
(an outlier pulls with a bounded force, unlike MSE).  L1 = |d| has no Function of
its own: as in torch it is ``abs(input - target)`` followed by mean or sum.

Each is one ``Function`` (one node, named as torch's) whose forward is the backend's
per-element loss and ``loss_reduction``.  MSE's derivative is the backend's
``mse_loss_backward`` (one pass, an op of its own for second derivatives); the other
two are written with tensor ops.
"""
from ... import backends
from ...autograd.function import Function
from ...ops._helpers import wrap
from .loss_reduction import per_element_grad


class _PointwiseLoss(Function):
    """forward/backward shared by the three: backend ``<name>`` and the derivative below."""

    backend_method = None

    @classmethod
    def forward(cls, ctx, input, target, reduction, param):
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.param = reduction, param
        loss = getattr(backends.current, cls.backend_method)(input._data, target._data,
                                                             *(() if param is None else (param,)))
        ctx.count = loss.size
        return wrap(backends.current.loss_reduction(loss, reduction))

    @classmethod
    def backward(cls, ctx, grad):
        input, target = ctx.saved_tensors
        g = per_element_grad(grad, ctx.reduction, ctx.count)
        # the gradient has the broadcast shape; the engine sums it back to each input's shape
        gx = cls.derivative(g, input, target, ctx.param)
        gt = -gx if ctx.needs_input_grad[1] else None
        return (gx if ctx.needs_input_grad[0] else None), gt, None, None


class MseLoss(_PointwiseLoss):
    node_name = "MseLossBackward0"
    backend_method = "mse_loss"

    @staticmethod
    def derivative(g, input, target, param):
        return MseLossBackward.apply(g, input, target)  # 2 (input - target) g


class MseLossBackward(Function):
    """2 * (input - target) * grad, in one backend pass (torch's mse_loss_backward)."""

    node_name = "MseLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target):
        ctx.save_for_backward(grad, input, target)
        return wrap(backends.current.mse_loss_backward(input._data, target._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        # linear in grad (d/dgrad = the same op on gg); d/dinput = 2 gg grad = -d/dtarget
        grad, input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        d_grad = MseLossBackward.apply(gg, input, target) if needs[0] else None
        d_input = 2 * gg * grad if needs[1] or needs[2] else None
        return d_grad, (d_input if needs[1] else None), (-d_input if needs[2] else None)


class HuberLoss(_PointwiseLoss):
    node_name = "HuberLossBackward0"
    backend_method = "huber_loss"

    @staticmethod
    def derivative(g, input, target, delta):
        return (input - target).clamp(-delta, delta) * g


class SmoothL1Loss(_PointwiseLoss):
    node_name = "SmoothL1LossBackward0"
    backend_method = "smooth_l1_loss"

    @staticmethod
    def derivative(g, input, target, beta):
        return (input - target).clamp(-beta, beta) / beta * g
