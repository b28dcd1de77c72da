"""Datasets and random_split, specified against torch.utils.data on the same inputs.

Each test builds the same dataset in both libraries (from one numpy array) and
compares what indexing, ``len``, concatenation and splitting give -- values,
lengths and the exception *type* for bad input (torch's AssertionError for a
size mismatch included).
"""
import warnings

import numpy as np
import pytest

import learntorch
from learntorch.utils import data as ltdata
from oracle import require_torch, torch


def both(array):
    require_torch()
    return learntorch.from_numpy(array.copy()), torch.from_numpy(array.copy())


def values(x):
    """Plain nested Python values of a sample from either library."""
    if isinstance(x, (tuple, list)):
        return [values(v) for v in x]
    return x.tolist() if hasattr(x, "tolist") else x


# ------------------------------------------------------------------ TensorDataset
def test_tensor_dataset_rows_are_samples_like_torch():
    (xl, xt), (yl, yt) = both(np.arange(12.0).reshape(6, 2)), both(np.arange(6) % 3)
    lt_ds, th_ds = ltdata.TensorDataset(xl, yl), torch.utils.data.TensorDataset(xt, yt)
    assert len(lt_ds) == len(th_ds) == 6
    for i in [0, 3, 5, -1, -6]:
        assert values(lt_ds[i]) == values(th_ds[i])
    assert values(lt_ds[1:4]) == values(th_ds[1:4])  # slices index every tensor


def test_tensor_dataset_size_mismatch_is_an_assertion_error_naming_the_sizes():
    (xl, xt), (yl, yt) = both(np.zeros((4, 2))), both(np.zeros(5))
    with pytest.raises(AssertionError):
        torch.utils.data.TensorDataset(xt, yt)
    with pytest.raises(AssertionError, match=r"Size mismatch between tensors.*\[4, 5\]"):
        ltdata.TensorDataset(xl, yl)


def test_tensor_dataset_refuses_non_tensors():
    with pytest.raises(TypeError, match="argument 1 is a list"):
        ltdata.TensorDataset(learntorch.zeros(3), [1, 2, 3])


# ---------------------------------------------------------------- base classes
def test_dataset_without_getitem_raises_not_implemented_like_torch():
    require_torch()
    with pytest.raises(NotImplementedError):
        torch.utils.data.Dataset()[0]
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        ltdata.Dataset()[0]


def test_dataset_has_no_default_len_like_torch():
    require_torch()
    with pytest.raises(TypeError):
        len(torch.utils.data.Dataset())
    with pytest.raises(TypeError):
        len(ltdata.Dataset())


def test_adding_datasets_concatenates_and_adding_streams_chains():
    a = ltdata.TensorDataset(learntorch.arange(3))
    b = ltdata.TensorDataset(learntorch.arange(10, 12))
    joined = a + b
    assert isinstance(joined, ltdata.ConcatDataset)
    assert [joined[i][0].item() for i in range(len(joined))] == [0, 1, 2, 10, 11]

    class Stream(ltdata.IterableDataset):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __len__(self):
            return len(self.items)

    chained = Stream([1, 2]) + Stream([3])
    assert isinstance(chained, ltdata.ChainDataset)
    assert list(chained) == [1, 2, 3] and len(chained) == 3


def test_chain_dataset_refuses_map_style_datasets_like_torch():
    require_torch()
    with pytest.raises(AssertionError):
        list(torch.utils.data.ChainDataset([torch.utils.data.TensorDataset(torch.zeros(2))]))
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ltdata.ChainDataset([ltdata.TensorDataset(learntorch.zeros(2))]))


# --------------------------------------------------------------- ConcatDataset
SIZES = [3, 0, 5, 1]


def concat_pair():
    parts = [np.arange(100 * k, 100 * k + n) for k, n in enumerate(SIZES)]
    lt_parts = [ltdata.TensorDataset(learntorch.from_numpy(p.copy())) for p in parts]
    th_parts = [torch.utils.data.TensorDataset(torch.from_numpy(p.copy())) for p in parts]
    return ltdata.ConcatDataset(lt_parts), torch.utils.data.ConcatDataset(th_parts)


