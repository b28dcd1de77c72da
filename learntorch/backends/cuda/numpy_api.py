"""The numpy functions a CudaArray answers, each made of CUDA kernels.

``CudaArray.__array_ufunc__`` sends every ufunc call here (``apply_ufunc``)
and ``__array_function__`` looks numpy functions up in ``IMPLEMENTATIONS``.
A numpy function missing from the table raises NotImplementedError naming
it: nothing falls back to the cpu.

Result dtypes are numpy's own: ``apply_ufunc`` asks numpy what the ufunc
would return for empty arrays of the same dtypes (Python numbers stay
weakly typed, NEP 50), so ``float32_array * 2.5`` stays float32 on the GPU
exactly as on the cpu.
"""
import functools
import numbers

import numpy as np

from . import elementwise, reduction
from .array import CudaArray, is_number
from .matmul import matmul

IMPLEMENTATIONS = {}


def implements(*funcs):
    def register(impl):
        for f in funcs:
            IMPLEMENTATIONS[f] = impl
        return impl
    return register


# ---------------------------------------------------------------- ufuncs
def _operand(x):
    """A CudaArray stays; numbers (and 0-d numpy values) become numpy scalars/Python numbers."""
    if isinstance(x, CudaArray):
        return x
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return x[()]
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"cuda:0 and cpu! (a numpy array of shape {x.shape} met a cuda array). Move it "
            "with .to('cuda') first.")
    if is_number(x):
        return x
    return NotImplemented


@functools.lru_cache(maxsize=4096)
def _result_dtype(ufunc, kinds, dtype):
    """numpy's result dtype and computation dtype for ``ufunc`` on operands of ``kinds``."""
    probes = [np.zeros(1, k) if isinstance(k, np.dtype) else k for k in kinds]
    with np.errstate(all="ignore"):
        result = ufunc(*probes, dtype=dtype) if dtype is not None else ufunc(*probes)
    return result.dtype, np.result_type(*probes)


def _kind(x):
    if isinstance(x, CudaArray):
        return x.dtype
    if isinstance(x, np.generic):
        return x.dtype
    return type(x)(0)  # Python numbers probe as themselves (weakly typed); 0 is safe in every ufunc


def apply_ufunc(ufunc, method, inputs, kwargs):
    if method == "reduce":
        return _ufunc_reduce(ufunc, inputs[0], kwargs)
    if method == "at":
        from .indexing import index_add
        if ufunc is not np.add:
            raise NotImplementedError(f"np.{ufunc.__name__}.at has no CUDA kernel")
        a, key, value = inputs
        index_add(a, key, _operand(value))
        return None
    if method != "__call__":
        raise NotImplementedError(f"np.{ufunc.__name__}.{method} has no CUDA kernel")
    if ufunc is np.matmul:  # a generalized ufunc: the tiled kernel, not an elementwise one
        a, b = (_operand(x) for x in inputs)
        return matmul(a, b)
    name = ufunc.__name__
    if name in _LOGICAL_ON_BOOL and all(getattr(x, "dtype", None) == np.bool_ for x in inputs):
        name = _LOGICAL_ON_BOOL[name]  # Python's ~True is -2: bools need the logical version
    fn = elementwise.UFUNCS.get(name)
    if fn is None:
        raise NotImplementedError(f"np.{ufunc.__name__} has no CUDA kernel in learntorch yet")
    operands = [_operand(x) for x in inputs]
    if any(x is NotImplemented for x in operands):
        return NotImplemented
    out = kwargs.pop("out", None)
    out = out[0] if isinstance(out, tuple) else out
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("casting", None)
    if kwargs:
        raise NotImplementedError(f"np.{ufunc.__name__} with {sorted(kwargs)} on cuda arrays")
    out_dtype, compute = _result_dtype(ufunc, tuple(_kind(x) for x in operands),
                                       None if dtype is None else np.dtype(dtype))
    arrays = [x for x in operands if isinstance(x, CudaArray)]
    shape = np.broadcast_shapes(*[x.shape for x in arrays])
    operands = [x.broadcast_to(shape) if isinstance(x, CudaArray)
                else compute.type(x) for x in operands]
    if out is None:
        out = CudaArray.empty(shape, out_dtype)
    elif not isinstance(out, CudaArray):
        raise RuntimeError("a ufunc on cuda arrays cannot write into a cpu (numpy) array")
    elif out.shape != shape:
        operands = [x.broadcast_to(out.shape) if isinstance(x, CudaArray) else x
                    for x in operands]
    return elementwise.run(name, fn, operands, out)


