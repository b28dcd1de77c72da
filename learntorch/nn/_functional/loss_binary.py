"""Binary cross-entropy: one yes/no question per element, target y in [0, 1].

``binary_cross_entropy`` takes probabilities p (the output of a sigmoid):

    loss = -w * (y * log(p) + (1 - y) * log(1 - p))

torch clamps each ``log`` to >= -100, so p = 0 or 1 gives a large finite loss
instead of inf, and divides the gradient  w * (p - y) / (p * (1 - p))  by at
least 1e-12.  Both clamps are copied here: the point is to agree with torch.

``binary_cross_entropy_with_logits`` takes the logit x instead (p = sigmoid(x))
and never forms p for the loss.  With log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)),
which cannot overflow, and a per-class ``pos_weight`` (pw) that scales the
positive term:

    loss = w * ((1 - y) * x - (1 + (pw - 1) * y) * log(sigmoid(x)))
    d loss / d x = w * ((1 + (pw - 1) * y) * sigmoid(x) - pw * y)
    d loss / d y = w * (-x - (pw - 1) * log(sigmoid(x)))

so logits of +-1000 give finite losses and gradients.  That is why a model
should end in a plain linear layer and use the ``_with_logits`` loss, rather
than a sigmoid followed by ``binary_cross_entropy``.

``w`` (weight) and ``pw`` are constants: like torch, neither gets a gradient.
"""
import numpy as np

from ... import backends
from ...autograd.function import Function
from ...ops._helpers import as_array, recording_gradient_graph, wrap
from ...ops.activations import softplus
from .loss_reduction import per_element_grad, reduce_array

_EPSILON = 1e-12  # torch's floor for p * (1 - p) in the gradient


def _check_unit_interval(a, what):
    inside = (a >= 0) & (a <= 1)  # False for NaN too, as in torch
    if not inside.all():
        outside = a[~inside]
        raise RuntimeError(f"all elements of {what} should be between 0 and 1 "
                           f"(binary_cross_entropy got {outside.size} outside, e.g. "
                           f"{outside.flat[0]}); pass probabilities, e.g. torch.sigmoid(logits), "
                           "or use binary_cross_entropy_with_logits on the logits")


class BinaryCrossEntropy(Function):
    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        ctx.save_for_backward(input, target, weight)
        ctx.reduction = reduction
        p, y = input._data, target._data
        _check_unit_interval(p, "input")
        _check_unit_interval(y, "target")
        with np.errstate(divide="ignore"):
            log_p = np.maximum(np.log(p), -100)
            log_1mp = np.maximum(np.log1p(-p), -100)
        loss = -(y * log_p + (1 - y) * log_1mp)
        if weight is not None:
            loss = loss * weight._data
        return wrap(reduce_array(loss.astype(p.dtype, copy=False), reduction))

    @staticmethod
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        count = input.numel()
        needs = ctx.needs_input_grad
        gx = gt = None
        if recording_gradient_graph():
            g = per_element_grad(grad, ctx.reduction, count)
            if weight is not None:
                g = g * weight
            if needs[0]:
                gx = (input - target) / ((1 - input) * input).clamp(min=_EPSILON) * g
            if needs[1]:
                gt = ((1 - input).log() - input.log()) * g
            return gx, gt, None, None
        p, y = input._data, target._data
        g = per_element_grad(grad._data, ctx.reduction, count)
        if weight is not None:
            g = g * weight._data
        if needs[0]:
            gx = wrap(as_array((p - y) / np.maximum((1 - p) * p, _EPSILON) * g, dtype=p.dtype))
        if needs[1]:
            with np.errstate(divide="ignore"):  # p = 0 or 1: torch's gradient is infinite too
                gt = wrap(as_array((np.log1p(-p) - np.log(p)) * g, dtype=p.dtype))
        return gx, gt, None, None


def _log_sigmoid(x):
    """log(sigmoid(x)) without overflow: min(x, 0) - log(1 + exp(-|x|))."""
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


class BinaryCrossEntropyWithLogits(Function):
    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction = reduction
        x, y = input._data, target._data
        log_sig = _log_sigmoid(x)
        if pos_weight is not None:
            loss = (1 - y) * x - (1 + (pos_weight._data - 1) * y) * log_sig
        else:
            loss = (1 - y) * x - log_sig
        if weight is not None:
            loss = loss * weight._data
        return wrap(reduce_array(loss.astype(x.dtype, copy=False), ctx.reduction))

    @staticmethod
    def backward(ctx, grad):
        input, target, weight, pos_weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        recording = recording_gradient_graph()
        if recording:
            x, y, g = input, target, per_element_grad(grad, ctx.reduction, input.numel())
            w = weight
            pw = pos_weight
            sig = x.sigmoid()
        else:
            x, y = input._data, target._data
            g = per_element_grad(grad._data, ctx.reduction, x.size)
            w = None if weight is None else weight._data
            pw = None if pos_weight is None else pos_weight._data
            sig = None if not needs[0] else as_array(backends.current.sigmoid(x))
        if w is not None:
            g = g * w
        gx = gt = None
        if needs[0]:
            gx = ((1 + (pw - 1) * y) * sig - pw * y if pw is not None else sig - y) * g
        if needs[1]:
            log_sig = -softplus(-x) if recording else _log_sigmoid(x)
            gt = (-x - (pw - 1) * log_sig if pw is not None else -x) * g
        if not recording:
            gx = None if gx is None else wrap(as_array(gx, dtype=x.dtype))
            gt = None if gt is None else wrap(as_array(gt, dtype=y.dtype))
        return gx, gt, None, None, None
