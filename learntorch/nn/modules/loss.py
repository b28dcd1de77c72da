"""Loss modules: ``criterion = nn.CrossEntropyLoss(); loss = criterion(logits, target)``.

A loss module only *remembers its options* (reduction, class weights,
ignore_index, ...) and calls the function of the same name in
``nn.functional`` -- all the work happens there.  Class weights are buffers,
not parameters: ``state_dict()`` saves them, ``.to()`` moves them, and no
optimizer trains them.

Like torch's, these modules have no ``extra_repr``: ``repr(nn.HuberLoss(delta=2.0))``
is ``HuberLoss()``.  The deprecated ``size_average``/``reduce`` flags are
accepted and turned into ``reduction`` with torch's warning; ``reduction`` is
checked when the loss is computed, as in torch.
"""
from ..functional import (binary_cross_entropy, binary_cross_entropy_with_logits,
                          cross_entropy, huber_loss, kl_div, l1_loss, mse_loss, nll_loss,
                          smooth_l1_loss)
from .._functional.loss_reduction import legacy_reduction
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = legacy_reduction(size_average, reduce, stacklevel=4)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error, |input - target|."""

    def forward(self, input, target):
        return l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error, (input - target) ** 2."""

    def forward(self, input, target):
        return mse_loss(input, target, reduction=self.reduction)


class HuberLoss(_Loss):
    """Squared error below ``delta``, linear above it."""

    def __init__(self, reduction="mean", delta=1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """Huber loss divided by ``beta``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of the target class, for log-probability inputs."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                        reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL on raw scores (logits), with optional label smoothing."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                             reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy on probabilities."""

    def forward(self, input, target):
        return binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy on logits (sigmoid included, stable for any logit)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return binary_cross_entropy_with_logits(input, target, self.weight,
                                                pos_weight=self.pos_weight,
                                                reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence of ``target`` from the prediction whose log-probabilities are ``input``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
