"""Indexing: ``x[...]``, ``x[...] = v``, gather, scatter, index_select, index_add, masked_fill.

Basic indexing (ints, slices, None, ``...``) returns a *view*; indexing with
integer tensors/lists or boolean masks ("advanced" indexing) returns a copy.
The backward of any read is a write: the gradient of ``x[idx]`` is a tensor
of zeros with the incoming gradient *added* at ``idx`` -- added, because the
same element may have been read several times (``x[[0, 0]]``).
"""
import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import wrap


# ---------------------------------------------------------------- index conversion
def _convert_index(x, index):
    """Turn a torch-style index into a numpy one, with torch's checks and messages."""
    items = index if isinstance(index, tuple) else (index,)
    out, advanced, dim = [], False, 0
    for item in items:
        if isinstance(item, Tensor):
            item = item._data
        elif isinstance(item, list):
            item = np.asarray(item)
            if item.dtype == object:
                raise IndexError("nested index lists must be rectangular")
        if isinstance(item, np.ndarray):
            if item.dtype == np.bool_:
                _check_mask(x, item, dim)
                advanced = True
                dim += max(item.ndim, 1)
            elif np.issubdtype(item.dtype, np.integer):
                _check_bounds(x, item, dim)
                advanced = True
                dim += 1
            else:
                raise IndexError(f"tensors used as indices must be long, int, byte or bool "
                                 f"tensors, got {item.dtype}; convert with .long()")
        elif item is None:
            pass
        elif item is Ellipsis:
            dim = _after_ellipsis(x, items)  # the dims after ``...`` are counted from the end
        elif isinstance(item, (bool, np.bool_)):
            advanced = True
        elif isinstance(item, (int, np.integer)):
            _check_int(x, int(item), dim)
            dim += 1
        elif isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            dim += 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(item).__name__})")
        out.append(item)
    if dim > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} "
                         f"(shape {list(x.shape)})")
    return tuple(out), advanced


def _after_ellipsis(x, items):
    rest = items[items.index(Ellipsis) + 1:]
    used = 0
    for i in rest:
        if i is None:
            continue
        arr = i._data if isinstance(i, Tensor) else i
        used += arr.ndim if isinstance(arr, np.ndarray) and arr.dtype == np.bool_ else 1
    return x.ndim - used


def _check_int(x, i, dim):
    if dim >= x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} "
                         f"(shape {list(x.shape)})")
    size = x.shape[dim]
    if i >= size or i < -size:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


def _check_bounds(x, arr, dim):
    if dim >= x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    if arr.size:
        size = x.shape[dim]
        hi, lo = arr.max(), arr.min()
        if hi >= size or lo < -size:
            bad = hi if hi >= size else lo
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_mask(x, mask, dim):
    for k, s in enumerate(mask.shape):
        if dim + k >= x.ndim or x.shape[dim + k] != s:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {k} does not match the shape "
                f"of the indexed tensor {list(x.shape)} at index {dim + k}")


# ---------------------------------------------------------------- reading
class Index(Function):
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, x, index, advanced):
        ctx.shape, ctx.index, ctx.dtype = x.shape, index, x._dtype
        result = x._data[index]
        if advanced:
            return wrap(np.asarray(result))
        return x._view_of(result if isinstance(result, np.ndarray) else np.asarray(result))

    @staticmethod
    def backward(ctx, grad):
        return IndexPutAdd.apply(grad, ctx.shape, ctx.index), None, None


class SliceView(Index):
    node_name = "SliceBackward0"


class IndexPutAdd(Function):
    """zeros(shape) with ``grad`` added at ``index``: the backward of a read."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, index):
        ctx.index = index
        out = np.zeros(shape, dtype=grad._data.dtype)
        np.add.at(out, index, grad._data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.index], None, None


def getitem(x, index):
    np_index, advanced = _convert_index(x, index)
    cls = Index if advanced else SliceView
    return cls.apply(x, np_index, advanced)


def select(input, dim, index):
    d = input._wrap_dim(dim)
    idx = [slice(None)] * d + [index]
    return getitem(input, tuple(idx))


# ---------------------------------------------------------------- writing
class IndexPut(Function):
    """``out = x.clone(); out[index] = value`` -- what ``x[index] = value`` records."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, x, index, value, accumulate):
        ctx.index, ctx.accumulate = index, accumulate
        out = x._data.copy()
        v = value._data if isinstance(value, Tensor) else value
        if isinstance(value, Tensor):
            ctx.value_shape = value.shape
        if accumulate:
            np.add.at(out, index, v)
        else:
            out[index] = v
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        gx = grad if ctx.accumulate else grad.index_put(ctx.index, 0.0)
        gv = None
        if ctx.needs_input_grad[2]:
            gv = grad[ctx.index]
        return gx, None, gv, None


