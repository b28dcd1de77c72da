"""Array backward of the losses a training step ends in: cross-entropy, nll, mse.

Each entry makes the reference ``backward``'s backend calls, in its order, on arrays:
the reduction's backward (``grad / count`` for 'mean', as ``per_element_grad``'s tensor
division computes it) and then the derivative op's forward (``CrossEntropyBackward``,
``NllLossBackward``, ``MseLossBackward``) -- without building the two Tensors and
running ``Function.apply`` twice per step.
"""
from ... import backends
from ...nn._functional import loss_cross_entropy, loss_nll, loss_regression
from ...nn._functional.loss_class_targets import from_rows
from ..arithmetic import float_constant
from .registry import register as _register


def _per_element(grad, reduction, count):
    """``per_element_grad`` on an array: ``Div.forward`` of ``grad / float(count)``."""
    if reduction != "mean":
        return grad
    return backends.current.div(grad, float_constant(float(count), grad))


def _row_grad(grad, n_rows):
    """What the derivative ops hand the backend: one gradient per row (a broadcast view)."""
    return backends.current.broadcast_to(grad.reshape(-1), (n_rows,))


@_register(loss_cross_entropy.CrossEntropy)
def cross_entropy_backward(ctx, grad):
    """Replaces ``CrossEntropy.backward`` (``per_element_grad``, then
    ``CrossEntropyBackward.forward``)."""
    logp, = ctx.saved_tensors
    g = _per_element(grad, ctx.reduction, ctx.total_weight)
    gx = backends.current.cross_entropy_rows_backward(
        logp._data, *ctx.targets, _row_grad(g, logp._data.shape[0]))
    input = ctx.input
    return (from_rows(gx.astype(input._data.dtype, copy=False), input._data.shape),
            None, None, None, None, None)


@_register(loss_nll.NllLoss)
def nll_loss_backward(ctx, grad):
    """Replaces ``NllLoss.backward`` (``per_element_grad``, then ``NllLossBackward.forward``)."""
    input, _, _ = ctx.saved_tensors
    targets = ctx.targets
    g = _per_element(grad, ctx.reduction, ctx.total_weight)
    gx = backends.current.nll_loss_rows_backward(
        *targets[:3], _row_grad(g, targets.classes.shape[0]),
        input._data.shape[0 if input._data.ndim == 1 else 1])
    return (from_rows(gx.astype(input._data.dtype, copy=False), input._data.shape),
            None, None, None, None)


@_register(loss_regression.MseLoss)
def mse_loss_backward(ctx, grad):
    """Replaces ``MseLoss.backward`` (``per_element_grad``, ``MseLossBackward.forward``, and
    the negation of the result for the target)."""
    input, target = ctx.saved_tensors
    g = _per_element(grad, ctx.reduction, ctx.count)
    gx = backends.current.mse_loss_backward(input._data, target._data, g)
    needs = ctx.needs_input_grad
    return (gx if needs[0] else None), (-gx if needs[1] else None), None, None
