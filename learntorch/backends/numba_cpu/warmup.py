"""Compile (or load from the on-disk cache) the kernels before they are needed.

A kernel is compiled the first time it sees a new dtype, which takes a second
or more per kernel; with ``cache=True`` later processes load the result from
disk in milliseconds.  ``warmup()`` calls every kernel once on tiny arrays of
each dtype, so the cost is paid here (in a Binder build, or the first cell of a
notebook) and not in the middle of a training loop.  The arrays have exactly
the layout the backend passes (C-contiguous, 1-D or 2-D), so the compiled
versions are the ones later calls use.
"""
import numpy as np

from .loader import kernels

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "gelu", "silu")
_ARITHMETIC = ("add", "sub", "mul", "div")


def _calls(dtype):
    """(primitive, family, kernel, arguments): one call of every kernel at ``dtype``."""
    v = np.linspace(-1, 1, 8).astype(dtype)
    m = v.reshape(2, 4)
    for op in _ACTIVATIONS:
        yield op, "activations", op, (v, np.empty_like(v))
        yield f"{op}_backward", "activations", f"{op}_backward", (v, v, np.empty_like(v))
    for op in _ARITHMETIC:
        yield op, "arithmetic", op, (v, v, np.empty_like(v))
    for op in ("softmax", "log_softmax"):
        yield op, "softmax", f"{op}_rows", (m, np.empty_like(m))
        yield f"{op}_backward", "softmax", f"{op}_backward_rows", (m, m, np.empty_like(m))
    yield "logsumexp", "softmax", "logsumexp_rows", (m, np.empty(2, dtype))
    yield "sum", "reduction", "sum_rows", (m, np.empty(2, dtype))
    if dtype == np.float32:  # autocast's conversions (1-D and 2-D: vectors and matrices)
        for a in (v, m):
            yield ("to_bfloat16", "bfloat16_casts", "float32_to_bfloat16",
                   (a, np.empty(a.shape, np.uint16)))
            yield ("from_bfloat16", "bfloat16_casts", "bfloat16_to_float32",
                   (np.zeros(a.shape, np.uint16), np.empty_like(a)))
    yield from _layer_calls(dtype)
    yield from _optimizer_calls(dtype)


def _layer_calls(dtype):
    """The layers' kernels (max pooling, conv's im2col and col2im, cross-entropy), with the argument
    types the layers pass: (planes, H, W) arrays and Python ints for the window geometry."""
    planes = np.linspace(-1, 1, 32).astype(dtype).reshape(2, 4, 4)
    out, at = np.empty((2, 2, 2), dtype), np.empty((2, 2, 2), np.int64)
    yield "max_pool2d", "pool_kernels", "max_pool2d_2x2_forward", (planes, 2, 2, out, at)
    out3, at3 = np.empty((2, 4, 4), dtype), np.empty((2, 4, 4), np.int64)
    yield ("max_pool2d", "pool_kernels", "max_pool2d_forward",
           (planes, 3, 3, 1, 1, 1, 1, 1, 1, out3, at3))
    yield ("max_pool2d_backward", "pool_kernels", "max_pool2d_backward",
           (out.reshape(2, 4), np.zeros((2, 4), np.int64), np.zeros((2, 16), dtype)))
    cols = np.ones((2, 3, 3, 4, 4), dtype)
    yield "col2im", "col2im_kernels", "col2im", (cols, 3, 3, 1, 1, 1, 1, 1, 1, np.empty_like(planes))
    yield ("im2col", "im2col_kernels", "im2col",
           (planes.reshape(1, 2, 4, 4), 3, 3, 1, 1, 1, 1, 1, 1, np.empty((2, 3, 3, 1, 4, 4), dtype)))
    logits, classes = planes.reshape(8, 4), np.arange(8, dtype=np.int64) % 4
    yield ("cross_entropy", "cross_entropy", "cross_entropy_rows",
           (logits, classes, -100, np.empty_like(logits), np.empty(8, dtype)))
    yield ("cross_entropy_backward", "cross_entropy", "cross_entropy_rows_backward",
           (logits, classes, -100, np.empty(8, dtype), np.empty_like(logits)))


def _optimizer_calls(dtype):
    """The fused optimizer updates (``optim_backend.py``), with every option off: a kernel
    compiles once per dtype, whatever its options.  Floats are cast to the arrays' dtype and
    flags stay Python bools, as ``optim_backend.run_kernel`` passes them."""
    v, zero = np.zeros(1, dtype), dtype.type(0)
    yield "sgd", "optim_kernels", "sgd", (v, v, v.copy(), *[zero] * 4, False, False, False)
    yield ("adam", "optim_kernels", "adam",
           (v, v, v.copy(), v.copy(), v.copy(), *[zero] * 9, False, False, False))
    yield ("rmsprop", "optim_kernels", "rmsprop",
           (v, v, v.copy(), v.copy(), v.copy(), *[zero] * 8, False, False))
    yield "adagrad", "optim_kernels", "adagrad", (v, v, v.copy(), *[zero] * 3, False)


def warmup(dtypes=("float32", "float64"), ops=None):
    """Compile the kernels of primitives ``ops`` (default: all) for each dtype.

    Returns the kernel names, e.g. ``'softmax.softmax_rows'``.
    """
    warmed = []
    for dtype in dtypes:
        dtype = np.dtype(getattr(dtype, "np", dtype))  # also learntorch.float32
        if dtype not in (np.float32, np.float64):
            raise TypeError(f"the CPU kernels exist for float32 and float64, not {dtype}; "
                            "call warmup(dtypes=('float32', 'float64'))")
        for op, family, name, args in _calls(dtype):
            if ops is None or op in ops:
                getattr(kernels(family), name)(*args)
                warmed.append(f"{family}.{name}")
    return sorted(set(warmed))
