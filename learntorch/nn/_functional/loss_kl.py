"""``kl_div``: the Kullback-Leibler divergence of a target distribution from a predicted one.

``input`` holds the *log*-probabilities of the prediction, q (the output of
``log_softmax``), ``target`` the target distribution p, as probabilities -- or as
log-probabilities too with ``log_target=True``.  Per element:

    loss = p * (log p - log q)       written  xlogy(p, p) - p * input
    loss = e^t * (t - input)         with log_target (t = log p)

(``xlogy(p, p)`` is p log p with 0 where p = 0: an impossible target class adds
nothing.)  As in torch the loss is a composition of tensor ops, so its graph is that of
those ops.  Reductions: torch's 'mean' divides by the number of *elements* (a warning
says so); the KL divergence of a batch of distributions is 'batchmean', the sum divided
by the batch size.
"""
import warnings

from ..._tensor import Tensor
from ...ops._helpers import check_same_device
from ...ops.comparison import where
from .loss_reduction import check_reduction, legacy_reduction


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || prediction) with ``input`` = log prediction (see the module docstring)."""
    for position, (arg, value) in enumerate((("input", input), ("target", target)), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"kl_div(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, stacklevel=3)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.", UserWarning, stacklevel=2)
        if reduction != "batchmean":
            reduction = check_reduction(reduction, stacklevel=3)
    check_same_device(input, target)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    total = loss.sum()
    if reduction == "batchmean" and input.ndim != 0:
        return total / input.shape[0]
    return total


def _xlogy_self(p):
    """p * log(p), 0 where p == 0 (and NaN where p is NaN), as torch's ``xlogy(p, p)``."""
    return where(p == 0, 0.0, p * p.log())
