"""Datasets: what ``dataset[i]`` or ``iter(dataset)`` means, and ways to combine them.

A **map-style** ``Dataset`` has ``__getitem__`` (and usually ``__len__``): the
DataLoader's sampler picks indices and asks for those samples.  An
**iterable-style** ``IterableDataset`` only has ``__iter__``: it decides the
order itself (a stream, a file read line by line), so samplers and shuffling do
not apply to it.

Errors follow torch, including its types: a size mismatch in ``TensorDataset``
and an empty ``ConcatDataset`` are ``AssertionError`` in torch, and here too --
raised explicitly, so that ``python -O`` cannot strip them.
"""
import bisect
import itertools
import math
import warnings

import numpy as np

from ..._tensor import Tensor
from ... import factories
from ... import random as _random


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__()``.

    ``a + b`` is the ``ConcatDataset`` of both.  There is deliberately no default
    ``__len__``: ``len()`` of a dataset without one raises ``TypeError``, as in torch.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``.

    With worker processes every worker gets its own copy of the dataset and
    would yield every sample: use ``get_worker_info()`` inside ``__iter__`` to
    give each worker its own share (see ``DataLoader``).
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows of tensors: ``dataset[i] == (t0[i], t1[i], ...)``."""

    def __init__(self, *tensors):
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects tensors, but argument {i} is a "
                                f"{type(t).__name__}; convert it with learntorch.tensor(...)")
        sizes = [t.size(0) for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise AssertionError(
                f"Size mismatch between tensors: every tensor needs the same size in dim 0 "
                f"(one row per sample), got sizes {sizes} "
                f"(shapes {[list(t.shape) for t in tensors]})")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Several map-style datasets one after the other.

    ``cumulative_sizes[k]`` is the total length of the first k+1 datasets, so the
    dataset that holds index ``i`` is found by bisection.
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset "
                                     "(use ChainDataset to chain streams)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(d) for d in sequence))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(f"absolute value of index should not exceed dataset length "
                                 f"(index {idx}, length {len(self)})")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length "
                             f"{len(self)}")
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after the other (``a + b`` for streams)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, renumbered 0, 1, ... (no copy)."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # the DataLoader asks for a whole batch at once when a dataset can do that faster
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=_random.default_generator):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` are sample counts that add up to ``len(dataset)``, or fractions
    that add up to 1: then each split gets ``floor(len * fraction)`` samples and
    the few left over go one each to the first splits, round robin (torch's rule).
    """
    lengths = list(lengths)
    n = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(n * frac)))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              "This might result in an empty dataset.", stacklevel=2)
    for i, length in enumerate(lengths):
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"random_split: lengths must be non-negative integers (sample "
                             f"counts) or fractions that sum to 1, but got {length!r} at index "
                             f"{i}")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {lengths} sum to {sum(lengths)}, the dataset has {n} "
                         "samples)")
    indices = factories.randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
