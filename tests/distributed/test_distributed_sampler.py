"""DistributedSampler splits the indices exactly as torch's does.

Without shuffling the indices are compared with ``torch.utils.data.DistributedSampler``
directly.  With shuffling the permutation itself differs (learntorch's generator
is numpy's PCG64, torch's a Mersenne Twister), so torch's sampler is handed
learntorch's permutation -- its ``torch.randperm`` is replaced by one that
returns it -- and must then pick exactly the same indices for every rank.
"""
import itertools

import pytest

import learntorch
from learntorch.utils.data import DistributedSampler
from oracle import require_torch

CASES = [(size, replicas, drop_last) for size, replicas, drop_last in itertools.product(
    [0, 1, 2, 5, 7, 10, 11, 16], [1, 2, 3, 4, 8], [False, True])]


def torch_sampler(size, replicas, rank, shuffle, drop_last, seed=0, epoch=0):
    torch = require_torch()
    sampler = torch.utils.data.DistributedSampler(range(size), num_replicas=replicas, rank=rank,
                                                  shuffle=shuffle, seed=seed,
                                                  drop_last=drop_last)
    sampler.set_epoch(epoch)
    return sampler


@pytest.mark.parametrize("size, replicas, drop_last", CASES)
def test_without_shuffle_each_rank_gets_torchs_indices(size, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(size), num_replicas=replicas, rank=rank, shuffle=False,
                                  drop_last=drop_last)
        theirs = torch_sampler(size, replicas, rank, False, drop_last)
        assert list(ours) == list(theirs), f"rank {rank}"
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


@pytest.mark.parametrize("size, replicas, drop_last", CASES)
@pytest.mark.parametrize("seed, epoch", [(0, 0), (0, 3), (42, 1)])
def test_with_shuffle_each_rank_gets_torchs_split_of_the_same_permutation(
        monkeypatch, size, replicas, drop_last, seed, epoch):
    torch = require_torch()
    permutation = learntorch.randperm(
        size, generator=learntorch.Generator().manual_seed(seed + epoch)).tolist()
    monkeypatch.setattr(torch, "randperm", lambda n, generator=None: torch.tensor(
        permutation, dtype=torch.int64))
    for rank in range(replicas):
        ours = DistributedSampler(range(size), num_replicas=replicas, rank=rank, seed=seed,
                                  drop_last=drop_last)
        ours.set_epoch(epoch)
        assert list(ours) == list(torch_sampler(size, replicas, rank, True, drop_last, seed,
                                                epoch)), f"rank {rank}"


def test_the_ranks_share_the_dataset_and_set_epoch_reshuffles():
    shares = [list(DistributedSampler(range(12), num_replicas=3, rank=r, seed=5))
              for r in range(3)]
    assert sorted(sum(shares, [])) == list(range(12))  # each index read by exactly one rank
    sampler = DistributedSampler(range(12), num_replicas=3, rank=0, seed=5)
    first = list(sampler)
    assert list(sampler) == first  # the same epoch, the same order
    sampler.set_epoch(1)
    assert list(sampler) != first


def test_a_rank_outside_the_replicas_is_torchs_value_error():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(10), num_replicas=3, rank=3)


def test_without_a_process_group_the_defaults_ask_for_one():
    with pytest.raises(ValueError, match="init_process_group"):
        DistributedSampler(range(10))


def test_the_dataloader_reads_the_ranks_share():
    dataset = learntorch.utils.data.TensorDataset(learntorch.arange(10))
    sampler = DistributedSampler(dataset, num_replicas=2, rank=1, shuffle=False)
    loader = learntorch.utils.data.DataLoader(dataset, batch_size=2, sampler=sampler)
    assert [batch[0].tolist() for batch in loader] == [[1, 3], [5, 7], [9]]
