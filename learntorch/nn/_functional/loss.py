"""Loss functions of ``nn.functional``: the checks and choices in front of each loss's Function.

Each function here reads like torch's: it checks its arguments (raising
torch's exception type, with a message that names the shapes or dtypes and
the fix), settles the ``reduction`` (see ``loss_reduction``), brings the
tensors to one dtype, and hands over to one ``Function``:

=================================  ==============================  =====================
function                           Function (graph node)           file
=================================  ==============================  =====================
mse_loss, huber_loss,              MseLoss, HuberLoss,             loss_regression.py
smooth_l1_loss                     SmoothL1Loss
l1_loss                            abs(input - target), mean/sum   (this file, as torch)
nll_loss                           NllLoss                         loss_nll.py
cross_entropy                      CrossEntropy (fused),           loss_cross_entropy.py
                                   CrossEntropyProbabilities
binary_cross_entropy(_with_logits) BinaryCrossEntropy(WithLogits)  loss_binary.py
=================================  ==============================  =====================
"""
import warnings

from ..._dtypes import promote_types
from ..._tensor import Tensor
from ...autograd.function import autocast_inputs
from ...ops._helpers import check_same_device
from ...ops.broadcast import _broadcast_tuple as broadcast_shapes
from .loss_binary import BinaryCrossEntropy, BinaryCrossEntropyWithLogits
from .loss_class_targets import check_class_weight, check_index_target, short_name
from .loss_cross_entropy import CrossEntropy, CrossEntropyProbabilities
from .loss_nll import NllLoss
from .loss_reduction import check_reduction, resolve
from .loss_regression import HuberLoss, MseLoss, SmoothL1Loss


# ---------------------------------------------------------------- argument checks
def _require_tensors(name, *named):
    """torch's TypeError for an argument that is not a tensor (a list, a number, ...)."""
    for position, (arg, value, optional) in enumerate(named, start=1):
        if isinstance(value, Tensor) or (optional and value is None):
            continue
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}; wrap it with torch.tensor(...)")


def _refuse_gradient(name, arg, tensor):
    """Weights are constants of these losses: torch refuses a weight that requires grad."""
    if tensor is not None and tensor.requires_grad:
        raise RuntimeError(
            f"The function '{name}' is not differentiable with respect to argument '{arg}'. This "
            f"input cannot have requires_grad True. Pass {arg}.detach() (a weight is a constant "
            "of the loss, it is not learned).")


def _warn_if_broadcast(input, target):
    """torch warns when input and target differ in shape: broadcasting is rarely meant here."""
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _broadcast_shape(name, input, target):
    try:
        return broadcast_shapes(input.shape, target.shape)
    except RuntimeError:
        raise RuntimeError(
            f"The size of tensor a must match the size of tensor b at every non-singleton "
            f"dimension: {name} got input of shape {list(input.shape)} and target of shape "
            f"{list(target.shape)}, which cannot be broadcast together. Give the target the "
            "input's shape.") from None


def _cast(t, dtype):
    # a recorded cast: the gradient flows back in the tensor's own dtype
    return t if t is None or t.dtype is dtype else t.to(dtype)


def _floating_pair(name, input, target, result_dtype=None):
    """input and target in the result's dtype; integer results are torch's NotImplementedError."""
    dtype = result_dtype or promote_types(input.dtype, target.dtype)
    if not dtype.is_floating_point:
        raise NotImplementedError(
            f"{name} is not implemented for {short_name(input)} input and {short_name(target)} "
            f"target: the result would be {dtype}; convert to floats first, e.g. input.float()")
    return _cast(input, dtype), _cast(target, dtype)


def _weighted(name, unreduced, weight, input, reduction, mean_by_weight=True):
    """torch's element weights for the regression losses: a tensor of the input's shape."""
    _require_tensors(name, ("weight", weight, False))
    if weight.shape != input.shape:
        raise ValueError(f"Weights and input must have the same size. {name} got weight of "
                         f"shape {list(weight.shape)} for input of shape {list(input.shape)}")
    loss = unreduced * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if mean_by_weight else loss.mean()


