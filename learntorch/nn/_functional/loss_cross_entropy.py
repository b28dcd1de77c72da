"""``cross_entropy``: log_softmax and the negative log-likelihood, fused into one node.

For one row of logits x (a sample, or one position of a K-dimensional input)
with C classes, and a *target distribution* q over the classes:

    loss = -sum_c q_c * log_softmax(x)_c

What q is depends on the target (eps = label_smoothing, w = class weights,
all 1 when no weight is given, t = the class number of an index target):

* class index t:          q_c = (1 - eps) * w_t * [c == t]  +  eps / C * w_c
                          (q = 0 for a row whose t is ignore_index)
* class probabilities y:  q_c = ((1 - eps) * y_c + eps / C) * w_c

'mean' divides the summed loss by sum_r w[t_r] over the rows not ignored
(index targets) or by the number of rows (probability targets), as torch.

**Why fuse.**  With p = softmax(x) and a = sum_c q_c, the gradient is

    d loss / d x_c = a * p_c - q_c

(for one-hot q and no weight: p - onehot(t)), one short rule where the
unfused graph would run log_softmax's backward and then the pick's.  The
forward never takes ``log`` of a softmax that underflowed to 0: log_softmax
is computed as ``(x - max) - log(sum(exp(x - max)))``, so logits of +-1000 give
finite losses and gradients in float32.  The graph gets one node, which
matters for a small MLP whose whole training step is a handful of nodes.

With probability targets the target is differentiable too:
d loss / d y_c = -(1 - eps) * w_c * log_softmax(x)_c, and so are the class
weights: d loss / d w_c = -((1 - eps) * y_c + eps / C) * log_softmax(x)_c.

Every gradient is multiplied by the gradient of the row's loss (``grad``,
``grad / denominator`` for 'mean').  Backward computes the rule on arrays, or,
under ``create_graph=True``, from tensor ops (softmax, log_softmax, mul), so
the gradient can be differentiated once more.
"""
import numpy as np

from ... import backends
from ...autograd.function import Function
from ...backends.numba_cpu import tuning
from ...backends.numba_cpu.loader import kernels, layer_kernel_serves
from ...ops._helpers import as_array, recording_gradient_graph, wrap
from ...ops.comparison import where
from ...ops.softmax import log_softmax, softmax
from .loss_class_targets import (class_dim, from_rows, grad_per_row, ignored_rows_zero,
                                 loss_shape, row_weights, target_rows, to_rows, working_dtype)
from .loss_reduction import per_element_grad, reduce_array


