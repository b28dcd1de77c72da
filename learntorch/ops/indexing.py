"""Indexing: ``x[...]``, gather, scatter, index_select, index_add, masked_fill (and the
regions ``x[...] = v`` writes to: ``assignment.py``).

Basic indexing (ints, slices, None, ``...``) returns a *view*; indexing with
integer tensors/lists or boolean masks ("advanced" indexing) returns a copy.
The backward of any read is a write: the gradient of ``x[idx]`` is a tensor
of zeros with the incoming gradient *added* at ``idx`` -- added, because the
same element may have been read several times (``x[[0, 0]]``).
"""
import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import wrap
from ._views import view_of
from .broadcast import _broadcast_tuple, is_expandable_to
from .strides import clone_strides, select_array, slice_array, unsqueeze_array

_INDEX_DTYPES = (_dtypes.int64, _dtypes.int32)


# ---------------------------------------------------------------- index conversion
def _as_items(index):
    """The index as a tuple of items.

    Like torch, a list that holds sequences, slices, ``...`` or None is read as
    a tuple (``x[[[0, 1], [1, 2]]]`` is ``x[[0, 1], [1, 2]]``); any other list
    is one integer/bool index.
    """
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and any(
            isinstance(i, (list, tuple, slice, Tensor, np.ndarray)) or i is None or i is Ellipsis
            for i in index):
        return tuple(index)
    return (index,)


def _convert_index(x, index):
    """Turn a torch-style index into a *region* of ``x``, with torch's checks and messages.

    Torch indexes in two steps, and so does a region ``(basic, advanced)``:

    1. ``basic``: ints, slices, None and ``...`` applied one at a time -- a view;
    2. ``advanced``: integer arrays and boolean masks applied to that view (a
       numpy index tuple, or None when there are none) -- a copy.

    Doing the ints first matters: ``x[0, :, [1, 2]]`` has shape [4, 2] for x of
    shape [3, 4, 5] in torch, where numpy's one-step rule gives [2, 4].
    """
    items = _as_items(index)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    basic, arrays = [], []  # arrays: (dim of the basic view, index array)
    dim = vdim = 0  # the next dim of x, and of the basic view, that an item applies to
    for k, item in enumerate(items):
        if isinstance(item, Tensor):
            item = item._data
        elif isinstance(item, list):
            item = np.asarray(item)
            if item.dtype == object:
                raise IndexError("nested index lists must be rectangular")
            if item.size == 0:
                item = item.astype(np.int64)  # torch reads [] as an empty long index
        if _is_array(item) and item.ndim == 0 and item.dtype == np.bool_:
            item = bool(item)
        if _is_array(item):
            if item.dtype == np.uint8:
                item = item.astype(np.bool_)  # torch's (deprecated) byte masks
            if item.dtype == np.bool_:
                _check_mask(x, item, dim)
                span = item.ndim
            elif item.dtype in (np.int64, np.int32):
                _check_bounds(x, item, dim)
                if item.ndim == 0:  # a 0-d integer tensor acts as a plain int (a view)
                    _check_int(x, int(item), dim)
                    basic.append(int(item))
                    dim += 1
                    continue
                span = 1
            else:
                raise IndexError(f"tensors used as indices must be long, int, byte or bool "
                                 f"tensors, got {item.dtype}; convert with .long()")
            basic += [slice(None)] * span  # keep the dims; the array picks from them later
            arrays.append((vdim, item))
            dim, vdim = dim + span, vdim + span
        elif item is None:
            basic.append(None)
            vdim += 1
        elif item is Ellipsis:
            skip = x.ndim - _dims_used(items[k + 1:]) - dim
            basic.append(Ellipsis)
            dim, vdim = dim + max(skip, 0), vdim + max(skip, 0)
        elif isinstance(item, (bool, np.bool_)):
            # True adds a size-1 dim and keeps it, False adds one and keeps nothing
            basic.append(None)
            arrays.append((vdim, np.arange(int(item), dtype=np.int64)))
            vdim += 1
        elif isinstance(item, (int, np.integer)):
            _check_int(x, int(item), dim)
            basic.append(int(item))
            dim += 1
        elif isinstance(item, slice):
            _check_slice(item)
            basic.append(item)
            dim, vdim = dim + 1, vdim + 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(item).__name__})")
    if dim > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} "
                         f"(shape {list(x.shape)})")
    if not arrays:
        return (tuple(basic), None), False
    advanced, pos = [], 0
    for vd, arr in arrays:
        advanced += [slice(None)] * (vd - pos) + [arr]
        pos = vd + (arr.ndim if arr.dtype == np.bool_ else 1)
    return (tuple(basic), tuple(advanced)), True


