"""``CudaArray``: an n-dimensional array in GPU memory that numpy code can use.

A cuda tensor's ``_data`` is a ``CudaArray`` where a cpu tensor's is a numpy
array.  The op code in ``learntorch/ops`` calls numpy on ``tensor._data``
(``np.exp(a)``, ``a + b``, ``np.sum(a, axis=1)``, ``a.reshape(...)``,
``a[1:, ::2]``) and never needs to know which one it holds, because
``CudaArray`` speaks numpy's protocols (as CuPy does):

* ``__array_ufunc__`` (NEP 13): numpy hands every ufunc call on a CudaArray
  (``np.add``, ``np.exp``, the operators ``+ - * / > ==``...) to us; it
  runs as a CUDA kernel (``elementwise.py``);
* ``__array_function__`` (NEP 18): the same for numpy functions
  (``np.sum``, ``np.matmul``, ``np.where``, ``np.concatenate``...), served
  by ``numpy_api.py``.

**Layout.**  Like a numpy array it is a view: a flat device buffer, a shape,
strides (counted in elements here) and an offset.  ``reshape`` of a
contiguous array, ``transpose``, ``broadcast_to`` and basic slicing only make
a new view of the same memory, as in numpy -- which is why a cuda tensor's
``view``/``t()``/``x[:, 1]`` share memory exactly as on the cpu.

**Never a silent copy.**  Anything that would quietly bring the data to the
host (``np.asarray(x)``, a numpy function we have no kernel for) raises a
clear error instead: computing on the cpu behind the learner's back would
hide exactly what a GPU is about.  ``item()``, ``tolist()`` and
``copy_to_host()`` are the explicit ways down (each waits for the GPU).

Memory comes from the caching allocator (``allocator.py``): the array that
owns a block (``base is None``) gives it back to the cache when it dies;
views keep their owner alive.
"""
import numbers
import operator
import sys

import numpy as np

from ..._device import device as _device
from .allocator import allocator

CUDA0 = _device("cuda", 0)


def _contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class _Flags:
    """The part of numpy's ``ndarray.flags`` the engine reads."""

    def __init__(self, a):
        self.c_contiguous = a._is_c_contiguous()
        self.f_contiguous = a.ndim <= 1 and self.c_contiguous
        self.aligned = self.writeable = True
        self.owndata = a.base is None

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "WRITEABLE": "writeable", "ALIGNED": "aligned",
                              "OWNDATA": "owndata"}.get(name, name.lower()))


class CudaArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array in device memory: ``_buffer[_offset + sum(index * _strides)]``."""

    # how learntorch.Tensor recognises a device array (and which device it is on)
    tensor_device = CUDA0
    __array_priority__ = 100

    __slots__ = ("_buffer", "shape", "_strides", "_offset", "dtype", "base", "__weakref__")

    # ------------------------------------------------------------ making arrays
    @classmethod
    def empty(cls, shape, dtype):
        """A new C-contiguous array (contents undefined), memory from the caching allocator."""
        shape = tuple(int(s) for s in shape)
        dtype = np.dtype(dtype)
        a = object.__new__(cls)
        n = int(np.prod(shape, dtype=np.int64))
        block = allocator.allocate(max(n, 1) * dtype.itemsize, owner=a)
        # the typed flat buffer over the whole block (numba views the uint8 bytes)
        a._buffer = block.memory.view(dtype)
        a.shape, a._strides, a._offset, a.dtype, a.base = (
            shape, _contiguous_strides(shape), 0, dtype, None)
        return a

    @classmethod
    def from_host(cls, array):
        """A device copy of the numpy ``array`` (C-contiguous)."""
        host = np.ascontiguousarray(array).reshape(np.shape(array))  # (0-d stays 0-d)
        a = cls.empty(host.shape, host.dtype)
        if host.size:
            a._buffer[:host.size].copy_to_device(host.reshape(-1))
        return a

    def _flat(self):
        """The 1-D device array of exactly this (C-contiguous) array's elements."""
        return self._buffer[self._offset:self._offset + self.size]

    def _view(self, shape, strides, offset):
        v = object.__new__(CudaArray)
        v._buffer, v.shape, v._strides, v._offset, v.dtype = (
            self._buffer, tuple(shape), tuple(strides), offset, self.dtype)
        v.base = self if self.base is None else self.base
        return v

    # ------------------------------------------------------------ going back to the host
    def copy_to_host(self):
        """A numpy copy of this array (waits for the GPU to finish)."""
        c = self if self._is_c_contiguous() else self.copy()
        host = np.empty(self.shape, self.dtype)
        if host.size:
            host.reshape(-1)[...] = c._buffer[c._offset:c._offset + c.size].copy_to_host()
        return host

    get = copy_to_host

    def item(self, *index):
        if index:
            return self[index].item()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.reshape(()).copy_to_host().item()

    def tolist(self):
        return self.copy_to_host().tolist()

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "a cuda array cannot become a numpy array implicitly: that would copy device "
            f"memory to the host behind your back (in {_caller()}). Copy it explicitly with "
            "tensor.cpu() first, or use an operation that has a CUDA kernel.")

    def __reduce__(self):  # pickling (DataLoader workers, deepcopy of modules) goes via the host
        return (CudaArray.from_host, (self.copy_to_host(),))

    # ------------------------------------------------------------ numpy's attributes
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        """Strides in bytes, as numpy reports them."""
        return tuple(s * self.dtype.itemsize for s in self._strides)

    @property
    def flags(self):
        return _Flags(self)

    @property
    def T(self):
        return self.transpose()

    @property
    def device(self):
        return "cuda:0"

    # What numpy's functions, ufuncs and indexing do on a CudaArray, and the backend of the
    # primitives numpy cannot express, are implemented above this file (numpy_api.py,
    # indexing.py, backend.py), which import it; each registers itself here when the cuda
    # package loads (``backends/cuda/__init__.py`` imports them all).
    numpy_functions = {}   # np.function -> its CUDA implementation (numpy_api.implements)
    ufuncs = None          # numpy_api.apply_ufunc
    indexing = None        # the indexing module: getitem, setitem
    backend = None         # the CudaBackend (backend.py)

    def data_ptr(self):
        """The buffer's device address plus the offset (what Tensor.data_ptr reports)."""
        base = getattr(self._buffer, "device_ctypes_pointer", None)
        start = base.value if base is not None and base.value else id(self._buffer)
        return start + self._offset * self.dtype.itemsize

    def _is_c_contiguous(self):
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self._strides)):
            if size == 0:
                return True
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"CudaArray(shape={self.shape}, dtype={self.dtype})"

    def __bool__(self):
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        return operator.index(self.item())

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ------------------------------------------------------------ views
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = _resolve_shape(shape, self.size)
        if not self._is_c_contiguous():
            return self.copy().reshape(shape)
        return self._view(shape, _contiguous_strides(shape), self._offset)

    def as_strided(self, shape, strides, offset=0):
        """A view with ``shape`` and ``strides`` (in elements), ``offset`` elements further on."""
        return self._view(tuple(int(n) for n in shape), tuple(int(st) for st in strides),
                          self._offset + int(offset))

    def ravel(self):
        return self.reshape(-1)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        axes = [a % self.ndim if self.ndim else a for a in axes]
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        return self._view([self.shape[a] for a in axes], [self._strides[a] for a in axes],
                          self._offset)

    def swapaxes(self, a, b):
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def broadcast_to(self, shape):
        """A stride-0 view repeating this array to ``shape`` (numpy's broadcasting rules)."""
        shape = tuple(shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"cannot broadcast shape {self.shape} to {shape}")
        strides = [0] * lead
        for i, (size, stride) in enumerate(zip(self.shape, self._strides)):
            if size == shape[lead + i]:
                strides.append(stride)
            elif size == 1:
                strides.append(0)
            else:
                raise ValueError(f"operands could not be broadcast together with shapes "
                                 f"{self.shape} {shape}")
        return self._view(shape, strides, self._offset)

    def squeeze(self, axis=None):
        if axis is None:
            axes = [d for d, s in enumerate(self.shape) if s == 1]
        else:
            axes = [a % self.ndim for a in (axis if isinstance(axis, tuple) else (axis,))]
        keep = [d for d in range(self.ndim) if d not in axes]
        return self._view([self.shape[d] for d in keep], [self._strides[d] for d in keep],
                          self._offset)

    def __getitem__(self, key):
        return CudaArray.indexing.getitem(self, key)

    def __setitem__(self, key, value):
        CudaArray.indexing.setitem(self, key, value)

    # ------------------------------------------------------------ copies and casts
    def copy(self, order="C"):
        out = CudaArray.empty(self.shape, self.dtype)
        np.copyto(out, self)
        return out

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        out = CudaArray.empty(self.shape, dtype)
        np.copyto(out, self, casting="unsafe")
        return out

    def fill(self, value):
        np.copyto(self, value, casting="unsafe")

    def view(self, dtype=None):
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self._view(self.shape, self._strides, self._offset)
        raise NotImplementedError("CudaArray.view(dtype) reinterpreting bytes as another dtype "
                                  "is not supported on cuda")

    # ------------------------------------------------------------ numpy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return CudaArray.ufuncs(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = CudaArray.numpy_functions.get(func)
        if impl is None:
            raise NotImplementedError(
                f"np.{func.__name__} has no CUDA implementation in learntorch yet (called from "
                f"{_caller()}): this operation does not run on cuda tensors. Move the tensor "
                "to the cpu with .cpu() for it.")
        return impl(*args, **kwargs)

    # reductions as methods (numpy's names), served by the same code as np.sum & co
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return np.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return np.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, out=None, keepdims=False):
        return np.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        return np.argmin(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return np.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return np.all(self, axis=axis, keepdims=keepdims)


def _resolve_shape(shape, size):
    shape = [int(operator.index(s)) for s in shape]
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // known
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


def _caller():
    """The learntorch function that asked for the impossible (for error messages)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename.replace("\\", "/")
        if "/learntorch/" in name and "/backends/cuda/" not in name:
            return f"{frame.f_code.co_qualname}, {name.rsplit('/learntorch/', 1)[1]}"
        frame = frame.f_back
    return "user code"


def is_number(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.ndarray)

