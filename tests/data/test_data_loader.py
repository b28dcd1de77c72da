"""DataLoader in one process, specified against torch's DataLoader on the same dataset.

The datasets here hand out plain Python numbers and numpy arrays, so the very
same dataset object can be given to both loaders; the batches must agree in
structure, dtype, shape and value (without shuffling), or in what can agree
(with shuffling: every index exactly once, the same batch sizes).
"""
import numpy as np
import pytest

import learntorch
from learntorch.utils import data as ltdata
from oracle import require_torch, torch
from test_data_collate import assert_same


class Records:
    """A map-style dataset usable by both libraries: (index, features, {'double': ...})."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i, np.full(3, i, np.float32), {"double": 2.0 * i}


def make_stream(base, n, length=True):
    """An iterable dataset subclassing ``base`` (learntorch's or torch's IterableDataset)."""
    class Stream(base):
        def __iter__(self):
            return iter(range(n))
    if length:
        Stream.__len__ = lambda self: n
    return Stream()


def loaders(dataset, **kwargs):
    require_torch()
    return ltdata.DataLoader(dataset, **kwargs), torch.utils.data.DataLoader(dataset, **kwargs)


def indices_of(batches):
    return [int(i) for b in batches for i in b[0]]


@pytest.mark.parametrize("n", [1, 7, 8, 9])
@pytest.mark.parametrize("batch_size", [1, 3, 8])
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_batches_are_torchs(n, batch_size, drop_last):
    lt_loader, th_loader = loaders(Records(n), batch_size=batch_size, drop_last=drop_last)
    lt_batches, th_batches = list(lt_loader), list(th_loader)
    assert len(lt_batches) == len(th_batches) == len(lt_loader) == len(th_loader)
    assert_same(lt_batches, th_batches)


@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True),
                                                      (9, 3, False), (5, 10, False)])
def test_shuffled_epochs_hold_every_index_once_in_torchs_batch_sizes(n, batch_size, drop_last):
    lt_loader, th_loader = loaders(Records(n), batch_size=batch_size, shuffle=True,
                                   drop_last=drop_last)
    for _ in range(2):  # two epochs
        lt_batches, th_batches = list(lt_loader), list(th_loader)
        assert [len(b[0]) for b in lt_batches] == [len(b[0]) for b in th_batches]
        seen = indices_of(lt_batches)
        assert len(seen) == len(set(seen)), "an index twice in one epoch"
        if not drop_last:
            assert sorted(seen) == list(range(n))
        else:
            assert len(seen) == n - n % batch_size


def test_shuffling_gives_a_new_order_each_epoch_and_repeats_after_manual_seed():
    loader = ltdata.DataLoader(Records(40), batch_size=8, shuffle=True)
    learntorch.manual_seed(11)
    first, second = indices_of(loader), indices_of(loader)
    assert first != second
    learntorch.manual_seed(11)
    assert indices_of(loader) == first


def test_a_loader_generator_makes_the_order_independent_of_the_global_seed():
    orders = []
    for global_seed in [1, 2]:
        learntorch.manual_seed(global_seed)
        g = learntorch.Generator().manual_seed(3)
        orders.append(indices_of(ltdata.DataLoader(Records(30), batch_size=4, shuffle=True,
                                                   generator=g)))
    assert orders[0] == orders[1]


def test_batch_size_none_gives_samples_one_by_one_converted_like_torch():
    lt_loader, th_loader = loaders(Records(3), batch_size=None)
    assert_same(list(lt_loader), list(th_loader))
    assert len(lt_loader) == len(th_loader) == 3


def test_custom_sampler_batch_sampler_and_collate_fn_like_torch():
    for kwargs in [dict(sampler=[4, 0, 2], batch_size=2),
                   dict(batch_sampler=[[3, 1], [0], [2, 2, 2]]),
                   dict(batch_size=2, collate_fn=lambda batch: [s[0] for s in batch])]:
        lt_loader, th_loader = loaders(Records(5), **kwargs)
        assert_same(list(lt_loader), list(th_loader))
        assert len(lt_loader) == len(th_loader)


def test_subset_and_tensor_dataset_load_like_torch():
    require_torch()
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10) % 2
    lt_ds = ltdata.Subset(ltdata.TensorDataset(learntorch.from_numpy(x), learntorch.from_numpy(y)),
                          [9, 1, 4, 7, 0])
    th_ds = torch.utils.data.Subset(torch.utils.data.TensorDataset(torch.from_numpy(x),
                                                                   torch.from_numpy(y)),
                                    [9, 1, 4, 7, 0])
    assert_same(list(ltdata.DataLoader(lt_ds, batch_size=2)),
                list(torch.utils.data.DataLoader(th_ds, batch_size=2)))


# ---------------------------------------------------------------- iterable datasets
@pytest.mark.parametrize("n, batch_size, drop_last", [(7, 3, False), (7, 3, True), (6, 3, True),
                                                      (0, 2, False), (4, None, False)])
def test_iterable_dataset_batches_and_len_like_torch(n, batch_size, drop_last):
    require_torch()
    lt_loader = ltdata.DataLoader(make_stream(ltdata.IterableDataset, n), batch_size=batch_size,
                                  drop_last=drop_last)
    th_loader = torch.utils.data.DataLoader(make_stream(torch.utils.data.IterableDataset, n),
                                            batch_size=batch_size, drop_last=drop_last)
    assert_same(list(lt_loader), list(th_loader))
    assert len(lt_loader) == len(th_loader)


def test_len_of_a_loader_over_a_stream_without_len_is_a_type_error_like_torch():
    require_torch()
    with pytest.raises(TypeError):
        len(torch.utils.data.DataLoader(make_stream(torch.utils.data.IterableDataset, 3, False)))
    with pytest.raises(TypeError):
        len(ltdata.DataLoader(make_stream(ltdata.IterableDataset, 3, False)))


def test_a_stream_longer_than_its_len_warns_like_torch():
    class Liar(ltdata.IterableDataset):
        def __iter__(self):
            return iter(range(5))

        def __len__(self):
            return 2
    loader = ltdata.DataLoader(Liar(), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert list(loader) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- argument errors
CONFLICTS = {
    "batch_sampler with batch_size": dict(batch_sampler=[[0, 1]], batch_size=2),
    "batch_sampler with shuffle": dict(batch_sampler=[[0, 1]], shuffle=True),
    "batch_sampler with sampler": dict(batch_sampler=[[0, 1]], sampler=[0, 1]),
    "batch_sampler with drop_last": dict(batch_sampler=[[0, 1]], drop_last=True),
    "sampler with shuffle": dict(sampler=[0, 1], shuffle=True),
    "batch_size None with drop_last": dict(batch_size=None, drop_last=True),
    "negative num_workers": dict(num_workers=-1),
    "negative timeout": dict(timeout=-1),
    "prefetch_factor without workers": dict(prefetch_factor=2),
    "negative prefetch_factor": dict(num_workers=1, prefetch_factor=-1),
    "persistent_workers without workers": dict(persistent_workers=True),
    "multiprocessing_context without workers": dict(multiprocessing_context="fork"),
    "unknown start method": dict(num_workers=1, multiprocessing_context="teleport"),
}


@pytest.mark.parametrize("case", list(CONFLICTS))
def test_conflicting_arguments_are_value_errors_like_torch(case):
    require_torch()
    kwargs = CONFLICTS[case]
    with pytest.raises(ValueError):
        torch.utils.data.DataLoader(Records(4), **kwargs)
    with pytest.raises(ValueError, match="option|multiprocessing|exclusive"):
        ltdata.DataLoader(Records(4), **kwargs)


def test_a_context_that_is_not_a_context_is_a_type_error_like_torch():
    require_torch()
    with pytest.raises(TypeError):
        torch.utils.data.DataLoader(Records(4), num_workers=1, multiprocessing_context=3)
    with pytest.raises(TypeError, match="valid context object"):
        ltdata.DataLoader(Records(4), num_workers=1, multiprocessing_context=3)


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]),
                                    dict(batch_sampler=[[0]])])
def test_iterable_datasets_refuse_shuffle_and_samplers_like_torch(kwargs):
    require_torch()
    with pytest.raises(ValueError):
        torch.utils.data.DataLoader(make_stream(torch.utils.data.IterableDataset, 3), **kwargs)
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified"):
        ltdata.DataLoader(make_stream(ltdata.IterableDataset, 3), **kwargs)


@pytest.mark.parametrize("attr", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                  "dataset", "persistent_workers"])
def test_settings_baked_into_the_samplers_cannot_change_later_like_torch(attr):
    lt_loader, th_loader = loaders(Records(4))
    with pytest.raises(ValueError):
        setattr(th_loader, attr, None)
    with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader"):
        setattr(lt_loader, attr, None)
    lt_loader.num_workers = 0  # other settings may change


def test_timeout_without_workers_fails_at_iteration_like_torch():
    lt_loader, th_loader = loaders(Records(4), timeout=1)
    with pytest.raises(AssertionError):
        iter(th_loader)
    with pytest.raises(AssertionError, match="timeout=1 needs worker processes"):
        iter(lt_loader)


def test_pin_memory_without_an_accelerator_warns_like_torch(monkeypatch):
    # no accelerator, whatever this machine has (the CUDA tests may switch on the simulator)
    monkeypatch.setattr(learntorch.cuda, "is_available", lambda: False)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        list(ltdata.DataLoader(Records(2), pin_memory=True))


def test_the_iterator_cannot_be_pickled_like_torch():
    import pickle
    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(iter(ltdata.DataLoader(Records(2))))


def test_an_error_in_the_dataset_propagates_unchanged_without_workers():
    class Broken(ltdata.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            raise KeyError(f"no sample {i}")
    with pytest.raises(KeyError, match="no sample 0"):
        next(iter(ltdata.DataLoader(Broken())))
