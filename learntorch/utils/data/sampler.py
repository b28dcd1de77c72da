"""Samplers: which index comes next, and how indices are grouped into batches.

A sampler is any iterable of indices with a ``__len__``.  The DataLoader builds
one for you from ``shuffle=`` (``RandomSampler`` or ``SequentialSampler``) and
wraps it in a ``BatchSampler`` that hands out lists of ``batch_size`` indices.

Randomness follows torch's scheme, so the same ``manual_seed`` gives the same
epochs: without a ``generator``, a ``RandomSampler`` draws *one* 63-bit seed
from the default generator at the start of each epoch and shuffles with a
private generator seeded from it.  The default generator therefore advances by
exactly one draw per epoch, whatever the dataset's size (the numbers themselves
differ from torch's: learntorch's generator is numpy's PCG64).
"""
import numpy as np

from ..._tensor import Tensor
from ... import factories
from ... import random as _random


def _draw_seed(generator=None):
    """A 63-bit seed drawn from ``generator`` (the default one when None): torch's
    ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``."""
    g = _random._generator(generator)
    return int(g.integers(0, 2 ** 63 - 1, dtype=np.int64, endpoint=True))


def _require(ok, name, value, what):
    """torch's message for a bad sampler argument: "<name> should be <what>, but got ..."."""
    if not ok:
        raise ValueError(f"{name} should be {what}, but got {name}={value}")


def _is_positive_int(value):
    return (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            and value > 0)


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and usually ``__len__``."""

    def __init__(self, data_source=None):
        # torch accepted and ignored data_source once; it still may be passed
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the indices: a permutation, or with ``replacement`` independent draws.

    ``num_samples`` (default ``len(data_source)``) indices per epoch; without
    replacement and with more samples than the dataset has, whole permutations are
    chained (every index appears once before any appears twice).
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        _require(_is_positive_int(self.num_samples), "num_samples", self.num_samples,
                 "a positive integer value")

    @property
    def num_samples(self):
        # read on every use: the dataset's size may change between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = _random.Generator().manual_seed(_draw_seed())
        if self.replacement:
            # in chunks of 32, as torch does: a lazy stream even for a huge num_samples
            for _ in range(self.num_samples // 32):
                yield from factories.randint(0, n, (32,), generator=generator).tolist()
            yield from factories.randint(0, n, (self.num_samples % 32,),
                                         generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from factories.randperm(n, generator=generator).tolist()
            yield from factories.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (drawn from ``generator``, default: the global one)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in factories.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Used to rebalance classes: give each sample the weight 1 / (size of its class).
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _require(_is_positive_int(num_samples), "num_samples", num_samples,
                 "a positive integer value")
        _require(isinstance(replacement, bool), "replacement", replacement, "a boolean value")
        w = weights._data if isinstance(weights, Tensor) else weights
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution: weights must be finite, "
                               "non-negative and not all zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError(f"cannot sample n_sample={num_samples} > prob_dist.size(-1)="
                               f"{np.count_nonzero(w)} samples without replacement (only that "
                               "many weights are non-zero)")
        self.weights = factories.tensor(w)
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = factories.multinomial(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    The last batch is smaller when the indices do not divide evenly, unless
    ``drop_last=True`` drops it.
    """

    def __init__(self, sampler, batch_size, drop_last):
        _require(_is_positive_int(batch_size), "batch_size", batch_size,
                 "a positive integer value")
        _require(isinstance(drop_last, bool), "drop_last", drop_last, "a boolean value")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