def read_region(a, region):
    """``a`` indexed by ``region``: a numpy view for basic indexing, a new array (through the
    backend) for advanced."""
    basic, advanced = region
    v = basic_view(a, basic)
    return v if advanced is None else backends.current.advanced_index(v, advanced)


def write_region(a, region, value, accumulate=False):
    """Write (or add) ``value`` into ``a`` at ``region``, in place (the backend's write)."""
    basic, advanced = region
    backends.current.index_put(basic_view(a, basic), advanced, value, accumulate)


def _dims_used(items):
    """How many dims of the indexed tensor ``items`` consume (None and bools consume none)."""
    used = 0
    for i in items:
        if i is None or isinstance(i, (bool, np.bool_)):
            continue
        arr = i._data if isinstance(i, Tensor) else (np.asarray(i) if isinstance(i, list) else i)
        is_mask = _is_array(arr) and arr.dtype in (np.bool_, np.uint8)
        used += arr.ndim if is_mask else 1
    return used


def _is_array(item):
    """A numpy array, or a device array (a cuda tensor's data) standing in for one."""
    return isinstance(item, np.ndarray) or hasattr(item, "tensor_device")


def _check_slice(item):
    for name in ("start", "stop", "step"):
        v = getattr(item, name)
        if v is not None and not isinstance(v, (int, np.integer)) and not (
                isinstance(v, Tensor) and v.ndim == 0 and not v.is_floating_point()):
            raise TypeError(f"slice indices must be integers or None, got {name}={v!r}")
    if item.step is not None:
        if item.step == 0:
            raise ValueError("slice step cannot be zero")
        if item.step < 0:
            raise ValueError("step must be greater than zero (negative steps are not supported; "
                             "use .flip(dim) to reverse a dimension)")


def _check_int(x, i, dim):
    if dim >= x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} "
                         f"(shape {list(x.shape)})")
    size = x.shape[dim]
    if i >= size or i < -size:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


def _check_bounds(x, arr, dim):
    if dim >= x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} "
                         f"(shape {list(x.shape)})")
    if arr.size:
        size = x.shape[dim]
        hi, lo = arr.max(), arr.min()
        if hi >= size or lo < -size:
            bad = hi if hi >= size else lo
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_mask(x, mask, dim):
    for k, s in enumerate(mask.shape):
        if dim + k >= x.ndim:
            raise IndexError(f"too many indices for tensor of dimension {x.ndim}: the mask of "
                             f"shape {list(mask.shape)} starts at dimension {dim} of a tensor "
                             f"of shape {list(x.shape)}")
        if x.shape[dim + k] != s:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {k} does not match the shape "
                f"of the indexed tensor {list(x.shape)} at index {dim + k}")


def basic_view(a, items):
    """numpy view of ``a`` for ints, slices, None and ``...``, applied one at a time as torch.

    Each int selects (removes a dim and moves the offset), each slice narrows a
    dim (moves the offset, multiplies the stride by the step), each None
    inserts a size-1 dim.  numpy's ``a[items]`` reads the same elements, but
    one at a time, as torch, gives torch's strides and offsets in every case.
    """
    dim = 0
    for k, item in enumerate(items):
        if item is None:
            a = unsqueeze_array(a, dim)
            dim += 1
        elif item is Ellipsis:
            dim = a.ndim - _dims_used(items[k + 1:])
        elif isinstance(item, slice):
            a = slice_array(a, dim, item)
            dim += 1
        else:
            a = select_array(a, dim, item)
    return a


# ---------------------------------------------------------------- reading
class SliceView(Function):
    """Basic indexing: a view of the input."""

    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, x, basic):
        ctx.shape, ctx.basic = x.shape, basic
        return view_of(ctx, x, basic_view(x._data, basic))

    @staticmethod
    def backward(ctx, grad):
        return IndexPutAdd.apply(grad, ctx.shape, (ctx.basic, None)), None


class Select(SliceView):
    node_name = "SelectBackward0"


