"""Elementwise add, sub, mul and div of two same-shape arrays, on every core.

Each of these does one floating-point operation per 12 bytes of memory traffic
(float32: read a, read b, write out), so they are limited by memory bandwidth,
not arithmetic.  numpy already runs them with SIMD on one core; the only thing a
kernel adds is a second (third, ...) core pulling data from memory, which pays
off only once the array is large enough to hide the cost of waking the threads
(see ``backend.py`` for the measured crossover).  Broadcasting and Python
numbers stay with numpy, which handles them without copies.

Contract: ``a``, ``b`` and ``out`` are 1-D, C-contiguous, of one float dtype
and one length; the kernel fills ``out`` and never writes ``a`` or ``b``.
Results are bit-for-bit those of numpy: one IEEE operation per element, no
reordering, and ``error_model="numpy"`` so that x / 0 gives inf or nan
instead of raising ZeroDivisionError.

Thread layout: ``prange`` over elements; each thread gets one contiguous block
of indices, reads ``a[i]`` and ``b[i]`` and writes only ``out[i]``.
"""
from numba import njit, prange

_KERNEL = dict(parallel=True, cache=True, error_model="numpy")


@njit(**_KERNEL)
def add(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] + b[i]


@njit(**_KERNEL)
def sub(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] - b[i]


@njit(**_KERNEL)
def mul(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] * b[i]


@njit(**_KERNEL)
def div(a, b, out):
    for i in prange(out.size):
        out[i] = a[i] / b[i]
