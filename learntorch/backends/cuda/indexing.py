"""Indexing a CudaArray: basic indexing makes views, integer-array indexing gathers.

**Basic indexing** (ints, slices, None, ``...``) never touches the data: it
computes a new shape, strides and offset, exactly as numpy does, so
``x[1:, ::2]`` is a view that shares memory with ``x``.

**Integer-array indexing** (``x[idx]``, ``x[rows, cols]``) is done in two
steps that are each an elementwise kernel:

1. *positions*: for every output element, its index in the flat buffer --
   ``offset + sum(index_d * stride_d)`` over the indexed dims, plus the
   strided offset of each dim that is not indexed.  That is plain
   broadcasting arithmetic on int64 arrays (``elementwise.py``);
2. ``take``: ``out[i] = buffer[positions[i]]`` (one thread per output
   element).  Assignment (``x[idx] = v``) runs the mirror kernel
   ``buffer[positions[i]] = v[i]``, and ``np.add.at`` adds with
   ``cuda.atomic.add`` so that repeated indices all count (two threads adding
   to one element would otherwise overwrite each other's sum; float16 arrays
   add up in float32, since there is no float16 atomic add).

Out-of-range indices raise IndexError, as on the cpu (checking them costs one
small reduction and a wait for the GPU).
"""
import numbers
import sys

import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda
from .mask import expand_masks

cuda = numba_cuda()


@cuda.jit
def take(n, out, buffer, positions):
    """out[i] = buffer[positions[i]]: one thread per output element."""
    i = cuda.grid(1)
    if i < n:
        out[i] = buffer[positions[i]]


@cuda.jit
def put(n, buffer, positions, values):
    """buffer[positions[i]] = values[i] (with repeated positions the last writer wins)."""
    i = cuda.grid(1)
    if i < n:
        buffer[positions[i]] = values[i]


@cuda.jit
def add_at(n, buffer, positions, values):
    """buffer[positions[i]] += values[i], atomically: repeated positions all add up."""
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(buffer, positions[i], values[i])


def _is_int(k):
    return isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, bool)


def _index_array(k):
    """An advanced index as an int64 CudaArray, or None for a basic one."""
    if isinstance(k, CudaArray):
        if k.dtype == np.bool_:
            raise NotImplementedError(
                "boolean mask indexing (x[mask]) has no CUDA kernel in learntorch yet; use "
                "torch.where(mask, x, other) or move the tensors to the cpu")
        return k if k.dtype == np.int64 else k.astype(np.int64)
    if isinstance(k, (list, np.ndarray)):
        host = np.asarray(k)
        if host.dtype == np.bool_:
            raise NotImplementedError("boolean mask indexing has no CUDA kernel in learntorch yet")
        return CudaArray.from_host(host.astype(np.int64))
    return None


def _expand(a, key):
    if not isinstance(key, tuple):
        key = (key,)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    ellipsis = [i for i, k in enumerate(key) if k is Ellipsis]  # (``in`` would compare arrays)
    if used > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{used} were indexed")
    if ellipsis:
        i = ellipsis[0]
        key = key[:i] + (slice(None),) * (a.ndim - used) + key[i + 1:]
    return key + (slice(None),) * (a.ndim - sum(1 for k in key if k is not None))


def _split(a, key):
    """Apply the basic parts of ``key``; return (view, [(dim in view, int64 index array)])."""
    key = expand_masks(key)  # a boolean mask is the integer arrays of its True coordinates
    shape, strides, offset = [], [], a._offset
    advanced = []
    d = 0
    for k in _expand(a, key):
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        size, stride = a.shape[d], a._strides[d]
        d += 1
        if _is_int(k):
            k = int(k)
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for axis {d - 1} with size {size}")
            offset += (k % size) * stride
        elif isinstance(k, slice):
            start, stop, step = k.indices(size)
            shape.append(len(range(start, stop, step)))
            strides.append(stride * step)
            offset += start * stride
        else:
            idx = _index_array(k)
            if idx is None:
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and "
                                 f"integer arrays are valid indices, not {type(k).__name__}")
            advanced.append((len(shape), _checked(idx, size, d - 1)))
            shape.append(size)
            strides.append(stride)
    return a._view(shape, strides, offset), advanced