def index_put(input, indices, values, accumulate=False):
    np_index, _ = _convert_index(input, indices)
    if isinstance(values, Tensor):
        _check_value_shape(input, np_index, values)
    return IndexPut.apply(input, np_index, values, accumulate)


def _check_value_shape(x, np_index, value):
    target = np.empty(x.shape, dtype=np.bool_)[np_index].shape
    from .broadcast import is_expandable_to
    if not is_expandable_to(tuple(value.shape), tuple(target)):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}")


def setitem(x, index, value):
    """``x[index] = value``: in place, recorded as IndexPut when autograd is involved."""
    from ._inplace import apply_inplace
    if isinstance(value, Tensor) and value._device != x._device:
        from ._helpers import check_same_device
        check_same_device(x, value)
    if not isinstance(value, Tensor):
        if isinstance(value, (list, tuple, np.ndarray)):
            value = Tensor._wrap(np.asarray(value, dtype=x._dtype.np))
    np_index, _ = _convert_index(x, index)
    if isinstance(value, Tensor):
        _check_value_shape(x, np_index, value)
        if value._dtype is not x._dtype:
            value = value.to(x._dtype)
    apply_inplace(x, lambda src: IndexPut.apply(src, np_index, value, False),
                  fast=lambda: _write(x, np_index, value), others=(value,))


def _write(x, np_index, value):
    v = value._data if isinstance(value, Tensor) else value
    try:
        x._data[np_index] = v
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location (it is an expand()ed view). Please clone() the tensor "
                "before performing the operation.") from None
        raise