class CrossEntropy(Function):
    node_name = "CrossEntropyLossBackward0"  # torch's unfused graph: NllLossBackward0 <- LogSoftmax

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, label_smoothing, reduction):
        label_smoothing = max(label_smoothing, 0.0)  # torch ignores a negative value
        ctx.fused = (weight is None and label_smoothing == 0
                     and _fused_kernel_serves(input._data, target._data))
        if ctx.fused:
            return _fused_forward(ctx, input, target, ignore_index, reduction)
        x = to_rows(input._data)
        dtype = working_dtype(x)
        logp = _log_softmax_rows(x.astype(dtype, copy=False))
        w = None if weight is None else weight._data.astype(dtype, copy=False)
        ctx.index_target = not target._dtype.is_floating_point
        if ctx.index_target:
            loss, denominator = _index_forward(ctx, logp, target._data, w, ignore_index,
                                               label_smoothing)
        else:
            loss, denominator = _probability_forward(ctx, logp, to_rows(target._data), w,
                                                     label_smoothing)
        # logp is saved as the tensor torch's log_softmax node would keep; the input is kept
        # (not saved) for create_graph only, with its version checked there
        ctx.save_for_backward(wrap(logp))
        ctx.input, ctx.input_version = input, input._version_counter[0]
        ctx.target, ctx.weight = target, weight
        ctx.label_smoothing, ctx.reduction, ctx.denominator = (label_smoothing, reduction,
                                                               denominator)
        out = reduce_array(loss.reshape(loss_shape(input.shape)), reduction, denominator)
        return wrap(out.astype(input._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        logp, = ctx.saved_tensors
        if recording_gradient_graph():
            return _differentiable_backward(ctx, grad)
        if ctx.fused:
            return _fused_backward(ctx, grad, logp) + (None,) * 5
        shape = ctx.input.shape
        g = per_element_grad(grad._data, ctx.reduction, ctx.denominator)
        g = grad_per_row(g, ctx.reduction, logp.shape[0])
        if ctx.index_target:
            g = ignored_rows_zero(g, ctx.valid)
        g_rows = g[:, None] if np.ndim(g) else g
        needs = ctx.needs_input_grad
        gx = gt = gw = None
        if needs[0]:
            p = np.exp(logp._data)
            if ctx.index_target:
                gx = _index_grad(ctx, p, g)
            else:
                gx = (p * ctx.q.sum(axis=1, keepdims=True) - ctx.q) * g_rows
            gx = wrap(from_rows(gx.astype(ctx.input._data.dtype, copy=False), shape))
        if not ctx.index_target and needs[1]:
            scaled = -(1 - ctx.label_smoothing) * logp._data * g_rows
            if ctx.weight is not None:
                scaled = scaled * ctx.weight._data
            gt = wrap(from_rows(scaled.astype(ctx.target._data.dtype, copy=False), shape))
        if not ctx.index_target and needs[2]:
            gw = wrap(-(ctx.smoothed * logp._data * g_rows).sum(axis=0)
                      .astype(ctx.weight._data.dtype, copy=False))
        return gx, gt, gw, None, None, None


#: smallest logits array (elements) for the fused kernels (backends/numba_cpu/cross_entropy.py):
#: a classifier's batch, not a toy (which should not have to load Numba)
FUSED_KERNEL_MIN_SIZE = tuning.threshold("layer_min_sizes", "cross_entropy")  # (tuning.json)


def _fused_kernel_serves(x, target):
    """The common case the kernels take: (N, C) float32/64 logits, N int64 class numbers."""
    return (x.ndim == 2 and target.dtype == np.int64 and target.ndim == 1
            and layer_kernel_serves(x, FUSED_KERNEL_MIN_SIZE)
            and x.flags.c_contiguous and target.flags.c_contiguous)


def _fused_forward(ctx, input, target, ignore_index, reduction):
    """Log-softmax, the pick of each target and the row count in one kernel call."""
    x, t = input._data, target._data
    logp, losses = np.empty_like(x), np.empty(x.shape[0], x.dtype)
    counted = kernels("cross_entropy").cross_entropy_rows(x, t, ignore_index, logp, losses)
    if counted < 0:
        target_rows(t, x.shape[1], ignore_index)  # raises torch's IndexError for the bad row
    ctx.save_for_backward(wrap(logp))
    ctx.input, ctx.input_version = input, input._version_counter[0]
    ctx.index_target, ctx.target, ctx.weight, ctx.ignore_index = True, target, None, ignore_index
    ctx.label_smoothing, ctx.reduction, ctx.denominator = 0.0, reduction, float(counted)
    return wrap(reduce_array(losses, reduction, counted).astype(x.dtype, copy=False))


def _fused_backward(ctx, grad, logp):
    """(softmax - onehot) * the gradient of each row's loss, in one kernel call."""
    n_rows = logp.shape[0]
    g = per_element_grad(grad._data, ctx.reduction, ctx.denominator)
    row_grad = (np.ascontiguousarray(g.reshape(n_rows)) if ctx.reduction == "none"
                else np.full(n_rows, g, dtype=logp._data.dtype))
    gx = np.empty_like(logp._data)
    kernels("cross_entropy").cross_entropy_rows_backward(
        logp._data, ctx.target._data, ctx.ignore_index, row_grad, gx)
    return (wrap(gx),)


def _index_state(ctx):
    """What the numpy path's forward keeps about the targets (class numbers, rows counted,
    their weights), for a fused node that needs it after all (create_graph's backward)."""
    if not hasattr(ctx, "t"):
        logp = ctx.saved_tensors[0]._data
        ctx.t, ctx.valid = target_rows(ctx.target._data, logp.shape[1], ctx.ignore_index)
        ctx.wt = row_weights(None, ctx.t, ctx.valid, logp.dtype)


def _log_softmax_rows(x):
    """log_softmax over the classes (the last axis) by the active backend; empty stays empty."""
    if x.size == 0:
        return x.copy()
    return as_array(backends.current.log_softmax(x, 1))


def _index_forward(ctx, logp, target, w, ignore_index, eps):
    """Per-row losses and the 'mean' denominator for class-index targets."""
    n_rows, n_classes = logp.shape
    t, valid = target_rows(target, n_classes, ignore_index)
    wt = row_weights(w, t, valid, logp.dtype)
    all_valid = valid.all()
    loss = -wt * logp[np.arange(n_rows), t]
    if not all_valid:  # (0 * -inf would be NaN where an ignored row has a -inf logit)
        loss = np.where(valid, loss, 0)
    if eps > 0:
        # torch's label smoothing: the eps / C part of q spreads over every class
        spread = logp.sum(axis=1) if w is None else logp @ w
        if not all_valid:
            spread = np.where(valid, spread, 0)
        loss = (1 - eps) * loss - (eps / n_classes) * spread
    ctx.t, ctx.valid, ctx.wt = t, valid, wt
    ctx.w_total = n_classes if w is None else float(w.sum())
    return loss.astype(logp.dtype, copy=False), float(wt.sum())


def _index_grad(ctx, p, g):
    """g * (a * p - q), without building a dense q: q is a one-hot part (plus a spread part).

    Overwrites ``p`` (the softmax backward just computed) with the result.
    """
    n_rows, n_classes = p.shape
    eps = ctx.label_smoothing
    onehot = (1 - eps) * ctx.wt * g                    # per row: weight of q's one-hot part, * g
    a = onehot                                         # per row: a = sum_c q_c, * g
    if eps:
        spread = (eps / n_classes) * ctx.valid * g     # per row: scale of q's spread part, * g
        a = onehot + spread * ctx.w_total
    gx = p                                             # p is fresh: scale it in place
    gx *= a[:, None]
    gx[np.arange(n_rows), ctx.t] -= onehot
    if eps:
        gx -= spread[:, None] * (1.0 if ctx.weight is None else ctx.weight._data)
    return gx


def _probability_forward(ctx, logp, y, w, eps):
    """Per-row losses and the 'mean' denominator (the number of rows) for class probabilities."""
    n_rows, n_classes = logp.shape
    smoothed = y * (1 - eps) + eps / n_classes if eps > 0 else y
    q = smoothed * w if w is not None else smoothed
    ctx.smoothed, ctx.q = smoothed, q
    # torch's denominator, numel / C, is NaN for an empty input
    return -(logp * q).sum(axis=1), (n_rows if n_rows else float("nan"))


def _per_row(values, shape, dim):
    """One value per row, shaped like the input with its class dim of size 1 (broadcasts)."""
    return wrap(from_rows(values.reshape(-1, 1),
                          tuple(shape[:dim]) + (1,) + tuple(shape[dim + 1:])))


def _differentiable_backward(ctx, grad):
    """The same gradients from tensor ops, so that create_graph=True can differentiate them."""
    input, target, weight = ctx.input, ctx.target, ctx.weight
    if input._version_counter[0] != ctx.input_version:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: the input of {ctx.name()} is at version "
            f"{input._version_counter[0]}; expected version {ctx.input_version}. Differentiate "
            "a copy (x.clone()) or use the out-of-place form of the operation.")
    if ctx.index_target:
        _index_state(ctx)
    dim = class_dim(input)
    g = per_element_grad(grad, ctx.reduction, ctx.denominator)
    if ctx.reduction == "none" and input.ndim > 1:
        g = g.unsqueeze(dim)
    if ctx.index_target and not ctx.valid.all():
        g = where(_per_row(ctx.valid, input.shape, dim), g, 0.0)
    # the class weights shaped to broadcast along the class dim
    w_shape = [1] * input.ndim
    w_shape[dim] = -1
    w = None if weight is None else weight.reshape(w_shape)
    if ctx.index_target:
        q_rows = np.zeros(to_rows(input._data).shape, dtype=input._data.dtype)
        n_rows = q_rows.shape[0]
        eps = ctx.label_smoothing
        q_rows[np.arange(n_rows), ctx.t] = (1 - eps) * ctx.wt
        if eps:
            w_row = 1.0 if weight is None else weight._data
            q_rows += (eps / q_rows.shape[1]) * ctx.valid[:, None] * w_row
        q = wrap(from_rows(q_rows, input.shape))
        a = _per_row(q_rows.sum(axis=1), input.shape, dim)
        return (softmax(input, dim) * a - q) * g, None, None, None, None, None
    eps = ctx.label_smoothing
    n_classes = input.shape[dim]
    smoothed = target * (1 - eps) + eps / n_classes if eps else target
    q = smoothed * w if w is not None else smoothed
    needs = ctx.needs_input_grad
    gx = gt = gw = None
    if needs[0]:
        gx = (softmax(input, dim) * q.sum(dim=dim, keepdim=True) - q) * g
    if needs[1] or needs[2]:
        logp = log_softmax(input, dim)
        if needs[1]:
            gt = -(1 - eps) * logp * g
            gt = gt * w if w is not None else gt
        if needs[2]:
            other = tuple(d for d in range(input.ndim) if d != dim)
            gw = -(smoothed * logp * g).sum(dim=other) if other else -(smoothed * logp * g)
    return gx, gt, gw, None, None, None
