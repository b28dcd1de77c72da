"""Samplers, specified against torch.utils.data's.

The random numbers differ from torch's (learntorch's generator is numpy's
PCG64), so random samplers are compared on what must agree: lengths, which
indices appear how often, batch sizes, errors -- and reproducibility from a seed.
"""
import collections

import numpy as np
import pytest

import learntorch
from learntorch.utils import data as ltdata
from oracle import require_torch, torch


def test_sequential_sampler_is_every_index_in_order_like_torch():
    require_torch()
    for n in [0, 1, 7]:
        assert list(ltdata.SequentialSampler(range(n))) == \
            list(torch.utils.data.SequentialSampler(range(n)))
        assert len(ltdata.SequentialSampler(range(n))) == n


@pytest.mark.parametrize("n", [1, 2, 10, 33])
def test_random_sampler_without_replacement_is_a_permutation(n):
    order = list(ltdata.RandomSampler(range(n)))
    assert sorted(order) == list(range(n))
    assert len(ltdata.RandomSampler(range(n))) == n


@pytest.mark.parametrize("n, num_samples", [(5, 12), (5, 3), (4, 8)])
def test_random_sampler_with_more_samples_chains_whole_permutations(n, num_samples):
    require_torch()
    th = list(torch.utils.data.RandomSampler(range(n), num_samples=num_samples))
    lt = list(ltdata.RandomSampler(range(n), num_samples=num_samples))
    assert len(lt) == len(th) == num_samples
    for start in range(0, num_samples - num_samples % n, n):  # each full block: a permutation
        assert sorted(lt[start:start + n]) == list(range(n))
    assert len(set(lt[num_samples - num_samples % n:])) == num_samples % n  # tail: distinct


@pytest.mark.parametrize("num_samples", [1, 31, 32, 33, 100])
def test_random_sampler_with_replacement_draws_num_samples_in_range(num_samples):
    require_torch()
    th = list(torch.utils.data.RandomSampler(range(6), replacement=True,
                                             num_samples=num_samples))
    lt = list(ltdata.RandomSampler(range(6), replacement=True, num_samples=num_samples))
    assert len(lt) == len(th) == num_samples
    assert all(isinstance(i, int) and 0 <= i < 6 for i in lt)


def test_random_sampler_with_replacement_repeats_indices():
    draws = list(ltdata.RandomSampler(range(3), replacement=True, num_samples=300))
    counts = collections.Counter(draws)
    assert set(counts) == {0, 1, 2} and all(60 < c < 140 for c in counts.values())


def test_random_sampler_is_reproducible_from_manual_seed_and_from_its_generator():
    learntorch.manual_seed(5)
    a = list(ltdata.RandomSampler(range(50)))
    learntorch.manual_seed(5)
    b = list(ltdata.RandomSampler(range(50)))
    assert a == b
    epoch1, epoch2 = (list(s) for s in [ltdata.RandomSampler(range(50))] * 2)
    assert epoch1 != epoch2, "each epoch a new order"
    g = ltdata.RandomSampler(range(50), generator=learntorch.Generator().manual_seed(1))
    h = ltdata.RandomSampler(range(50), generator=learntorch.Generator().manual_seed(1))
    assert list(g) == list(h)


def test_an_epoch_advances_the_global_generator_by_the_same_amount_whatever_the_size():
    # torch's scheme: one seed per epoch is drawn from the global generator
    states = []
    for n in [3, 1000]:
        learntorch.manual_seed(0)
        list(ltdata.RandomSampler(range(n)))
        states.append(learntorch.rand(4).tolist())
    assert states[0] == states[1]


@pytest.mark.parametrize("kwargs, error", [
    (dict(replacement=1), TypeError), (dict(num_samples=0), ValueError),
    (dict(num_samples=-3), ValueError), (dict(num_samples=2.5), ValueError),
])
def test_random_sampler_argument_errors_like_torch(kwargs, error):
    require_torch()
    with pytest.raises(error):
        torch.utils.data.RandomSampler(range(4), **kwargs)
    with pytest.raises(error, match="should be a"):
        ltdata.RandomSampler(range(4), **kwargs)


def test_subset_random_sampler_permutes_exactly_the_given_indices():
    indices = [4, 8, 15, 16, 23, 42]
    s = ltdata.SubsetRandomSampler(indices, generator=learntorch.Generator().manual_seed(0))
    drawn = list(s)
    assert sorted(drawn) == indices and len(s) == len(indices)
    again = ltdata.SubsetRandomSampler(indices, generator=learntorch.Generator().manual_seed(0))
    assert list(again) == drawn


def test_weighted_random_sampler_follows_the_weights():
    weights = [0.0, 1.0, 3.0]
    s = ltdata.WeightedRandomSampler(weights, 4000, generator=learntorch.Generator().manual_seed(2))
    counts = collections.Counter(s)
    assert len(s) == 4000 and counts[0] == 0
    assert 0.70 < counts[2] / 4000 < 0.80  # expected 0.75
    no_repeat = list(ltdata.WeightedRandomSampler([1, 1, 1, 0], 3, replacement=False))
    assert sorted(no_repeat) == [0, 1, 2]


@pytest.mark.parametrize("args, error", [
    (([1.0, 2.0], 0), ValueError), (([1.0, 2.0], 3, "yes"), ValueError),
    (([[1.0, 2.0]], 3), ValueError),
])
def test_weighted_random_sampler_argument_errors_like_torch(args, error):
    require_torch()
    with pytest.raises(error):
        torch.utils.data.WeightedRandomSampler(*args)
    with pytest.raises(error):
        ltdata.WeightedRandomSampler(*args)


@pytest.mark.parametrize("n", [0, 1, 9, 10, 11])
@pytest.mark.parametrize("batch_size", [1, 3, 10])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_gives_torchs_batches_and_len(n, batch_size, drop_last):
    require_torch()
    th = torch.utils.data.BatchSampler(range(n), batch_size, drop_last)
    lt = ltdata.BatchSampler(range(n), batch_size, drop_last)
    assert list(lt) == list(th)
    assert len(lt) == len(th)


@pytest.mark.parametrize("kwargs", [dict(batch_size=0, drop_last=False),
                                    dict(batch_size=True, drop_last=False),
                                    dict(batch_size=2.0, drop_last=False),
                                    dict(batch_size=2, drop_last=1)])
def test_batch_sampler_argument_errors_like_torch(kwargs):
    require_torch()
    with pytest.raises(ValueError):
        torch.utils.data.BatchSampler(range(4), **kwargs)
    with pytest.raises(ValueError, match="should be a"):
        ltdata.BatchSampler(range(4), **kwargs)


def test_batch_sampler_over_a_random_sampler_covers_every_index_once():
    batches = list(ltdata.BatchSampler(ltdata.RandomSampler(range(23)), 5, False))
    assert [len(b) for b in batches] == [5, 5, 5, 5, 3]
    assert sorted(i for b in batches for i in b) == list(range(23))
    assert np.unique([i for b in batches for i in b]).size == 23