# ---------------------------------------------------------------- gather / scatter
def _full_index(index, dim):
    """Index arrays addressing, for every position of ``index``, the element it names along dim."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _check_gather(input, dim, index, name, src=None):
    if index._dtype is not _dtypes.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {index._dtype}; "
                           "convert with .long()")
    if index.ndim != input.ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                           f"tensor ({name}: index shape {list(index.shape)}, input shape "
                           f"{list(input.shape)})")
    for d in range(input.ndim):
        if d != dim and index.shape[d] > input.shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(index.shape)} to be smaller than self {list(input.shape)} "
                               f"apart from dimension {dim}")
    if index._data.size:
        size = input.shape[dim]
        hi, lo = index._data.max(), index._data.min()
        if hi >= size or lo < -size:
            raise IndexError(f"{name}(): index {hi if hi >= size else lo} is out of bounds for "
                             f"dimension {dim} with size {size}")


class Gather(Function):
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.shape, ctx.dim = x.shape, dim
        return wrap(x._data[_full_index(index._data, dim)])

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        from ..factories import zeros
        return zeros(ctx.shape, dtype=grad.dtype).scatter_add(ctx.dim, index, grad), None, None


def gather(input, dim, index):
    d = input._wrap_dim(dim)
    _check_gather(input, d, index, "gather")
    return Gather.apply(input, d, index)


class ScatterAdd(Function):
    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim = dim
        out = x._data.copy()
        region = tuple(slice(0, s) for s in index.shape)
        np.add.at(out, _full_index(index._data, dim), src._data[region].astype(out.dtype))
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        g_src = None
        if ctx.needs_input_grad[3]:
            g_src = grad.gather(ctx.dim, index)
        return grad, None, None, g_src


class Scatter(Function):
    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim = dim
        out = x._data.copy()
        if isinstance(src, Tensor):
            region = tuple(slice(0, s) for s in index.shape)
            out[_full_index(index._data, dim)] = src._data[region]
        else:
            out[_full_index(index._data, dim)] = src
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        gx = grad.scatter(ctx.dim, index, 0.0) if ctx.needs_input_grad[0] else None
        g_src = grad.gather(ctx.dim, index) if ctx.needs_input_grad[3] else None
        return gx, None, None, g_src


def scatter_add(input, dim, index, src):
    d = input._wrap_dim(dim)
    _check_gather(input, d, index, "scatter_add")
    return ScatterAdd.apply(input, d, index, src)


def scatter(input, dim, index, src=None, value=None, reduce=None):
    if reduce is not None:
        if reduce == "add":
            return scatter_add(input, dim, index, src)
        raise NotImplementedError(f"scatter reduce={reduce!r} is not supported; use scatter_add")
    d = input._wrap_dim(dim)
    _check_gather(input, d, index, "scatter")
    return Scatter.apply(input, d, index, src if src is not None else value)


class IndexSelect(Function):
    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.shape, ctx.dim = x.shape, dim
        return wrap(np.take(x._data, index._data, axis=dim))

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        from ..factories import zeros
        return zeros(ctx.shape, dtype=grad.dtype).index_add(ctx.dim, index, grad), None, None


def _check_index_vector(input, dim, index, name):
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, got shape "
                         f"{list(index.shape)}")
    if index._dtype not in (_dtypes.int64, _dtypes.int32):
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index, got {index._dtype}")
    _check_bounds(input, index._data.reshape(-1), dim)


def index_select(input, dim, index):
    d = input._wrap_dim(dim)
    _check_index_vector(input, d, index, "index_select")
    return IndexSelect.apply(input, d, index.reshape(-1))


class IndexAdd(Function):
    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha):
        ctx.save_for_backward(index)
        ctx.dim, ctx.alpha = dim, alpha
        out = x._data.copy()
        moved = np.moveaxis(out, dim, 0)  # a view: writes land in ``out``
        np.add.at(moved, index._data, np.moveaxis(source._data, dim, 0) * alpha)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        g_src = grad.index_select(ctx.dim, index) * ctx.alpha if ctx.needs_input_grad[3] else None
        return grad, None, None, g_src, None


def index_add(input, dim, index, source, *, alpha=1):
    d = input._wrap_dim(dim)
    _check_index_vector(input, d, index, "index_add")
    expected = list(input.shape)
    expected[d] = index.numel()
    if list(source.shape) != expected and not (source.ndim == 0 and input.ndim == 0):
        raise RuntimeError(f"index_add_(): source shape {list(source.shape)} must match self "
                           f"shape {list(input.shape)} except at dim {d}, where it must equal "
                           f"the number of indices ({index.numel()})")
    return IndexAdd.apply(input, d, index, source, alpha)


class MaskedFill(Function):
    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.save_for_backward(mask)
        v = value._data if isinstance(value, Tensor) else value
        out = np.where(mask._data, np.asarray(v, dtype=x._data.dtype), x._data)
        return wrap(np.ascontiguousarray(np.broadcast_to(out, x.shape)))

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        g_value = None
        if ctx.needs_input_grad[2]:
            g_value = grad.where(mask, grad * 0).sum()
        return grad.masked_fill(mask, 0.0), None, g_value


def masked_fill(input, mask, value):
    if mask._dtype is not _dtypes.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask._dtype}; build it with a comparison, e.g. x > 0")
    from .broadcast import broadcast_shapes
    try:
        if broadcast_shapes(input.shape, mask.shape) != tuple(input.shape):
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(f"The size of the mask {list(mask.shape)} must be broadcastable to the "
                           f"tensor's shape {list(input.shape)} in masked_fill") from None
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    return MaskedFill.apply(input, mask, value)


def masked_select(input, mask):
    from .broadcast import broadcast_shapes
    shape = broadcast_shapes(input.shape, mask.shape)
    return getitem(input.expand(shape), mask.expand(shape))


def nonzero(input, as_tuple=False):
    idx = np.nonzero(input._data)
    if as_tuple:
        return tuple(wrap(i.astype(np.int64)) for i in idx)
    return wrap(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((1, 0), np.int64))


def take_along_dim(input, indices, dim):
    return gather(input, dim, indices)
