"""Creating tensors: tensor, zeros, ones, full, arange, linspace, eye, rand, randn, ...

Every factory takes torch's keywords ``dtype``, ``device`` and
``requires_grad``.  Floats default to float32 (``get_default_dtype()``),
integers to int64.  ``from_numpy`` and ``as_tensor`` share memory with a numpy
array; ``tensor`` always copies.
"""
import math
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


def _scalar_type(x):
    """The dtype one element of a nested list asks for (torch's rules)."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError(
                f"only one element tensors can be converted to Python scalars, but tensor() got a "
                f"tensor of shape {list(x.shape)} inside a list; to combine tensors use "
                "learntorch.stack(list_of_tensors) or learntorch.cat(...)")
        return x.dtype
    if isinstance(x, (bool, np.bool_)):
        return _dtypes.bool_
    if isinstance(x, np.generic):  # numpy scalars keep their dtype: np.float64(1) -> float64
        return _dtypes.from_numpy_dtype(x.dtype)
    if isinstance(x, int):
        return _dtypes.int64
    if isinstance(x, float):
        return _dtypes.get_default_dtype()
    if isinstance(x, numbers.Number):
        raise TypeError(f"complex numbers are not supported by learntorch (got {x!r})")
    if isinstance(x, str):
        raise TypeError(f"new(): invalid data type 'str' ({x!r}): tensor() accepts numbers, "
                        "nested lists/tuples of numbers, numpy arrays and tensors")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}: tensor() accepts numbers, "
                       "nested lists/tuples of numbers, numpy arrays and tensors")


def _scan(data):
    """Shape and dtype of a (nested) list of numbers, with torch's errors for ragged lists.

    The dtype is the promotion of every element's own type: bool < int (int64) <
    float (the default float dtype); numpy scalars and 0-d tensors bring their own
    dtype (``[np.float64(1), 2]`` is float64).  An empty list is float, like torch.
    """
    shape = []
    x = data
    while _is_sequence(x):  # the shape is read along the first elements
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    inferred = None
    stack = [(data, 0)]
    while stack:  # then every element must agree with it (iterative: no depth limit)
        x, dim = stack.pop()
        if _is_sequence(x):
            if dim >= len(shape):
                raise TypeError(f"expected a number at dim {dim} but found a sequence: nested "
                                f"lists must be rectangular (shape {shape} from the first "
                                "elements)")
            if len(x) != shape[dim]:
                raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                                 f"(got {len(x)})")
            stack.extend((item, dim + 1) for item in x)
            continue
        if dim != len(shape):
            raise TypeError(f"not a sequence: expected a list of length {shape[dim]} at dim "
                            f"{dim} but found {x!r}; nested lists must be rectangular")
        d = _scalar_type(x)
        inferred = d if inferred is None else _dtypes.promote_types(inferred, d)
    return tuple(shape), inferred or _dtypes.get_default_dtype()


def _is_sequence(x):
    return isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _to_array(data, dtype):
    if isinstance(data, Tensor):
        return data._data.astype(dtype.np if dtype else data._data.dtype, copy=True)
    if isinstance(data, np.ndarray):
        return data.astype(dtype.np if dtype else data.dtype, copy=True)
    shape, inferred = _scan(data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _replace_tensors(data)
    if dtype is not None and not dtype.is_floating_point and dtype is not _dtypes.bool_:
        return _checked_integers(data, shape, inferred, dtype)
    try:
        return np.array(data, dtype=(dtype or inferred).np).reshape(shape)
    except OverflowError:
        raise ValueError(f"Overflow when unpacking long long: an integer in the data does not "
                         f"fit in 64 bits (dtype {dtype or inferred})") from None


def _checked_integers(data, shape, inferred, dtype):
    """Python numbers stored as an integer dtype with torch's checks: ints in the dtype's
    range (uint8 also takes -255..-1, which wrap: -1 is 255), finite floats in range
    (truncated towards zero); anything else is torch's RuntimeError, not numpy's
    OverflowError."""
    try:
        exact = np.array(data, dtype=np.float64 if inferred.is_floating_point else np.int64)
    except OverflowError:
        raise ValueError(f"Overflow when unpacking long long: an integer in the data does not "
                         f"fit in 64 bits (dtype {dtype})") from None
    if exact.size:
        lo, hi = exact.min(), exact.max()
        for v in ((lo, hi) if not np.isnan(exact).any() else (float("nan"),)):
            _dtypes.check_scalar_fits(v.item() if hasattr(v, "item") else v, dtype)
    return exact.astype(dtype.np).reshape(shape)


def _flat(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if _is_sequence(x):
            stack.extend(x)
        else:
            yield x


def _replace_tensors(data):
    """The same nested list with one-element tensors replaced by their Python numbers."""
    if _is_sequence(data):
        return [_replace_tensors(x) for x in data]
    return data.item() if isinstance(data, Tensor) else data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (number, nested list, numpy array or tensor)."""
    dtype = _dtypes.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                      ".requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    if isinstance(data, np.ndarray) and dtype is None:
        _dtypes.from_numpy_dtype(data.dtype)  # a clear error for unsupported numpy dtypes
    return _finish(_to_array(data, dtype), dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a numpy array or tensor when it can."""
    if isinstance(data, Tensor):  # itself, or converted as data.to(...) (keeps its history)
        if dtype is None or _dtypes.to_dtype(dtype) is data.dtype:
            return data if device is None else data.to(device)
        return data.to(_dtypes.to_dtype(dtype)) if device is None else data.to(device, dtype)
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
    shape = _size(size)
    # torch's range checks; -1 in uint8 is 255
    value = _dtypes.cast_python_scalar(
        value, d, to_inf=_dtypes.fill_skips_range_check(d, math.prod(shape)))
    return _finish(np.full(shape, value, dtype=d.np), d, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(size, 0, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(size, 1, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, out=None):
    # zero-filled rather than garbage: same cost here, and no surprises for learners
    return _filled(size, 0, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``; its dtype follows the value by default."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__} (write full(({size!r},), value))")
    default = None
    if dtype is None:
        default = _dtypes.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                       else fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _filled((tuple(size),), value, dtype, device, requires_grad, default)


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
    """Values from ``start`` up to (not including) ``end``; int64 unless an argument is a float.

    The length is ``ceil((end - start) / step)``, computed in float64 as torch does
    (so ``arange(0, 1, 0.1)`` has 10 elements); each value is ``start + i * step``.
    With an integer dtype, start/end/step are first truncated to integers.
    """
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        floats = any(isinstance(v, (float, np.floating)) for v in vals)
        dtype = _dtypes.get_default_dtype() if floats else _dtypes.int64
    d = _dtypes.to_dtype(dtype)
    if not d.is_floating_point:
        vals = [int(v) for v in vals]
        if vals[2] == 0:
            raise ValueError(f"arange: step must be nonzero (step={step} truncates to 0 for "
                             f"dtype {d})")
    first, last, delta = vals
    if (last - first) * delta < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign "
                           f"(start={first}, end={last}, step={delta})")
    n = max(int(np.ceil((last - first) / delta)), 0)
    if d.is_floating_point:
        arr = first + np.arange(n, dtype=np.float64) * delta
    else:
        arr = first + np.arange(n, dtype=np.int64) * delta
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
        raise NotImplementedError(f"\"{name}\" not implemented for '{d.name}': random floats "
                                  "need a floating dtype (e.g. dtype=learntorch.float32)")
    return d


def _made_on_gpu(device, generator):
    """True when the GPU's own generator makes the numbers (``backends/cuda/random.py``)."""
    if generator is not None or device is None or to_device(device) != to_device("cuda:0"):
        return False
    from . import cuda
    cuda._require()
    return True


def _cuda_random():
    """The GPU's generators, seeded like the cpu's default one before their first draw."""
    from .backends.cuda import random
    random.seed_from(_random.default_generator.initial_seed())
    return random


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    d = _float_dtype(dtype, "rand")
    if _made_on_gpu(device, generator):
        return _finish(_cuda_random().rand(_size(size), d.np), d, None, requires_grad)
    g = _random._generator(generator)
    return _finish(g.random(_size(size)).astype(d.np), d, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples (mean 0, variance 1)."""
    d = _float_dtype(dtype, "randn")
    if _made_on_gpu(device, generator):
        return _finish(_cuda_random().randn(_size(size), d.np), d, None, requires_grad)
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
    """A random permutation of 0, 1, ..., n-1."""
    (n,) = _size((n,))  # torch's checks: an int, not negative
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
