"""``nll_loss``: the negative log-likelihood of the target class.

The input already holds log-probabilities (the output of ``log_softmax``); the
loss of one row (sample or position) just *picks* the target class's entry:

    loss_r = -w[t_r] * input[r, t_r]          (0 where t_r == ignore_index)

and 'mean' divides the sum by sum_r w[t_r] over the rows that were not ignored
(the number of such rows without a weight).  Picking is linear, so the
gradient is that pick run backwards: ``-w[t_r] * g_r`` at the target class of
each row, 0 everywhere else -- the backend's ``nll_loss_rows_backward``, an op of
its own (``NllLossBackward``) so that it can be differentiated again.

``cross_entropy`` does log_softmax and this pick in one fused step
(``loss_cross_entropy.py``); ``nll_loss`` is the second half on its own.
"""
from ... import backends
from ...autograd.function import Function
from ...factories import zeros_like
from ...ops._helpers import wrap
from .loss_class_targets import class_dim, from_rows, loss_shape, to_rows, working_dtype
from .loss_cross_entropy import ClassTargets
from .loss_reduction import per_element_grad


class NllLoss(Function):
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction):
        ctx.save_for_backward(input, target, weight)  # what torch's node keeps (version checks)
        logp = to_rows(input._data)
        dtype = working_dtype(logp)
        targets = ClassTargets(target._data.reshape(-1),
                               None if weight is None else weight._data.astype(dtype, copy=False),
                               ignore_index, 0.0)
        losses, total_weight = backends.current.nll_loss_rows(
            logp.astype(dtype, copy=False), *targets[:3])
        ctx.targets, ctx.reduction, ctx.total_weight = targets, reduction, total_weight
        out = backends.current.loss_reduction(losses.reshape(loss_shape(input.shape)), reduction,
                                              total_weight)
        return wrap(out.astype(input._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        g = per_element_grad(grad, ctx.reduction, ctx.total_weight)
        return NllLossBackward.apply(g, input, target, ctx.targets), None, None, None, None


class NllLossBackward(Function):
    """-w[t_r] * g_r at each row's class, 0 elsewhere: the pick run backwards.

    ``input`` is an argument for its shape and dtype, and so that the result records the
    graph as torch's does (its derivative by the input is 0: the pick is linear).
    """

    node_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, targets):
        ctx.save_for_backward(input)
        ctx.target, ctx.targets, ctx.scalar_grad = target, targets, grad.ndim == 0
        n_rows = targets.classes.shape[0]
        row_grad = backends.current.broadcast_to(grad._data.reshape(-1), (n_rows,))
        gx = backends.current.nll_loss_rows_backward(*targets[:3], row_grad,
                                                     input.shape[class_dim(input)])
        return wrap(from_rows(gx.astype(input._data.dtype, copy=False), input.shape))

    @staticmethod
    def backward(ctx, gg):
        # linear in g: d/dg_r = -w[t_r] * gg[r, t_r], which is nll_loss of gg itself
        input, = ctx.saved_tensors
        needs = ctx.needs_input_grad
        d_grad = d_input = None
        if needs[0]:
            weight = ctx.targets.weight
            per_row = NllLoss.apply(gg, ctx.target, None if weight is None else wrap(weight),
                                    ctx.targets.ignore_index, "none")
            d_grad = per_row.sum() if ctx.scalar_grad else per_row
        if needs[1]:
            d_input = zeros_like(input)
        return d_grad, d_input, None, None

