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

The arithmetic is the backend's (``backends/numpy_families/losses.py``):
``cross_entropy_rows`` forward, ``cross_entropy_rows_backward`` for the rule above
-- the Numba backend runs both as one-pass kernels for a classifier's batch.  The
rule is itself an op (``CrossEntropyBackward``) whose backward gives second
derivatives.  With probability targets the target is differentiable too:
d loss / d y_c = -(1 - eps) * w_c * log_softmax(x)_c, and so are the class
weights: d loss / d w_c = -((1 - eps) * y_c + eps / C) * log_softmax(x)_c; that
backward is written with tensor ops.
"""
import collections

from ... import backends
from ...autograd.function import Function
from ...ops._helpers import wrap
from ...ops.comparison import where
from ...ops.softmax import log_softmax, softmax
from .loss_class_targets import class_dim, from_rows, loss_shape, to_rows, working_dtype
from .loss_reduction import per_element_grad

#: what defines q for class-number targets: the M class numbers (an array), the class
#: weights (an array or None), ignore_index and label_smoothing -- the backend's arguments
ClassTargets = collections.namedtuple("ClassTargets",
                                      "classes weight ignore_index label_smoothing")


class CrossEntropy(Function):
    """cross_entropy with class-number targets."""

    node_name = "CrossEntropyLossBackward0"  # torch's unfused graph: NllLossBackward0 <- LogSoftmax

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, label_smoothing, reduction):
        x = to_rows(input._data)
        dtype = working_dtype(x)  # float16 is computed in float32, as torch
        targets = ClassTargets(target._data.reshape(-1),
                               None if weight is None else weight._data.astype(dtype, copy=False),
                               ignore_index, max(label_smoothing, 0.0))  # (torch: < 0 is none)
        logp, losses, total_weight = backends.current.cross_entropy_rows(
            x.astype(dtype, copy=False), *targets)
        # logp is saved as the tensor torch's log_softmax node would keep; the input is kept
        # (not saved: a later in-place change must not break the first derivative) for the
        # second derivatives, which check its version themselves
        ctx.save_for_backward(wrap(logp))
        ctx.input, ctx.input_version = input, input._version_counter[0]
        ctx.target, ctx.targets = target, targets
        ctx.reduction, ctx.total_weight = reduction, total_weight
        out = backends.current.loss_reduction(losses.reshape(loss_shape(input.shape)), reduction,
                                              total_weight)
        return wrap(out.astype(input._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        logp, = ctx.saved_tensors
        g = per_element_grad(grad, ctx.reduction, ctx.total_weight)
        gx = CrossEntropyBackward.apply(g, ctx.input, logp, ctx.target, ctx.targets,
                                        ctx.input_version)
        return gx, None, None, None, None, None


class CrossEntropyBackward(Function):
    """g_r * (a_r * softmax(x)_r - q_r), the gradient above, in one backend pass.

    ``grad`` is the gradient of each row's loss (0-dim: the same for every row);
    ``input`` is x, an argument so that the second derivatives reach it; ``logp`` the
    log_softmax the forward saved, whose exp is softmax(x).
    """

    node_name = "CrossEntropyLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, logp, target, targets, input_version):
        ctx.save_for_backward(grad, input)
        ctx.target, ctx.targets, ctx.input_version = target, targets, input_version
        row_grad = backends.current.broadcast_to(grad._data.reshape(-1), logp.shape[:1])
        gx = backends.current.cross_entropy_rows_backward(logp._data, *targets, row_grad)
        return wrap(from_rows(gx.astype(input._data.dtype, copy=False), input.shape))

    @staticmethod
    def backward(ctx, gg):
        # out = g * (a * p - q), p = softmax(x):  d/dg = sum over classes of gg * (a p - q);
        # d/dx = softmax's backward of h = gg * g * a:  p * (h - sum(h * p))
        grad, input = ctx.saved_tensors
        check_unchanged(ctx, input, ctx.input_version)
        targets = ctx.targets
        dim, row_shape = class_dim(input), _row_shape(input)
        q = wrap(from_rows(backends.current.class_target_distribution(
            *targets, input.shape[dim], input._data.dtype), input.shape))
        a = q.sum(dim=dim, keepdim=True)
        p = softmax(input, dim)
        needs = ctx.needs_input_grad
        d_grad = d_input = None
        if needs[0]:
            d = gg * (p * a - q)
            d_grad = d.sum() if grad.ndim == 0 else d.sum(dim=dim).reshape(grad.shape)
        if needs[1]:
            # ignored rows give exactly 0, even where g is NaN (a 'mean' over no rows)
            valid = (ctx.target != targets.ignore_index).reshape(row_shape)
            g = where(valid, grad if grad.ndim == 0 else grad.reshape(row_shape), 0.0)
            h = gg * g * a
            d_input = p * (h - (h * p).sum(dim=dim, keepdim=True))
        return d_grad, d_input, None, None, None, None


class CrossEntropyProbabilities(Function):
    """cross_entropy with class-probability targets (the target has the input's shape)."""

    node_name = "CrossEntropyLossBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, label_smoothing, reduction):
        label_smoothing = max(label_smoothing, 0.0)
        x = to_rows(input._data)
        dtype = working_dtype(x)
        w = None if weight is None else weight._data.astype(dtype, copy=False)
        _, losses = backends.current.soft_cross_entropy_rows(
            x.astype(dtype, copy=False), to_rows(target._data).astype(dtype, copy=False), w,
            label_smoothing)
        ctx.save_for_backward(input, target, weight)
        ctx.label_smoothing, ctx.reduction = label_smoothing, reduction
        # torch's denominator, numel / C, is NaN for an empty input
        ctx.count = losses.shape[0] if losses.shape[0] else float("nan")
        out = backends.current.loss_reduction(losses.reshape(loss_shape(input.shape)), reduction,
                                              ctx.count)
        return wrap(out.astype(input._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        dim, eps = class_dim(input), ctx.label_smoothing
        g = per_element_grad(grad, ctx.reduction, ctx.count)
        if ctx.reduction == "none" and input.ndim > 1:
            g = g.unsqueeze(dim)
        # the class weights shaped to broadcast along the class dim
        w = None if weight is None else weight.reshape(_weight_shape(input))
        smoothed = target * (1 - eps) + eps / input.shape[dim] if eps else target
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
                gw = -(smoothed * logp * g)
                gw = gw.sum(dim=other) if other else gw
        return gx, gt, gw, None, None


def _row_shape(input):
    """The shape of one value per row, laid out like the input: its class dim of size 1
    (a 1-D input is one row: a 0-dim value)."""
    if input.ndim == 1:
        return ()
    return tuple(input.shape[:1]) + (1,) + tuple(input.shape[2:])


def _weight_shape(input):
    shape = [1] * input.ndim
    shape[class_dim(input)] = -1
    return shape


def check_unchanged(ctx, input, version):
    """torch's error when the input changed in place before the second derivatives (which
    recompute softmax from it): they would be of another function."""
    if input._version_counter[0] != version:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: the input of {ctx.name()} is at version "
            f"{input._version_counter[0]}; expected version {version}. Differentiate a copy "
            "(x.clone()) or use the out-of-place form of the operation.")