class Index(Function):
    """Advanced indexing: a new tensor gathered from the input."""

    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, x, region):
        ctx.shape, ctx.region = x.shape, region
        return wrap(read_region(x._data, region))

    @staticmethod
    def backward(ctx, grad):
        return IndexPutAdd.apply(grad, ctx.shape, ctx.region), None


class IndexPutAdd(Function):
    """zeros(shape) with ``grad`` added at ``region``: the backward of a read."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, region):
        ctx.region = region
        out = backends.current.full(shape, 0, grad._data.dtype, like=grad._data)  # grad's device
        write_region(out, region, grad._data, accumulate=True)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return index_region(grad, ctx.region), None, None


def index_region(x, region):
    """``x`` read at ``region``, recorded for autograd: a view (basic) or a copy (advanced)."""
    basic, advanced = region
    if advanced is not None:
        return Index.apply(x, region)
    only_ints = basic and all(isinstance(i, int) for i in basic)
    return (Select if only_ints else SliceView).apply(x, basic)


def getitem(x, index):
    region, _ = _convert_index(x, index)
    return index_region(x, region)


def select(input, dim, index):
    d = input._wrap_dim(dim)
    index = int(index)
    size = input.shape[d]
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return Select.apply(input, (slice(None),) * d + (index,))


# ---------------------------------------------------------------- writing
class IndexPut(Function):
    """``out = x.clone(); out[region] = value`` (or ``+= value`` when accumulating)."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, x, region, value, accumulate):
        ctx.region, ctx.accumulate = region, accumulate
        out = backends.current.copy(x._data, clone_strides(x.shape, x.stride()))  # as x.clone()
        write_region(out, region, value._data if isinstance(value, Tensor) else value,
                     accumulate)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        # overwritten elements no longer depend on x; the value's gradient is what
        # reached the positions it was written to (the engine sums broadcast dims)
        gx = None
        if ctx.needs_input_grad[0]:
            gx = grad if ctx.accumulate else IndexPut.apply(grad, ctx.region, 0.0, False)
        gv = index_region(grad, ctx.region) if ctx.needs_input_grad[2] else None
        return gx, None, gv, None


class CopySlices(IndexPut):
    node_name = "CopySlices"  # torch's name for a write into part of a tensor


def index_put(input, indices, values, accumulate=False):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    region, _ = _convert_index(input, tuple(indices))
    if isinstance(values, Tensor):
        if values._dtype is not input._dtype:
            raise RuntimeError(
                f"Index put requires the source and destination dtypes match, got "
                f"{_short(input._dtype)} for the destination and {_short(values._dtype)} for "
                "the source. Convert with values.to(input.dtype)")
        values = _fit_value(input, region, values)
    return IndexPut.apply(input, region, values, bool(accumulate))


def _short(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}[d.name]


def region_shape(x, region):
    """The shape of ``x[region]``, read off a probe: a one-byte array broadcast to x's shape
    (no memory of x's size), on x's device since the region may hold device index arrays."""
    probe = np.broadcast_to(np.zeros((), dtype=np.bool_, like=x._data), x.shape)
    basic, advanced = region
    v = basic_view(probe, basic)
    return v.shape if advanced is None else v[advanced].shape


def _fit_value(x, region, value):
    """``value`` checked to broadcast to ``x[region]``; leading size-1 dims dropped, as torch."""
    target = region_shape(x, region)
    while value.ndim > len(target) and value.shape[0] == 1:
        value = value.squeeze(0)
    if not is_expandable_to(tuple(value.shape), tuple(target)):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}")
    return value


