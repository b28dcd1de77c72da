"""Learning-rate schedulers: change ``group["lr"]`` of an optimizer as training goes on.

    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch()          # calls optimizer.step()
        scheduler.step()           # then the schedule moves on

Files, one kind of schedule each: ``_base.py`` (``LRScheduler``: epochs, base lrs,
``get_last_lr``, checkpoints), ``_decay.py`` (schedules that scale the lr epoch by epoch),
``_cyclic.py`` (schedules that go up and down), ``_combined.py`` (schedulers made of
schedulers), ``_plateau.py`` (driven by a metric).  The formulas are torch 2.13's, so the
sequences agree with torch's to the last bit.
"""
from ._base import EPOCH_DEPRECATION_WARNING, LRScheduler, _LRScheduler  # noqa: F401
from ._decay import (LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR,  # noqa: F401
                     LinearLR, ExponentialLR, PolynomialLR, CosineAnnealingLR)
from ._cyclic import OneCycleLR, CyclicLR, CosineAnnealingWarmRestarts  # noqa: F401
from ._plateau import ReduceLROnPlateau  # noqa: F401
from ._combined import SequentialLR, ChainedScheduler  # noqa: F401
