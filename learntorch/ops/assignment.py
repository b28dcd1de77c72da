"""``x[index] = value``: a write into part of a tensor, in place.

The index is read as for ``x[index]`` (``indexing.py``): a region of ``x``.  The value
(a number, a tensor or nested lists) is cast to x's dtype and must broadcast to the
region.  Without autograd it is one write of the backend (``index_put``); on a tensor
in the graph it is recorded as torch does -- ``CopySlices`` for a write through a view
of x, ``IndexPutBackward0`` when the index's basic part is all of x -- by the in-place
rule every ``op_`` shares (``_inplace.apply_inplace``).
"""
import numpy as np

from .._tensor import Tensor
from ._helpers import check_same_device
from ._inplace import apply_inplace, check_no_partial_overlap
from .indexing import (CopySlices, IndexPut, _cast_scalar, _convert_index, _dims_used, _fit_value,
                       basic_view, write_region)
from .strides import has_internal_overlap


def setitem(x, index, value):
    """``x[index] = value``: in place, and recorded as a write when autograd is involved."""
    if isinstance(value, Tensor) and value._device != x._device:
        check_same_device(x, value)
    if isinstance(value, (list, tuple, np.ndarray)):
        from ..factories import tensor
        value = tensor(value, dtype=x._dtype)
    elif not isinstance(value, Tensor):
        if not isinstance(value, (bool, int, float, np.number, np.bool_)):
            raise TypeError(f"can't assign a {type(value).__name__} to a {x._type_name()}")
        value = _cast_scalar(value, x, to_inf=True)  # x[i] = 1e6 in float16: inf, as torch
    region, advanced = _convert_index(x, index)
    if isinstance(value, Tensor):
        value = _fit_value(x, region, value)
        if value._dtype is not x._dtype:
            value = value.to(x._dtype)  # torch casts the value to the tensor's dtype
    whole = _selects_everything(x, region[0])
    if whole and not advanced:  # x[...] = v, x[:] = v: every element, as fill_/copy_ in torch
        return x.copy_(value) if isinstance(value, Tensor) and value.ndim else x.fill_(value)
    if not advanced:
        target = basic_view(x._data, region[0])
        if has_internal_overlap(target):
            _overlap_error()
        if isinstance(value, Tensor):  # x[1:] = x[:-1] would read what it already overwrote
            check_no_partial_overlap(Tensor._wrap(target), value)
    # torch records a write through a view as CopySlices, and index_put_ on x itself as
    # IndexPutBackward0 (when the basic part of the index selects all of x)
    record = IndexPut if whole else CopySlices
    apply_inplace(x, lambda src: record.apply(src, region, value, False),
                  fast=lambda: _write(x, region, value), others=(value,), check_overlap=False)


def _selects_everything(x, basic):
    """True when the basic items are only ``...`` and slices covering whole dims (no view)."""
    dim = 0
    for k, item in enumerate(basic):
        if item is Ellipsis:
            dim = x.ndim - _dims_used(basic[k + 1:])
        elif isinstance(item, slice) and item.indices(x.shape[dim]) == (0, x.shape[dim], 1):
            dim += 1
        else:
            return False
    return True


def _write(x, region, value):
    try:
        write_region(x._data, region, value._data if isinstance(value, Tensor) else value)
    except ValueError as e:
        if "read-only" in str(e):
            _overlap_error()
        raise


def _overlap_error():
    raise RuntimeError(
        "unsupported operation: more than one element of the written-to tensor refers to a "
        "single memory location (it is an expand()ed view). Please clone() the tensor before "
        "performing the operation.")
