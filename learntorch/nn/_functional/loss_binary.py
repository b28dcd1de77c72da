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
The losses are the backend's (``binary_cross_entropy``,
``binary_cross_entropy_with_logits``); the gradients are written with tensor ops.
"""
from ... import backends
from ...autograd.function import Function
from ...ops._helpers import wrap
from ...ops.activations import softplus
from .loss_reduction import per_element_grad

_EPSILON = 1e-12  # torch's floor for p * (1 - p) in the gradient


def _data(t):
    return None if t is None else t._data


class BinaryCrossEntropy(Function):
    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        ctx.save_for_backward(input, target, weight)
        ctx.reduction = reduction
        loss = backends.current.binary_cross_entropy(input._data, target._data, _data(weight))
        return wrap(backends.current.loss_reduction(loss, reduction))

    @staticmethod
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        g = per_element_grad(grad, ctx.reduction, input.numel())
        if weight is not None:
            g = g * weight
        needs = ctx.needs_input_grad
        gx = (input - target) / ((1 - input) * input).clamp(min=_EPSILON) * g if needs[0] else None
        # (p = 0 or 1: torch's gradient of the target is infinite too)
        gt = ((1 - input).log() - input.log()) * g if needs[1] else None
        return gx, gt, None, None


class BinaryCrossEntropyWithLogits(Function):
    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction = reduction
        loss = backends.current.binary_cross_entropy_with_logits(
            input._data, target._data, _data(weight), _data(pos_weight))
        return wrap(backends.current.loss_reduction(loss, reduction))

    @staticmethod
    def backward(ctx, grad):
        x, y, w, pw = ctx.saved_tensors
        g = per_element_grad(grad, ctx.reduction, x.numel())
        if w is not None:
            g = g * w
        needs = ctx.needs_input_grad
        gx = gt = None
        if needs[0]:
            sig = x.sigmoid()
            gx = ((1 + (pw - 1) * y) * sig - pw * y if pw is not None else sig - y) * g
        if needs[1]:
            log_sig = -softplus(-x)  # log(sigmoid(x)), without overflow
            gt = (-x - (pw - 1) * log_sig if pw is not None else -x) * g
        return gx, gt, None, None, None
