"""``learntorch.nn.parallel``: training one model on several processes (``torch.nn.parallel``).

``DistributedDataParallel`` (``distributed.py``) keeps one replica per rank and
averages gradients during backward; the ``Reducer`` (``reducer.py``) does the
averaging in buckets (``_buckets.py``) over ``learntorch.distributed``.
"""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