_LOGICAL_ON_BOOL = {"invert": "logical_not", "bitwise_and": "logical_and",
                    "bitwise_or": "logical_or", "bitwise_xor": "logical_xor"}


def _ufunc_reduce(ufunc, a, kwargs):
    op = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}.get(ufunc.__name__)
    if op is None:
        raise NotImplementedError(f"np.{ufunc.__name__}.reduce has no CUDA kernel")
    return reduction.reduce(op, a, kwargs.get("axis", 0), kwargs.get("keepdims", False),
                            kwargs.get("dtype"))


# ---------------------------------------------------------------- reductions
@implements(np.sum)
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return reduction.reduce("sum", a, axis, keepdims, dtype)


@implements(np.prod)
def _prod(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return reduction.reduce("prod", a, axis, keepdims, dtype)


@implements(np.max, np.amax)
def _max(a, axis=None, out=None, keepdims=False, **kw):
    return reduction.reduce("max", a, axis, keepdims)


@implements(np.min, np.amin)
def _min(a, axis=None, out=None, keepdims=False, **kw):
    return reduction.reduce("min", a, axis, keepdims)


@implements(np.argmax)
def _argmax(a, axis=None, out=None, keepdims=False):
    return reduction.reduce("argmax", a, axis, keepdims)


@implements(np.argmin)
def _argmin(a, axis=None, out=None, keepdims=False):
    return reduction.reduce("argmin", a, axis, keepdims)


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    out_dtype = np.mean(np.zeros(1, a.dtype), dtype=dtype).dtype
    total = reduction.reduce("sum", a if a.dtype == out_dtype else a.astype(out_dtype), axis,
                             keepdims)
    count = a.size // max(total.size, 1) if a.size else 0
    return np.true_divide(total, out_dtype.type(count) if count else np.nan).astype(out_dtype,
                                                                                copy=False)


@implements(np.any)
def _any(a, axis=None, out=None, keepdims=False, **kw):
    return reduction.reduce("max", np.not_equal(a, 0), axis, keepdims)


@implements(np.all)
def _all(a, axis=None, out=None, keepdims=False, **kw):
    return reduction.reduce("min", np.not_equal(a, 0), axis, keepdims)


@implements(np.count_nonzero)
def _count_nonzero(a, axis=None, keepdims=False):
    return reduction.reduce("sum", np.not_equal(a, 0).astype(np.int64), axis, keepdims)


# ---------------------------------------------------------------- linear algebra
@implements(np.dot)
def _dot(a, b, out=None):
    a, b = _operand(a), _operand(b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    raise NotImplementedError("np.dot of arrays with more than 2 dims has no CUDA kernel; use "
                              "matmul")


# ---------------------------------------------------------------- copies and new arrays
@implements(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, CudaArray):
        raise RuntimeError("cannot copy a cuda array into cpu memory implicitly: use "
                           "tensor.cpu() (or copy_ between tensors)")
    if where is not True:
        src = np.where(where, src, dst)
    if isinstance(src, np.ndarray) and src.ndim:
        src = CudaArray.from_host(src)  # an explicit copy into device memory (tensor.copy_)
    if not isinstance(src, CudaArray):  # fill with a number
        elementwise.run("positive", elementwise.UFUNCS["positive"], [dst.dtype.type(src)], dst)
        return
    src = src.broadcast_to(dst.shape)
    if dst.dtype == np.bool_ and src.dtype != np.bool_:
        # a cast to bool is ``x != 0``, written out: numba-cuda cannot convert a float16
        # to bool directly (NVVM rejects the IR it makes)
        elementwise.run("not_equal", elementwise.UFUNCS["not_equal"], [src, src.dtype.type(0)],
                        dst)
        return
    elementwise.run("positive", elementwise.UFUNCS["positive"], [src], dst)


@implements(np.empty_like)
def _empty_like(a, dtype=None, **kw):
    shape = kw.get("shape")
    return CudaArray.empty(a.shape if shape is None else shape, dtype or a.dtype)


@implements(np.zeros_like)
def _zeros_like(a, dtype=None, **kw):
    return _full_like(a, 0, dtype, **kw)


@implements(np.ones_like)
def _ones_like(a, dtype=None, **kw):
    return _full_like(a, 1, dtype, **kw)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=None, **kw):
    out = _empty_like(a, dtype, **kw)
    out.fill(fill_value)
    return out


# ---------------------------------------------------------------- views and shapes
@implements(np.broadcast_to)
def _broadcast_to(a, shape, subok=False):
    return a.broadcast_to(tuple(shape) if not isinstance(shape, numbers.Integral) else (shape,))


@implements(np.transpose)
def _transpose(a, axes=None):
    return a.transpose() if axes is None else a.transpose(axes)


@implements(np.reshape)
def _reshape(a, *args, **kwargs):
    shape = args[0] if args else kwargs.get("newshape", kwargs.get("shape"))
    return a.reshape(shape)


@implements(np.squeeze)
def _squeeze(a, axis=None):
    return a.squeeze(axis)


@implements(np.expand_dims)
def _expand_dims(a, axis):
    axes = axis if isinstance(axis, tuple) else (axis,)
    ndim = a.ndim + len(axes)
    axes = sorted(x % ndim for x in axes)
    shape, strides, it = [], [], iter(zip(a.shape, a._strides))
    for d in range(ndim):
        if d in axes:
            shape.append(1)
            strides.append(0)
        else:
            s, st = next(it)
            shape.append(s)
            strides.append(st)
    return a._view(shape, strides, a._offset)


@implements(np.moveaxis)
def _moveaxis(a, source, destination):
    src = [s % a.ndim for s in (source if isinstance(source, (tuple, list)) else [source])]
    dst = [d % a.ndim for d in (destination if isinstance(destination, (tuple, list))
                                 else [destination])]
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


@implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    return a.swapaxes(axis1, axis2)


@implements(np.atleast_1d)
def _atleast_1d(*arrays):
    out = [a.reshape(1) if a.ndim == 0 else a for a in arrays]
    return out[0] if len(out) == 1 else out


@implements(np.shape)
def _shape(a):
    return a.shape


@implements(np.ndim)
def _ndim(a):
    return a.ndim


@implements(np.size)
def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.result_type)
def _result_type(*args):
    return np.result_type(*[a.dtype if isinstance(a, CudaArray) else a for a in args])