def _broadcast_weight(name, arg, weight, input, dtype):
    """A BCE weight (or pos_weight) must broadcast to the input's shape without growing it."""
    if weight is None:
        return None
    try:
        shape = broadcast_shapes(input.shape, weight.shape)
    except RuntimeError:
        shape = None
    if shape != input.shape:
        raise RuntimeError(
            f"{name}: {arg} of shape {list(weight.shape)} does not broadcast to the input's shape "
            f"{list(input.shape)}" + (f" (it would make it {list(shape)})" if shape else "") +
            (". pos_weight holds one weight per class, along the last dim" if arg == "pos_weight"
             else "") + "; give it the input's shape or size-1 dims where it repeats")
    _refuse_gradient(name, arg, weight)
    return _cast(weight, dtype)


# ---------------------------------------------------------------- regression
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: mean((input - target) ** 2)."""
    _require_tensors("mse_loss", ("input", input, False), ("target", target, False))
    _warn_if_broadcast(input, target)
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target, weight)
    _broadcast_shape("mse_loss", input, target)
    input, target = _floating_pair("mse_loss", input, target)
    if weight is not None:
        return _weighted("mse_loss", MseLoss.apply(input, target, "none", None), weight, input,
                         reduction)
    return MseLoss.apply(input, target, reduction, None)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: mean(|input - target|), built from abs and mean as in torch."""
    _require_tensors("l1_loss", ("input", input, False), ("target", target, False))
    _warn_if_broadcast(input, target)
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target, weight)
    _broadcast_shape("l1_loss", input, target)
    errors = (input - target).abs()
    if weight is not None:
        return _weighted("l1_loss", errors, weight, input, reduction)
    if reduction == "none":
        return errors
    return errors.sum() if reduction == "sum" else errors.mean()


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error below ``delta``, linear above it (see loss_regression)."""
    _require_tensors("huber_loss", ("input", input, False), ("target", target, False))
    _warn_if_broadcast(input, target)
    reduction = check_reduction(reduction, stacklevel=3)
    check_same_device(input, target, weight)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta. Got "
                           f"delta={delta}; it is the error size where the loss turns linear.")
    _broadcast_shape("huber_loss", input, target)
    # torch's huber keeps the input's dtype (a float32 input with a float64 target is float32)
    if not input.dtype.is_floating_point:
        # torch: no integer kernel, or (when the target's type ranks higher) no cast back
        same = promote_types(input.dtype, target.dtype) is input.dtype
        raise (NotImplementedError if same else RuntimeError)(
            f"huber_loss computes in the input's dtype, and {input.dtype} is not a floating "
            f"point type (target: {target.dtype}); convert with input.float()")
    input, target = _floating_pair("huber_loss", input, target, result_dtype=input.dtype)
    if weight is not None:
        return _weighted("huber_loss", HuberLoss.apply(input, target, "none", delta), weight,
                         input, reduction, mean_by_weight=False)
    return HuberLoss.apply(input, target, reduction, delta)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber loss divided by beta: quadratic below ``beta``, |d| - beta/2 above it."""
    _require_tensors("smooth_l1_loss", ("input", input, False), ("target", target, False))
    _warn_if_broadcast(input, target)
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta. Got "
                           f"beta={beta}; use beta=0 for the L1 loss.")
    _broadcast_shape("smooth_l1_loss", input, target)
    if beta == 0.0:  # the quadratic part vanishes: torch computes the L1 loss
        return l1_loss(input, target, reduction=reduction)
    input, target = _floating_pair("smooth_l1_loss", input, target)
    return SmoothL1Loss.apply(input, target, reduction, beta)