# ---------------------------------------------------------------- gather / scatter
def _check_index_tensor(input, dim, index, name, src=None):
    """torch's checks shared by gather, scatter and scatter_add (all RuntimeErrors)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index, got "
                           f"{index._dtype}; convert with .long()")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                           f"tensor ({name}: index shape {list(index.shape)}, input shape "
                           f"{list(input.shape)})")
    ishape, xshape = _shape1(index), _shape1(input)
    sshape = _shape1(src) if isinstance(src, Tensor) else None
    for d in range(len(ishape)):
        too_big = d != dim and ishape[d] > xshape[d]
        if too_big or (sshape is not None and ishape[d] > sshape[d]):
            tail = f" and to be no larger size than src {list(src.shape)}" if sshape else ""
            raise RuntimeError(f"Size does not match at dimension {d}: expected index "
                               f"{list(index.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {dim}{tail}")
    if index._data.size:
        size = xshape[dim]
        hi, lo = index._data.max(), index._data.min()
        if hi >= size or lo < 0:  # no negative indices here, unlike x[i]
            raise RuntimeError(f"index {hi if hi >= size else lo} is out of bounds for "
                               f"dimension {dim} with size {size} (in {name})")


def _shape1(t):
    """Shape with 0-d treated as 1-d of one element (torch allows 0-d gather/scatter)."""
    return tuple(t.shape) if t.ndim else (1,)


def _check_same_dtype(input, src, name):
    if isinstance(src, Tensor) and src._dtype is not input._dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype (self is "
                           f"{input._dtype}, src is {src._dtype}); convert src with "
                           ".to(self.dtype)")


def _zeros(shape, like):
    """zeros of ``shape`` in ``like``'s dtype and on its device (a backward's canvas)."""
    return Tensor._wrap(backends.current.full(shape, 0, like._data.dtype, like=like._data))


class Gather(Function):
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.shape, ctx.dim = x.shape, dim
        return wrap(backends.current.gather(x._data, dim, index._data))

    @staticmethod
    def backward(ctx, grad):
        # each picked element sends its gradient back where it came from (repeats add up)
        index, = ctx.saved_tensors
        return _zeros(ctx.shape, grad).scatter_add(ctx.dim, index, grad), None, None


def gather(input, dim, index, *, sparse_grad=False):
    d = input._wrap_dim(dim)
    _check_index_tensor(input, d, index, "gather")
    return Gather.apply(input, d, index)


def _src_grad(grad, index, dim, src_shape):
    """Gradient of scatter's src: what reached each written position, zero for unused src."""
    g = grad.gather(dim, index)
    if tuple(g.shape) == tuple(src_shape):
        return g
    from .padding import constant_pad
    return constant_pad(g, [(0, s - n) for s, n in zip(src_shape, g.shape)])


class ScatterAdd(Function):
    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim, ctx.src_shape = dim, src.shape
        return wrap(backends.current.scatter_add(x._data, dim, index._data, src._data))

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        g_src = None
        if ctx.needs_input_grad[3]:
            g_src = _src_grad(grad, index, ctx.dim, ctx.src_shape)
        return grad, None, None, g_src


class Scatter(Function):
    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim = dim
        ctx.src_shape = src.shape if isinstance(src, Tensor) else None
        value = src._data if isinstance(src, Tensor) else src
        return wrap(backends.current.scatter(x._data, dim, index._data, value))

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        # overwritten positions no longer depend on x
        gx = grad.scatter(ctx.dim, index, 0.0) if ctx.needs_input_grad[0] else None
        g_src = None
        if ctx.needs_input_grad[3]:
            g_src = _src_grad(grad, index, ctx.dim, ctx.src_shape)
        return gx, None, None, g_src


class ScatterValue(Scatter):
    node_name = "ScatterBackward1"


class ScatterWithReduce(Function):
    """The legacy ``scatter(..., reduce='add' | 'multiply')``: torch has no derivative for it
    (scatter_reduce has one)."""

    node_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce):
        value = src._data if isinstance(src, Tensor) else src
        name = {"add": "sum", "multiply": "prod"}[reduce]
        return wrap(backends.current.scatter_reduce(x._data, dim, index._data, value, name, True))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::scatter is not implemented (scatter with "
                           "reduce=...); use scatter_reduce(dim, index, src, reduce), which "
                           "has one, or scatter_add")