@implements(np.may_share_memory, np.shares_memory)
def _may_share_memory(a, b, max_work=None):
    return (isinstance(a, CudaArray) and isinstance(b, CudaArray)
            and a._buffer is b._buffer)


# ---------------------------------------------------------------- joining and selecting
@implements(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, **kw):
    arrays = [_operand(a) for a in arrays]
    if axis is None:
        arrays, axis = [a.reshape(-1) for a in arrays], 0
    axis %= arrays[0].ndim
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(*[a.dtype for a in arrays])
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    result = CudaArray.empty(shape, dtype)
    start = 0
    for a in arrays:  # one copy kernel per input, into its slab of the result
        index = [slice(None)] * len(shape)
        index[axis] = slice(start, start + a.shape[axis])
        np.copyto(result[tuple(index)], a, casting="unsafe")
        start += a.shape[axis]
    return result


@implements(np.stack)
def _stack(arrays, axis=0, out=None, dtype=None, **kw):
    arrays = [_operand(a) for a in arrays]
    axis %= arrays[0].ndim + 1
    return _concatenate([_expand_dims(a, axis) for a in arrays], axis, dtype=dtype)


def _where_element(c, x, y):
    return x if c else y


@implements(np.where)
def _where(condition, x=None, y=None):
    if x is None and y is None:  # the coordinates of the nonzero elements
        return _nonzero(_operand(condition))
    operands = [_operand(v) for v in (condition, x, y)]
    arrays = [v for v in operands if isinstance(v, CudaArray)]
    shape = np.broadcast_shapes(*[v.shape for v in arrays])
    dtype = np.result_type(*[_kind(v) for v in operands[1:]])
    operands = [v.broadcast_to(shape) if isinstance(v, CudaArray) else
                (np.bool_(v) if i == 0 else dtype.type(v)) for i, v in enumerate(operands)]
    return elementwise.run("where", _where_element, operands, CudaArray.empty(shape, dtype))


@implements(np.clip)
def _clip(a, a_min=None, a_max=None, out=None, **kw):
    if a_min is not None:
        a = np.maximum(a, a_min)
    if a_max is not None:
        a = np.minimum(a, a_max)
    return a


@implements(np.isclose)
def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = np.less_equal(np.absolute(np.subtract(a, b)), atol + rtol * np.absolute(b))
    return np.logical_or(close, np.logical_and(np.isnan(a), np.isnan(b))) if equal_nan else close


@implements(np.allclose)
def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_isclose(a, b, rtol, atol, equal_nan).all())


@implements(np.array_equal)
def _array_equal(a, b, equal_nan=False):
    return a.shape == b.shape and bool(np.equal(a, b).all())