def test_concat_dataset_cumulative_sizes_and_every_index_like_torch():
    require_torch()
    lt_ds, th_ds = concat_pair()
    assert lt_ds.cumulative_sizes == th_ds.cumulative_sizes
    assert len(lt_ds) == len(th_ds) == sum(SIZES)
    for i in range(-len(th_ds), len(th_ds)):  # negative indices count from the end
        assert values(lt_ds[i]) == values(th_ds[i]), i


def test_concat_dataset_index_errors():
    require_torch()
    lt_ds, th_ds = concat_pair()
    n = len(th_ds)
    with pytest.raises(ValueError):
        th_ds[-n - 1]
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        lt_ds[-n - 1]
    with pytest.raises(IndexError):
        th_ds[n]
    with pytest.raises(IndexError, match=f"index {n} is out of range .* length {n}"):
        lt_ds[n]


def test_concat_dataset_refuses_empty_lists_and_streams_like_torch():
    require_torch()
    with pytest.raises(AssertionError):
        torch.utils.data.ConcatDataset([])
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ltdata.ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ltdata.ConcatDataset([ltdata.IterableDataset()])


# ---------------------------------------------------------------------- Subset
def test_subset_renumbers_without_copying():
    base = ltdata.TensorDataset(learntorch.arange(10) * 10)
    sub = ltdata.Subset(base, [7, 2, 9])
    assert len(sub) == 3
    assert [sub[i][0].item() for i in range(3)] == [70, 20, 90]
    assert sub[-1][0].item() == 90
    assert [s[0].item() for s in sub.__getitems__([2, 0])] == [90, 70]


# ---------------------------------------------------------------- random_split
@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0, 10]), (10, [5, 5, 0]),
    (10, [0.3, 0.7]), (11, [0.5, 0.5]), (7, [0.2, 0.2, 0.6]), (5, [1.0]),
    (10, [0.1, 0.1, 0.1, 0.7]), (3, [0.25, 0.25, 0.25, 0.25]),
])
def test_random_split_lengths_match_torch_and_subsets_partition_the_dataset(n, lengths):
    require_torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'length of split is 0' (both libraries warn)
        th_parts = torch.utils.data.random_split(range(n), lengths,
                                                 generator=torch.Generator().manual_seed(0))
        lt_parts = ltdata.random_split(range(n), lengths,
                                       generator=learntorch.Generator().manual_seed(0))
    assert [len(p) for p in lt_parts] == [len(p) for p in th_parts]
    taken = [p[i] for p in lt_parts for i in range(len(p))]
    assert sorted(taken) == list(range(n)), "every sample in exactly one split"


def test_random_split_warns_about_an_empty_split_like_torch():
    require_torch()
    # floor(2 * 0.1) = 0 twice; the one left over goes to split 0, split 1 stays empty
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        torch.utils.data.random_split(range(2), [0.1, 0.1, 0.8])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ltdata.random_split(range(2), [0.1, 0.1, 0.8])


@pytest.mark.parametrize("lengths", [[3, 6], [5, 6], [0.5, 0.4], [-0.5, 1.5], [0.3, 0.3]])
def test_random_split_bad_lengths_are_value_errors_like_torch(lengths):
    require_torch()
    with pytest.raises(ValueError):
        torch.utils.data.random_split(range(10), lengths)
    with pytest.raises(ValueError):
        ltdata.random_split(range(10), lengths)


def test_random_split_fraction_out_of_range_names_its_index():
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        ltdata.random_split(range(10), [0.5, -0.5, 1.0])


def test_random_split_is_reproducible_from_the_generator_and_the_global_seed():
    a = ltdata.random_split(range(20), [5, 15], generator=learntorch.Generator().manual_seed(4))
    b = ltdata.random_split(range(20), [5, 15], generator=learntorch.Generator().manual_seed(4))
    assert a[0].indices == b[0].indices and a[1].indices == b[1].indices
    learntorch.manual_seed(9)
    c = ltdata.random_split(range(20), [5, 15])
    learntorch.manual_seed(9)
    d = ltdata.random_split(range(20), [5, 15])
    assert c[0].indices == d[0].indices
    assert a[0].indices != c[0].indices  # another seed, another split
