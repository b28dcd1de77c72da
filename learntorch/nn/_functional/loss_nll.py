"""``nll_loss``: the negative log-likelihood of the target class.

The input already holds log-probabilities (the output of ``log_softmax``); the
loss of one row (sample or position) just *picks* the target class's entry:

    loss_r = -w[t_r] * input[r, t_r]          (0 where t_r == ignore_index)

and 'mean' divides the sum by sum_r w[t_r] over the rows that were not ignored
(the number of such rows without a weight).  Picking is linear, so the
gradient is that pick run backwards: ``-w[t_r] * g_r`` at the target class of
each row, 0 everywhere else.

``cross_entropy`` does log_softmax and this pick in one fused step
(``loss_cross_entropy.py``); ``nll_loss`` is the second half on its own.
"""
import numpy as np

from ...autograd.function import Function
from ...ops._helpers import recording_gradient_graph, wrap
from ...ops.comparison import where
from .loss_class_targets import (class_dim, from_rows, grad_per_row, ignored_rows_zero,
                                 loss_shape, row_weights, target_rows, to_rows, working_dtype)
from .loss_reduction import per_element_grad, reduce_array


class NllLoss(Function):
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction):
        ctx.save_for_backward(input, target, weight)  # what torch's node keeps (version checks)
        logp = to_rows(input._data)
        dtype = working_dtype(logp)
        t, valid = target_rows(target._data, logp.shape[1], ignore_index)
        wt = row_weights(None if weight is None else weight._data, t, valid, dtype)
        picked = logp[np.arange(len(t)), t].astype(dtype, copy=False)
        loss = np.where(valid, -wt * picked, 0).astype(dtype, copy=False)
        ctx.t, ctx.valid, ctx.wt, ctx.reduction = t, valid, wt, reduction
        ctx.denominator = float(wt.sum())
        out = reduce_array(loss.reshape(loss_shape(input.shape)), reduction, ctx.denominator)
        return wrap(out.astype(input._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, _, _ = ctx.saved_tensors
        rows = np.arange(len(ctx.t))
        if recording_gradient_graph():
            # the pick as a constant (M, C) matrix: the gradient is linear in grad
            picks = np.zeros(to_rows(input._data).shape, dtype=input._data.dtype)
            picks[rows, ctx.t] = -ctx.wt
            g = per_element_grad(grad, ctx.reduction, ctx.denominator)
            if ctx.reduction == "none" and input.ndim > 1:
                g = g.unsqueeze(class_dim(input))
            gx = wrap(from_rows(picks, input.shape)) * g
            if not ctx.valid.all():  # ignored rows stay 0 even when g is NaN (a 0 / 0 mean)
                counted = np.zeros(picks.shape, dtype=bool)
                counted[rows[ctx.valid], ctx.t[ctx.valid]] = True
                gx = where(wrap(from_rows(counted, input.shape)), gx, 0.0)
            return gx, None, None, None, None
        g = per_element_grad(grad._data, ctx.reduction, ctx.denominator)
        g = ignored_rows_zero(grad_per_row(g, ctx.reduction, len(rows)), ctx.valid)
        gx = np.zeros(to_rows(input._data).shape, dtype=input._data.dtype)
        gx[rows, ctx.t] = -ctx.wt * g
        return wrap(from_rows(gx, input.shape)), None, None, None, None