def _along_axis_index(a, indices, axis):
    """The index tuple that picks ``indices`` along ``axis`` and everything along the others."""
    from .indexing import _arange
    axis %= a.ndim
    key = []
    for d in range(a.ndim):
        if d == axis:
            key.append(_operand(indices))
        else:
            shape = [1] * a.ndim
            shape[d] = indices.shape[d]
            key.append(_arange(indices.shape[d]).reshape(shape))
    return tuple(key)


@implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis):
    return arr[_along_axis_index(arr, indices, axis)]


@implements(np.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    arr[_along_axis_index(arr, indices, axis)] = _operand(values)


# ---------------------------------------------------------------- new arrays with ``like=`` (NEP 35)
# ``np.zeros(shape, dtype=..., like=x)`` creates the array where ``x`` lives: op code
# that makes a fresh array passes ``like=`` its input, and gets device memory here.
def _new(shape, dtype, fill):
    out = CudaArray.empty(shape if isinstance(shape, tuple) else
                          tuple(shape) if isinstance(shape, list) else (shape,),
                          np.dtype(dtype if dtype is not None else np.float64))
    if fill is not None:
        out.fill(fill)
    return out


@implements(np.zeros)
def _zeros(shape, dtype=float, order="C"):
    return _new(shape, dtype, 0)


@implements(np.ones)
def _ones(shape, dtype=None, order="C"):
    return _new(shape, dtype, 1)


@implements(np.empty)
def _empty(shape, dtype=float, order="C"):
    return _new(shape, dtype, None)


@implements(np.full)
def _full(shape, fill_value, dtype=None, order="C"):
    return _new(shape, dtype if dtype is not None else np.asarray(fill_value).dtype, fill_value)


@implements(np.array)
def _array(a, dtype=None, *, copy=True, **kw):
    if isinstance(a, CudaArray) and copy is True:  # np.array copies unless told not to
        return a.astype(dtype if dtype is not None else a.dtype)
    return _asarray(a, dtype)


@implements(np.asarray, np.ascontiguousarray)
def _asarray(a, dtype=None, order=None, copy=None, **kw):
    if isinstance(a, CudaArray):
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a if a._is_c_contiguous() else a.copy()
    host = np.asarray(a, dtype=dtype)
    if host.ndim:  # only a number may be created on the device implicitly
        raise RuntimeError("cannot create a cuda array from cpu data implicitly: move it "
                           "with .to('cuda') first")
    return _new((), host.dtype, host[()])


# ---------------------------------------------------------------- scans, masks, sorting, einsum
# (kernels in scan.py, mask.py, sort.py; einsum.py lowers to matmul)
@implements(np.cumsum)
def _cumsum(a, axis=None, dtype=None, out=None):
    from .scan import cumsum
    return cumsum(a, axis, dtype)


@implements(np.nonzero)
def _nonzero(a):
    from .mask import nonzero
    return nonzero(a)


@implements(np.argsort)
def _argsort(a, axis=-1, kind=None, order=None, **kw):
    from .sort import argsort
    return argsort(a, axis, kind, order)


@implements(np.einsum)
def _einsum(*operands, **kw):
    from .einsum import einsum
    return einsum(*operands, **kw)


@implements(np.flip)
def _flip(a, axis=None):
    """A view that walks ``axis`` backwards: start at its last element, negate its stride."""
    axes = range(a.ndim) if axis is None else (axis if isinstance(axis, (tuple, list))
                                                else (axis,))
    strides, offset = list(a._strides), a._offset
    for d in axes:
        d %= a.ndim
        if a.shape[d]:
            offset += (a.shape[d] - 1) * strides[d]
            strides[d] = -strides[d]
    return a._view(a.shape, strides, offset)


@implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    """The elements at ``indices`` along ``axis`` (of the flattened array if None): a gather."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    return a[(slice(None),) * (axis % a.ndim) + (_operand_index(indices),)]


def _operand_index(indices):
    if isinstance(indices, CudaArray):
        return indices
    host = np.asarray(indices)
    return int(host) if host.ndim == 0 else CudaArray.from_host(host.astype(np.int64))


@implements(np.pad)
def _pad(a, pad_width, mode="constant", constant_values=0, **kw):
    """Constant padding: a filled array with ``a`` copied into its middle."""
    if mode != "constant":
        raise NotImplementedError(f"np.pad(mode={mode!r}) has no CUDA kernel; learntorch pads "
                                  "reflect/replicate/circular with np.take")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
    out = CudaArray.empty([s + lo + hi for s, (lo, hi) in zip(a.shape, widths)], a.dtype)
    out.fill(constant_values)
    np.copyto(out[tuple(slice(lo, lo + s) for s, (lo, _) in zip(a.shape, widths))], a)
    return out