class ScatterReduce(Function):
    """scatter_reduce: each position named by ``index`` becomes the reduction ("sum", "prod",
    "mean", "amax", "amin") of the src values sent to it (and of its own value when
    ``include_self``).  The gradients are torch's:

    * sum: every contribution gets the position's gradient;
    * mean: each of the N contributions gets 1/N of it;
    * prod: each gets the product of the others (zeros handled without dividing by 0);
    * amax/amin: shared evenly among the contributions equal to the result.
    """

    node_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        out = wrap(backends.current.scatter_reduce(x._data, dim, index._data, src._data, reduce,
                                                   include_self))
        ctx.save_for_backward(x, index, src, out)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        return out

    @staticmethod
    def backward(ctx, grad):
        x, index, src, result = ctx.saved_tensors
        dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
        if reduce == "sum":
            g_self, g_src = grad, grad.gather(dim, index)
        elif reduce == "mean":
            count = _zeros(x.shape, grad) + (1.0 if include_self else 0.0)
            count = count.scatter_add(dim, index, _zeros(src.shape, grad) + 1.0)
            count = count.masked_fill(count == 0, 1.0)
            g_self, g_src = grad / count, (grad / count).gather(dim, index)
        elif reduce == "prod":
            masked_self = x.masked_fill(x == 0, 1)
            masked_result = masked_self.scatter_reduce(dim, index, src, "prod",
                                                       include_self=include_self)
            g_self = grad * masked_result / masked_self
            src_zero = src == 0
            zeros_sent = _zeros(x.shape, grad).scatter_add(dim, index, src_zero.to(grad.dtype))
            single_zero = src_zero & (zeros_sent.gather(dim, index) == 1)
            masked_src_result = x.scatter_reduce(dim, index, src.masked_fill(single_zero, 1),
                                                 "prod", include_self=include_self)
            from .comparison import where
            g_src = where(single_zero, (grad * masked_src_result).gather(dim, index),
                          (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
        else:  # amax / amin: shared among the contributions equal to the result
            value = result.gather(dim, index)
            self_is_result = (x == result).to(grad.dtype)
            src_is_result = (src == value).to(grad.dtype)
            n = self_is_result.scatter_add(dim, index, src_is_result)
            shared = grad / n
            g_self = self_is_result * shared
            g_src = src_is_result * shared.gather(dim, index)
        if not include_self:
            g_self = g_self.scatter(dim, index, 0.0)  # those positions forgot their value
        return (g_self if ctx.needs_input_grad[0] else None, None, None,
                g_src if ctx.needs_input_grad[3] else None, None, None)


def scatter_add(input, dim, index, src):
    d = input._wrap_dim(dim)
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    _check_same_dtype(input, src, "scatter_add")
    _check_index_tensor(input, d, index, "scatter_add", src)
    return ScatterAdd.apply(input, d, index, src)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``input`` with ``src`` (a tensor or a number) written at ``index`` along ``dim``;
    with ``reduce='add'`` or ``'multiply'`` combined with what is there instead."""
    if src is None and value is None:
        raise TypeError("scatter() needs either a src tensor or a value")
    src = src if src is not None else value
    d = input._wrap_dim(dim)
    _check_same_dtype(input, src, "scatter")
    _check_index_tensor(input, d, index, "scatter", src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got "
                               f"{reduce!r} (scatter_reduce takes 'sum', 'prod', 'mean', "
                               "'amax', 'amin')")
        if not isinstance(src, Tensor):
            src = _cast_scalar(src, input)
        return ScatterWithReduce.apply(input, d, index, src, reduce)
    if isinstance(src, Tensor):
        return Scatter.apply(input, d, index, src)
    # torch converts (and range-checks) the number only when an element is written
    return ScatterValue.apply(input, d, index, _cast_scalar(src, input) if index.numel() else 0)


_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` where each position ``index`` names along ``dim`` becomes the ``reduce`` of
    the ``src`` values sent there (and of its own value when ``include_self``)."""
    d = input._wrap_dim(dim)
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' (position 3) must be Tensor, not "
                        f"{type(src).__name__}")
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    _check_same_dtype(input, src, "scatter_reduce")
    _check_index_tensor(input, d, index, "scatter_reduce", src)
    return ScatterReduce.apply(input, d, index, src, reduce, bool(include_self))


def _cast_scalar(value, input, to_inf=False):
    """A Python number in the tensor's dtype (torch truncates floats written to ints, and
    wraps out-of-range ints into the small integer types; ``to_inf``: see cast_python_scalar)."""
    if isinstance(value, Tensor):
        value = value.item()
    return _dtypes.cast_python_scalar(value, input._dtype, to_inf)


class IndexSelect(Function):
    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.shape, ctx.dim = x.shape, dim
        return wrap(backends.current.index_select(x._data, dim, index._data))

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        return _zeros(ctx.shape, grad).index_add(ctx.dim, index, grad), None, None


def _check_index_vector(input, dim, index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got a tensor of "
                         f"shape {list(index.shape)}; flatten it first")
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index, got "
                           f"{index._dtype}; convert with .long()")


