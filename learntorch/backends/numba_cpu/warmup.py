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

_ELEMENTWISE_1 = ("relu", "tanh", "sigmoid", "gelu", "silu")
_ELEMENTWISE_2 = ("relu_backward", "tanh_backward", "sigmoid_backward", "gelu_backward",
                  "silu_backward")
_ARITHMETIC = ("add", "sub", "mul", "div")
_ROWS_1 = ("softmax_rows", "log_softmax_rows")
_ROWS_2 = ("softmax_backward_rows", "log_softmax_backward_rows")


def _calls(dtype):
    """(family, kernel, arguments) for one call of every kernel at ``dtype``."""
    v = np.linspace(-1, 1, 8).astype(dtype)
    m = v.reshape(2, 4)
    rows_out = np.empty(2, dtype)
    yield from (("activations", k, (v, np.empty_like(v))) for k in _ELEMENTWISE_1)
    yield from (("activations", k, (v, v, np.empty_like(v))) for k in _ELEMENTWISE_2)
    yield from (("arithmetic", k, (v, v, np.empty_like(v))) for k in _ARITHMETIC)
    yield from (("softmax", k, (m, np.empty_like(m))) for k in _ROWS_1)
    yield from (("softmax", k, (m, m, np.empty_like(m))) for k in _ROWS_2)
    yield "softmax", "logsumexp_rows", (m, rows_out)
    yield "reduction", "sum_rows", (m, rows_out)


def warmup(dtypes=("float32", "float64")):
    """Compile every kernel for each dtype; returns the kernel names, e.g. 'softmax.softmax_rows'."""
    warmed = []
    for dtype in dtypes:
        dtype = np.dtype(getattr(dtype, "np", dtype))  # also learntorch.float32
        if dtype not in (np.float32, np.float64):
            raise TypeError(f"the CPU kernels exist for float32 and float64, not {dtype}; "
                            "call warmup(dtypes=('float32', 'float64'))")
        for family, name, args in _calls(dtype):
            getattr(kernels(family), name)(*args)
            warmed.append(f"{family}.{name}")
    return sorted(set(warmed))