def _checked(idx, size, axis):
    """Negative indices wrapped; out-of-range ones raise IndexError (waits for the GPU)."""
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < -size or hi >= size:
            bad = hi if hi >= size else lo
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
        if lo < 0:
            idx = np.where(idx < 0, idx + size, idx)
    return idx


def _positions(view, advanced):
    """int64 CudaArray of buffer positions of the advanced-indexing result, and its shape."""
    dims = [d for d, _ in advanced]
    index_shape = np.broadcast_shapes(*[idx.shape for _, idx in advanced])
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    rest = [d for d in range(view.ndim) if d not in dims]
    if adjacent:
        before, after = [d for d in rest if d < dims[0]], [d for d in rest if d > dims[0]]
    else:
        before, after = [], rest
    out_shape = tuple(view.shape[d] for d in before) + tuple(index_shape) + \
        tuple(view.shape[d] for d in after)
    nb, ni = len(before), len(index_shape)
    pos = None
    for d, idx in advanced:  # the indexed dims: index * stride, in the index block
        term = idx.broadcast_to(index_shape).reshape(
            (1,) * nb + tuple(index_shape) + (1,) * len(after)) * view._strides[d]
        pos = term if pos is None else pos + term
    for j, d in enumerate(before + after):  # the other dims: arange * stride at their place
        where = j if j < nb else ni + j
        steps = _arange(view.shape[d]) * view._strides[d]
        shape = [1] * len(out_shape)
        shape[where] = view.shape[d]
        pos = pos + steps.reshape(shape)
    pos = pos + view._offset
    return pos.broadcast_to(out_shape).copy(), out_shape


def _arange(n):
    return CudaArray.from_host(np.arange(n, dtype=np.int64))


def getitem(a, key):
    view, advanced = _split(a, key)
    if not advanced:
        return view
    positions, shape = _positions(view, advanced)
    out = CudaArray.empty(shape, a.dtype)
    if out.size:
        launch(take, out.size)(out.size, out._buffer, a._buffer, positions._flat())
    return out


def setitem(a, key, value):
    view, advanced = _split(a, key)
    if not advanced:
        np.copyto(view, value, casting="unsafe")
        return
    positions, shape = _positions(view, advanced)
    values = _values(value, shape, a.dtype)
    if positions.size:
        launch(put, positions.size)(positions.size, a._buffer, positions._flat(), values._flat())


def index_add(a, key, value):
    """``np.add.at(a, key, value)``: unbuffered, repeated indices accumulate."""
    if a.dtype == np.float16:
        # cuda.atomic.add has no float16 version: add up in float32 (each sum is rounded
        # to float16 once, at the end, rather than after every add) and copy back
        wide = a.astype(np.float32)
        index_add(wide, key, value)
        np.copyto(a, wide)
        return
    view, advanced = _split(a, key)
    if not advanced:  # basic indices never repeat: a plain in-place add
        np.add(view, value, out=view)
        return
    positions, shape = _positions(view, advanced)
    values = _values(value, shape, a.dtype)
    if positions.size:
        launch(add_at, positions.size)(positions.size, a._buffer, positions._flat(),
                                       values._flat())


def _values(value, shape, dtype):
    if not isinstance(value, CudaArray):
        if isinstance(value, np.ndarray) and value.ndim:
            raise RuntimeError("cannot assign a cpu (numpy) array into a cuda array: move it "
                               "to the device first")
        full = CudaArray.empty(shape, dtype)
        full.fill(value)
        return full
    return value.astype(dtype, copy=False).broadcast_to(shape).copy()


CudaArray.indexing = sys.modules[__name__]  # x[key] on a CudaArray runs getitem/setitem here