def index_select(input, dim, index):
    d = input._wrap_dim(dim)
    _check_index_vector(input, d, index, "index_select")
    size = input.shape[d] if input.ndim else 1
    if index._data.size and (index._data.min() < 0 or index._data.max() >= size):
        raise IndexError(f"index out of range in self: index_select() along dimension {d} of "
                         f"size {size} got indices {index.tolist()}")
    return IndexSelect.apply(input, d, index.reshape(-1))


class IndexAdd(Function):
    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha):
        ctx.save_for_backward(index)
        ctx.dim, ctx.alpha = dim, alpha
        return wrap(backends.current.index_add(x._data, dim, index._data, source._data, alpha))

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        g_src = None
        if ctx.needs_input_grad[3]:
            g_src = grad.index_select(ctx.dim, index)
            if ctx.alpha != 1:
                g_src = g_src * ctx.alpha
        return grad, None, None, g_src, None


def index_add(input, dim, index, source, *, alpha=1):
    d = input._wrap_dim(dim)
    if not isinstance(source, Tensor):
        raise TypeError(f"index_add(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got a tensor of "
                         f"shape {list(index.shape)}")
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_short(index._dtype)}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"index_add_(): self ({_short(input._dtype)}) and source "
                           f"({_short(source._dtype)}) must have the same scalar type")
    xshape, sshape = _shape1(input), _shape1(source)
    if len(sshape) != len(xshape) or any(s != n for i, (s, n) in enumerate(zip(sshape, xshape))
                                         if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")
    if sshape[d] != index.numel():
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal "
                           f"to source.size(dim): ({sshape[d]}), for dim: {d}")
    size = xshape[d]
    if index._data.size and (index._data.min() < 0 or index._data.max() >= size):
        bad = index._data.max() if index._data.max() >= size else index._data.min()
        if input.ndim <= 1:  # torch's vector path reports it as an IndexError
            raise IndexError(f"index out of range in self: index_add() got index {bad} for a "
                             f"tensor of size {size}")
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return IndexAdd.apply(input, d, index.reshape(-1), source, alpha)


class MaskedFill(Function):
    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.save_for_backward(mask)
        v = value._data if isinstance(value, Tensor) else value
        return wrap(backends.current.masked_fill(x._data, mask._data, v))

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        from .comparison import where
        g_x = where(mask, 0.0, grad) if ctx.needs_input_grad[0] else None
        g_value = where(mask, grad, 0.0).sum() if ctx.needs_input_grad[2] else None
        return g_x, None, g_value


class MaskedFillTensor(MaskedFill):
    node_name = "MaskedFillBackward1"


def masked_fill(input, mask, value):
    if not isinstance(mask, Tensor) or mask._dtype is not _dtypes.bool_:
        got = mask._dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{got}; build it with a comparison, e.g. x > 0")
    _broadcast_tuple(input.shape, mask.shape)  # torch's "size of tensor a ... must match"
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return MaskedFillTensor.apply(input, mask, value)
    return MaskedFill.apply(input, mask, _cast_scalar(value, input))


def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask._dtype is not _dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask (build it with a "
                           "comparison, e.g. x > 0)")
    shape = _broadcast_tuple(input.shape, mask.shape)
    return getitem(input.expand(shape), mask.expand(shape))


def nonzero(input, *, as_tuple=False):
    """The coordinates of the nonzero elements: an (n, ndim) int64 tensor, or with
    ``as_tuple`` one 1-D tensor per dim (``x[x.nonzero(as_tuple=True)]`` reads them)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if as_tuple:
        return tuple(wrap(i) for i in backends.current.nonzero_tuple(input._data))
    return wrap(backends.current.nonzero(input._data))


def take_along_dim(input, indices, dim=None):
    """``gather`` that first broadcasts ``input`` and ``indices`` (except along ``dim``)."""
    if indices._dtype is not _dtypes.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_short(indices._dtype)}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = input._wrap_dim(dim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    in_shape, idx_shape = list(input.shape), list(indices.shape)
    in_shape[d] = idx_shape[d] = 1
    common = list(_broadcast_tuple(in_shape, idx_shape))
    in_target, idx_target = common.copy(), common.copy()
    in_target[d], idx_target[d] = input.shape[d], indices.shape[d]
    return gather(input.expand(in_target), d, indices.expand(idx_target))
