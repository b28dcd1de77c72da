"""Feeding a model: datasets, samplers and the ``DataLoader`` (``torch.utils.data``).

Three small ideas, each in its own file:

* a **dataset** answers ``dataset[i]`` (map-style) or ``iter(dataset)``
  (iterable-style) -- ``dataset.py``;
* a **sampler** decides the order of the indices, and a ``BatchSampler`` groups
  them into batches -- ``sampler.py``;
* the **DataLoader** asks the sampler for a batch of indices, fetches those
  samples and *collates* them into tensors (``_collate.py``), either in this
  process or in worker processes (``_worker.py``) -- ``dataloader.py``.

Ready-made datasets (the handwritten digits that ship with learntorch, toy 2-D
sets, MNIST) and image transforms are in ``learntorch.datasets``: torch keeps
those in the separate torchvision package.
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, ConcatDataset, ChainDataset,
                      Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from ._collate import default_collate, default_convert
from ._worker import get_worker_info
from .dataloader import DataLoader
from .distributed import DistributedSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler", "default_collate", "default_convert",
           "get_worker_info", "DataLoader", "WeightedRandomSampler", "DistributedSampler"]
