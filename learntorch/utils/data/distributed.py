"""``DistributedSampler``: each rank reads its own share of the dataset (torch's index split).

With N ranks, rank r takes the indices r, r + N, r + 2N, ... of the (shuffled)
index list -- interleaved, so every rank gets an equal number.  When the dataset
does not divide by N, the list is padded by repeating its first indices
(``drop_last=False``), or cut to a multiple of N (``drop_last=True``).  The
shuffle is drawn from a generator seeded with ``seed + epoch``: every rank
computes the same permutation without talking to the others, and calling
``set_epoch(epoch)`` before each epoch gives each epoch a new one.

The split (padding, dropping, interleaving) is exactly torch's.  The shuffled
order is not torch's numbers: learntorch's ``randperm`` draws from numpy's PCG64,
torch's from its Mersenne Twister, so the same seed gives another permutation
(see ``Generator``).  Without shuffling the indices are torch's exactly.
"""
import math

from .sampler import Sampler
from ... import factories
from ...random import Generator


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` reads.

    ``num_replicas`` and ``rank`` default to the world size and rank of the
    initialized process group (``learntorch.distributed``).
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.num_samples = _samples_per_rank(len(self.dataset), num_replicas, drop_last)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            # the same seed on every rank: the same permutation everywhere, no messages needed
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = factories.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        indices = split_for_rank(indices, self.num_replicas, self.rank, self.drop_last)
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use the permutation of ``epoch`` (call it before each epoch's DataLoader loop)."""
        self.epoch = epoch


def split_for_rank(indices, num_replicas, rank, drop_last):
    """Rank ``rank``'s share of ``indices``: pad (repeating from the start) or cut to a
    multiple of ``num_replicas``, then take every ``num_replicas``-th from ``rank``."""
    n = len(indices)
    total_size = _samples_per_rank(n, num_replicas, drop_last) * num_replicas
    if not drop_last:
        padding_size = total_size - n
        if padding_size <= n:
            indices = indices + indices[:padding_size]
        else:  # fewer samples than ranks: repeat the whole list as often as needed
            indices = indices + (indices * math.ceil(padding_size / n))[:padding_size]
    else:
        indices = indices[:total_size]
    return indices[rank:total_size:num_replicas]


def _samples_per_rank(n, num_replicas, drop_last):
    if drop_last and n % num_replicas != 0:
        # drop the tail, so that every rank has the same number of whole samples
        return math.ceil((n - num_replicas) / num_replicas)
    return math.ceil(n / num_replicas)