# ---------------------------------------------------------------- classification
def _require_floating_scores(name, input):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"{name} is not implemented for {short_name(input)} input: the scores must be "
            f"floating point (got {input.dtype}); convert with input.float()")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of the target class; ``input`` holds log-probabilities."""
    _require_tensors("nll_loss", ("input", input, False), ("target", target, False),
                     ("weight", weight, True))
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target, weight)
    check_index_target("nll_loss", input, target)
    _require_floating_scores("nll_loss", input)
    check_class_weight("nll_loss", weight, input)
    _refuse_gradient("nll_loss_forward", "weight", weight)
    return NllLoss.apply(input, target, weight, ignore_index, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the classes (dim 1) followed by nll_loss, as one fused step.

    ``target`` holds class numbers (the input's shape without dim 1) or class
    probabilities (the input's shape).
    """
    _require_tensors("cross_entropy_loss", ("input", input, False), ("target", target, False),
                     ("weight", weight, True))
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target, weight)
    if label_smoothing > 1.0:  # torch checks only the upper end (a negative value means none)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.shape == target.shape:
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,
                                            label_smoothing)
    check_index_target("cross_entropy", input, target)
    _require_floating_scores("cross_entropy", input)
    check_class_weight("cross_entropy", weight, input)
    _refuse_gradient("nll_loss_forward", "weight", weight)
    return CrossEntropy.apply(input, target, weight, ignore_index, label_smoothing, reduction)


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,
                                 label_smoothing):
    """The soft-target form: ``target`` gives a probability for every class."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(
            f"Expected floating point type for target with class probabilities, got "
            f"{short_name(target)}: a target of the input's shape {list(input.shape)} is read "
            "as class probabilities; class numbers need the input's shape without dim 1")
    if input.ndim == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions: cross_entropy "
                         "needs an input of shape [C] or [N, C, ...], got a 0-dim tensor")
    _require_floating_scores("cross_entropy", input)
    if ignore_index >= 0:
        raise RuntimeError(
            f"ignore_index is not supported for floating point target (got ignore_index="
            f"{ignore_index}); to drop a sample, give it zero probabilities or leave it out")
    check_class_weight("cross_entropy", weight, input, same_dtype=False)
    dtype = promote_types(input.dtype, target.dtype)
    if weight is not None:
        dtype = promote_types(dtype, weight.dtype)
    return CrossEntropyProbabilities.apply(_cast(input, dtype), _cast(target, dtype),
                                           _cast(weight, dtype), label_smoothing, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w * (y log p + (1 - y) log(1 - p)) for probabilities p (see loss_binary)."""
    name = "binary_cross_entropy"
    _require_tensors(name, ("input", input, False), ("target", target, False),
                     ("weight", weight, True))
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target, weight)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size.")
    input, target, weight = autocast_inputs(BinaryCrossEntropy, input, target, weight)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {short_name(target)} but expected {short_name(input)}: "
                           f"{name}'s target must have the input's dtype; convert it with "
                           f"target.to({input.dtype})")
    _require_floating_scores(name, input)
    weight = _broadcast_weight(name, "weight", weight, input, input.dtype)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy on logits, stable for any logit (see loss_binary)."""
    name = "binary_cross_entropy_with_logits"
    _require_tensors(name, ("input", input, False), ("target", target, False),
                     ("weight", weight, True), ("pos_weight", pos_weight, True))
    reduction = resolve(size_average, reduce, reduction)
    check_same_device(input, target, weight, pos_weight)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    _require_floating_scores(name, input)
    if not target.dtype.is_floating_point:
        raise RuntimeError(
            f"result type {short_name(input)} can't be cast to the desired output type "
            f"{short_name(target)}: {name} needs a floating point target (0/1 labels as "
            "floats); convert it with target.float()")
    # torch computes in the target's dtype (a float64 input with a float32 target is float32)
    dtype = target.dtype
    weight = _broadcast_weight(name, "weight", weight, input, dtype)
    pos_weight = _broadcast_weight(name, "pos_weight", pos_weight, input, dtype)
    return BinaryCrossEntropyWithLogits.apply(_cast(input, dtype), target, weight, pos_weight,
                                              reduction)
