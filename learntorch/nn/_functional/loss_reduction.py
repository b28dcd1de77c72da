"""``reduction=``: how every loss turns its per-element losses into what it returns.

A loss first computes one value per element (MSE, BCE) or per sample
(cross-entropy, NLL), then

* ``'none'`` returns them all,
* ``'sum'``  returns their sum,
* ``'mean'`` returns their sum divided by a *count* -- the number of values,
  or, for the class-weighted losses, the sum of the weights that were used
  (so that a weighted mean stays a mean).

The reduction itself is the backend's ``loss_reduction`` (each loss's forward
calls it on its per-element losses).  Its backward is what every loss's backward
starts from: the gradient of each per-element loss is ``grad`` itself ('none': one
gradient per element; 'sum': the same 0-dim gradient broadcast to all of them) or
``grad / count`` ('mean').  ``per_element_grad`` computes exactly that, with tensor
ops.

Before ``reduction`` existed, torch had two flags, ``size_average`` and
``reduce``; they still override ``reduction`` when given (with torch's warning).
"""
import warnings

REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction, stacklevel=4):
    """``reduction`` if it is one of 'none', 'mean', 'sum' (torch's ValueError otherwise)."""
    if isinstance(reduction, str):
        if reduction in REDUCTIONS:
            return reduction
        if reduction == "elementwise_mean":
            warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                          "reduction='mean' instead.", UserWarning, stacklevel=stacklevel)
            return "mean"
    raise ValueError(f"{reduction} is not a valid value for reduction: use 'none' (one loss per "
                     "element), 'mean' or 'sum'")


def legacy_reduction(size_average, reduce, stacklevel=4):
    """The reduction the deprecated flags ask for, with torch's deprecation warning.

    ``reduce=False`` means 'none' (``size_average`` is then ignored); otherwise
    ``size_average=False`` means 'sum'; a flag left at None counts as True.
    """
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        reduction = "mean"
    elif reduce:
        reduction = "sum"
    else:
        reduction = "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", UserWarning, stacklevel=stacklevel)
    return reduction


def resolve(size_average, reduce, reduction):
    """What a functional loss does with its three reduction arguments (as torch)."""
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce, stacklevel=4)
    return check_reduction(reduction, stacklevel=4)


def per_element_grad(grad, reduction, count):
    """dLoss/d(each per-element loss), on Tensors: ``grad``, or ``grad / count`` for 'mean'.

    ``grad`` is 0-dim unless the reduction is 'none'; the loss's derivative broadcasts it
    over the elements (or rows) it reduced.
    """
    if reduction != "mean":
        return grad
    return grad / float(count)
