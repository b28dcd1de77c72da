"""The fast forward of ``F.cross_entropy`` with class-number targets: a classifier's loss.

Replaces: ``CrossEntropy.forward`` of ``learntorch/nn/_functional/loss_cross_entropy.py``
(through ``apply.FAST_FORWARD``).  The reference forward is written for every input the
op takes: it brings the logits to rows, picks the working dtype, bundles the targets'
arguments, calls the backend's ``cross_entropy_rows``, shapes the per-row losses like the
input and hands them to the backend's ``loss_reduction``.  For the case a training loop
has -- (N, C) float32/float64 logits, int64 class numbers, no class weights, no label
smoothing, reduction 'mean' or 'sum', on an engine backend -- the rows are the logits,
the working dtype is theirs, and the reduction is numpy's sum (and a division), made here
in the reference's order, so the values are the reference's bit for bit.  What it saves
per call (``CrossEntropy.apply`` on 128 x 10 float32 logits, recorded, Numba backend:
36-41 -> 26.5 us):

* ``to_rows``, ``working_dtype`` and two dtype casts that copy nothing;
* ``loss_shape``, which builds ``Size`` objects to reshape losses that are then summed;
* ``loss_reduction``'s backend call and its two ``as_array`` wrappers.

The node gets exactly what the reference writes into it (the saved log-softmax, the
input and its version, the targets' bundle, the reduction and the denominator), so the
backward -- the reference's, or the raw-array one (``array_backward``) -- cannot tell.
Anything else (weights, smoothing, 'none', K-dimensional or float16 input, a learner's
backend or one whose ``cross_entropy_rows`` or ``loss_reduction`` was replaced) runs the
reference forward.
"""
import numpy as np

from .. import backends
from .._tensor import Tensor
from ..nn._functional import loss_cross_entropy as reference
from .apply import ARRAYS_ONLY, FAST_FORWARD, engines_own

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def cross_entropy_forward(ctx, input, target, weight, ignore_index, label_smoothing, reduction):
    x = input._data
    backend = backends.current.__class__
    if not (weight is None and label_smoothing <= 0 and reduction != "none"
            and x.__class__ is np.ndarray and x.ndim == 2 and x.dtype in _FLOATS
            and engines_own(backend, "cross_entropy_rows")
            and engines_own(backend, "loss_reduction")):
        return reference.CrossEntropy.forward(ctx, input, target, weight, ignore_index,
                                              label_smoothing, reduction)
    targets = reference.ClassTargets(target._data.reshape(-1), None, ignore_index, 0.0)
    logp, losses, total_weight = backends.current.cross_entropy_rows(x, *targets)
    if ctx._edges:  # a recorded node: what the reference writes into it
        ctx.save_for_backward(Tensor._wrap(logp))
        ctx.input, ctx.input_version = input, input._version_counter[0]
        ctx.target, ctx.targets = target, targets
        ctx.reduction, ctx.total_weight = reduction, total_weight
    # LossFamily.loss_reduction, for 'sum' and 'mean': numpy's sum in the losses' dtype, then
    # the division by the denominator (NaN for a mean over no rows, as torch)
    total = losses.sum()
    if reduction == "mean":
        total = losses.dtype.type(np.nan) if total_weight == 0 or total_weight != total_weight \
            else total / total_weight
    return Tensor._wrap(np.asarray(total, dtype=x.dtype))


FAST_FORWARD[reference.CrossEntropy] = cross_entropy_forward
ARRAYS_ONLY.add(reference.CrossEntropy)
