"""Collating: turning a list of samples into one batch (torch's ``default_collate``).

The rule is recursive and follows the *structure* of one sample:

* tensors are stacked along a new first dimension (all must have one shape);
* numpy arrays become tensors, then are stacked; numpy scalars become a tensor
  of their own dtype;
* Python floats become a float64 tensor, ints an int64 tensor, bools a bool tensor;
* strings and bytes are kept, as a list;
* a dict is collated key by key, a namedtuple field by field;
* any other sequence is *transposed*: ``[(x0, y0), (x1, y1)]`` becomes
  ``[collate([x0, x1]), collate([y0, y1])]`` -- note that a tuple comes back as
  a list, as in torch.

``default_convert`` is what the DataLoader uses when it does *not* batch
(``batch_size=None``): only numpy arrays are turned into tensors.

The lookup table ``default_collate_fn_map`` can be extended with your own types
(``collate(batch, collate_fn_map=...)``), as in torch.
"""
import collections.abc
import copy
import re

import numpy as np

from ..._tensor import Tensor
from ... import factories
from ..._dtypes import float64
from ...ops.joining import stack

# numpy dtypes that hold strings or objects cannot become tensors
_np_str_obj_array_pattern = re.compile(r"[SaUO]")

_default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}")


def default_convert(data):
    """numpy arrays (also inside dicts, lists, tuples) become tensors; the rest is kept."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_"):
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return factories.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # a mapping type that cannot be built from a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch's backwards-compatible choice
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples); leaf types are looked up in ``collate_fn_map``.

    A type is looked up exactly first, then by ``isinstance`` in the table's order
    (so ``np.float64``, which *is* a Python float, is found as a numpy scalar).
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        _check_same_keys(batch)
        fields = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                  for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields)
                return clone
            return elem_type(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        sizes = [len(e) for e in batch]
        if any(s != elem_size for s in sizes):
            raise RuntimeError(f"each element in list of batch should be of equal size (got "
                               f"lengths {sizes}); pad the samples or write a collate_fn")
        transposed = list(zip(*batch))  # read twice below, so not a lazy zip
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(_default_collate_err_msg_format.format(elem_type))


def _check_same_keys(batch):
    # torch would raise a bare KeyError for a missing key; say which sample lacks what
    keys = list(batch[0])
    for i, d in enumerate(batch):
        missing = [k for k in keys if k not in d]
        if missing:
            raise KeyError(f"sample {i} of the batch has no key(s) {missing} that sample 0 has; "
                           "every dict in a batch needs the same keys")


def collate_tensor_fn(batch, *, collate_fn_map=None):
    # learntorch.stack names both shapes when they differ ("stack expects each tensor to
    # be equal size, but got [2] at entry 0 and [3] at entry 1")
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(_default_collate_err_msg_format.format(elem.dtype))
    return collate([factories.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return factories.as_tensor(list(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    # float64, not the default float32: a Python float is a double, and torch keeps it
    return factories.tensor(list(batch), dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return factories.tensor(list(batch))  # int64; a batch of bools gives a bool tensor


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# insertion order matters: it is the order of the isinstance lookups in ``collate``
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Put a list of samples together into a batch; see the module docstring for the rules.

    >>> default_collate([(0, 1.0), (2, 3.0)])
    [tensor([0, 2]), tensor([1., 3.], dtype=learntorch.float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
