"""Creating tensors: tensor, zeros, ones, full, arange, linspace, eye, rand, randn, ...

Every factory takes torch's keywords ``dtype``, ``device`` and
``requires_grad``.  Floats default to float32 (``get_default_dtype()``),
integers to int64.  ``from_numpy`` and ``as_tensor`` share memory with a numpy
array; ``tensor`` always copies.
"""
import numbers

import numpy as np

from . import _dtypes
from ._device import to_device
from ._tensor import Tensor
from . import random as _random


def _finish(array, dtype, device, requires_grad):
    t = Tensor._wrap(array)
    if device is not None and to_device(device).type != "cpu":
        from . import cuda
        t = cuda._move(t, to_device(device))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a tuple of ints, but got an element of type "
                            f"{type(s).__name__} ({s!r})")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _infer_dtype(data):
    """torch's rules for a nested Python list: bool < int < float, float -> default dtype."""
    kind = 0
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kind = max(kind, {"bool": 0}.get(x.dtype.name, 2 if x.dtype.is_floating_point else 1))
        elif isinstance(x, (bool, np.bool_)):
            pass
        elif isinstance(x, (int, np.integer)):
            kind = max(kind, 1)
        elif isinstance(x, (float, np.floating)):
            kind = 2
        elif isinstance(x, numbers.Number):
            raise TypeError(f"complex numbers are not supported by learntorch (got {x!r})")
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}: tensor() accepts "
                            "numbers, nested lists/tuples of numbers, numpy arrays and tensors")
    return (_dtypes.bool_, _dtypes.int64, _dtypes.get_default_dtype())[kind]


def _to_array(data, dtype):
    if isinstance(data, Tensor):
        return data._data.astype(dtype.np if dtype else data._data.dtype, copy=True)
    if isinstance(data, np.ndarray):
        return data.astype(dtype.np if dtype else data.dtype, copy=True)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    d = dtype or _infer_dtype(data)
    try:
        arr = np.array(data, dtype=d.np)
    except ValueError as e:
        raise ValueError(f"expected a rectangular nested sequence of numbers: {e}") from None
    if arr.dtype == object:
        raise ValueError("expected a rectangular nested sequence of numbers")
    return arr


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (number, nested list, numpy array or tensor)."""
    dtype = _dtypes.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, np.ndarray) and dtype is None:
        _dtypes.from_numpy_dtype(data.dtype)  # a clear error for unsupported numpy dtypes
    return _finish(_to_array(data, dtype), dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a numpy array or tensor when it can."""
    if isinstance(data, Tensor) and (dtype is None or _dtypes.to_dtype(dtype) is data.dtype):
        return data if device is None else data.to(device)
    if isinstance(data, np.ndarray) and (dtype is None or _dtypes.to_dtype(dtype).np == data.dtype):
        _dtypes.from_numpy_dtype(data.dtype)
        return _finish(data, None, device, False)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray``: writes through one are seen by the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtypes.from_numpy_dtype(ndarray.dtype)
    return Tensor._wrap(ndarray)


def _filled(size, value, dtype, device, requires_grad, default=None):
    d = _dtypes.to_dtype(dtype) if dtype is not None else (default or _dtypes.get_default_dtype())
    return _finish(np.full(_size(size), value, dtype=d.np), d, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(size, 0, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(size, 1, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, out=None):
    # zero-filled rather than garbage: same cost here, and no surprises for learners
    return _filled(size, 0, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    default = None
    if dtype is None:
        default = _dtypes.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                       else fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _filled(_size((size,) if isinstance(size, (int, np.integer)) else (tuple(size),)),
                   value, dtype, device, requires_grad, default)


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        return fn(tuple(input.shape), dtype=dtype or input.dtype,
                  device=device if device is not None else input.device,
                  requires_grad=requires_grad)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"``{fn.__name__}`` with the shape (and by default dtype/device) of ``input``."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` up to (not including) ``end``; int64 unless an argument is a float."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign "
                           f"(start={vals[0]}, end={vals[1]}, step={vals[2]})")
    if dtype is None:
        floats = any(isinstance(v, (float, np.floating)) for v in vals)
        dtype = _dtypes.get_default_dtype() if floats else _dtypes.int64
    d = _dtypes.to_dtype(dtype)
    n = max(int(np.ceil((vals[1] - vals[0]) / vals[2])), 0)
    arr = (vals[0] + np.arange(n, dtype=np.float64) * vals[2]) if d.is_floating_point \
        else np.arange(vals[0], vals[1], vals[2])
    return _finish(arr.astype(d.np), d, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    return _finish(np.linspace(start, end, steps).astype(d.np), d, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    return _finish(np.logspace(start, end, steps, base=base).astype(d.np), d, device,
                   requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    return _finish(np.eye(n, m if m is not None else n, dtype=d.np), d, device, requires_grad)


def _float_dtype(dtype, name):
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.get_default_dtype()
    if not d.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{d.name}': random floats need a "
                           "floating dtype")
    return d


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    d = _float_dtype(dtype, "rand")
    g = _random._generator(generator)
    return _finish(g.random(_size(size)).astype(d.np), d, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples (mean 0, variance 1)."""
    d = _float_dtype(dtype, "randn")
    g = _random._generator(generator)
    return _finish(g.standard_normal(_size(size)).astype(d.np), d, device, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers drawn uniformly from [low, high); ``randint(high, size)`` also works."""
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size' (a tuple)")
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.int64
    g = _random._generator(generator)
    return _finish(g.integers(low, high, _size((tuple(size),))).astype(d.np), d, device,
                   requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.int64
    return _finish(_random._generator(generator).permutation(n).astype(d.np), d, device,
                   requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)


def bernoulli(input, p=None, *, generator=None):
    probs = input._data if p is None else np.full(input.shape, p)
    g = _random._generator(generator)
    return Tensor._wrap((g.random(input.shape) < probs).astype(input.dtype.np))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    g = _random._generator(generator)
    p = input._data.astype(np.float64)
    rows = p.reshape(-1, p.shape[-1])
    out = [g.choice(rows.shape[1], num_samples, replace=replacement, p=r / r.sum()) for r in rows]
    arr = np.array(out, dtype=np.int64)
    return Tensor._wrap(arr.reshape(p.shape[:-1] + (num_samples,)))


def normal(mean, std, size=None, *, generator=None):
    g = _random._generator(generator)
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    shape = size if size is not None else np.broadcast(np.asarray(m), np.asarray(s)).shape
    dt = _dtypes.get_default_dtype().np
    return Tensor._wrap(np.asarray(g.normal(m, s, shape), dtype=dt))
