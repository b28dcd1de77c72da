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

Each is one ``Function`` (one node, named as torch's).  Backward has two paths
with the same formula: numpy arrays (fast), or tensor ops when
``create_graph=True`` asks for a gradient that can itself be differentiated.
"""
import numpy as np

from ...autograd.function import Function
from ...ops._helpers import as_array, recording_gradient_graph, wrap
from .loss_reduction import per_element_grad, reduce_array


class _PointwiseLoss(Function):
    """forward/backward shared by the three; subclasses give the two formulas."""

    @staticmethod
    def loss(d, param):
        raise NotImplementedError

    @staticmethod
    def derivative(d, param):
        """d(loss)/d(d), on an array or a tensor ``d``."""
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, input, target, reduction, param):
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.param = reduction, param
        d = as_array(input._data - target._data)  # (numpy makes 0-dim results scalars)
        ctx.count = d.size
        return wrap(reduce_array(cls.loss(d, param), reduction))

    @classmethod
    def backward(cls, ctx, grad):
        input, target = ctx.saved_tensors
        if recording_gradient_graph():
            d = input - target
            g = per_element_grad(grad, ctx.reduction, ctx.count)
        else:
            d = as_array(input._data - target._data)
            g = per_element_grad(grad._data, ctx.reduction, ctx.count)
        # the gradient has the broadcast shape; the engine sums it back to each input's shape
        gx = cls.derivative(d, ctx.param) * g
        if not recording_gradient_graph():
            gx = wrap(as_array(gx, dtype=d.dtype))
        gt = -gx if ctx.needs_input_grad[1] else None
        return (gx if ctx.needs_input_grad[0] else None), gt, None, None


class MseLoss(_PointwiseLoss):
    node_name = "MseLossBackward0"

    @staticmethod
    def loss(d, param):
        return d * d

    @staticmethod
    def derivative(d, param):
        return 2 * d


class HuberLoss(_PointwiseLoss):
    node_name = "HuberLossBackward0"

    @staticmethod
    def loss(d, delta):
        z = np.abs(d)
        return np.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta)).astype(d.dtype)

    @staticmethod
    def derivative(d, delta):
        if isinstance(d, np.ndarray):
            return np.clip(d, -delta, delta)
        return d.clamp(-delta, delta)


class SmoothL1Loss(_PointwiseLoss):
    node_name = "SmoothL1LossBackward0"

    @staticmethod
    def loss(d, beta):
        z = np.abs(d)
        return np.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta).astype(d.dtype)

    @staticmethod
    def derivative(d, beta):
        return HuberLoss.derivative(d, beta) / beta
