"""Row kernels for the softmax family: softmax, log_softmax, their backward, logsumexp.

All of them see **2-D, C-contiguous** arrays of shape (rows, n) and work on
each row independently: the backend first moves the dimension being reduced to
the end (free when it already is the last one of a contiguous array).  The
last argument ``out`` is the array the kernel fills, allocated by the backend:
(rows, n) like the input, or (rows,) for logsumexp.  Inputs are never written.

Thread layout: the main loop is a ``prange`` over rows, so each thread owns
whole rows.  Inside a row the loops are sequential and keep their running max
and sum in local variables (registers); the only writes are to that row of the
output, so threads never write to the same place.

Numerics (finite for logits of +-1000, like the numpy reference and torch):

* subtract the row maximum before ``exp``: the largest term becomes exp(0) = 1,
  so the sum can neither overflow nor be 0;
* log_softmax is ``(x - max) - log(sum)``, never ``log`` of an underflowed
  softmax value;
* sums are accumulated in float64 (the accumulator starts as ``0.0``) even for
  float32 input, then rounded once on store;
* NaN anywhere in a row makes the whole row NaN, and so does +inf (inf - inf),
  exactly as in the reference.  logsumexp of an all ``-inf`` row is ``-inf``.

A measured lesson: on a 2-core machine only ``softmax_backward_rows`` (no
``exp``) beats numpy, from about 10^6 elements.  The others spend their time in
``exp``, which numpy evaluates 8 or 16 lanes at a time with SIMD while this
loop calls scalar ``exp`` once per element; fusing numpy's five passes into one
does not make up for that on two cores.  ``backend.py`` therefore leaves them
off by default; with more cores, rerun ``crossover.py`` and switch them on.
"""
import math

import numpy as np
from numba import njit, prange

_KERNEL = dict(parallel=True, cache=True, error_model="numpy")


@njit(cache=True, inline="always")
def _row_max(x, r):
    """Largest element of row r (``-inf`` for an all -inf row; NaN is skipped here
    but poisons the sums that follow, so it still reaches the result)."""
    m = -np.inf
    for j in range(x.shape[1]):
        if x[r, j] > m:
            m = x[r, j]
    return m


@njit(**_KERNEL)
def softmax_rows(x, out):
    """out[r] = exp(x[r] - max) / sum(exp(x[r] - max))."""
    rows, n = x.shape
    for r in prange(rows):
        m = _row_max(x, r)
        s = 0.0
        for j in range(n):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        inv = 1.0 / s
        for j in range(n):
            out[r, j] = out[r, j] * inv


@njit(**_KERNEL)
def log_softmax_rows(x, out):
    """out[r] = (x[r] - max) - log(sum(exp(x[r] - max)))."""
    rows, n = x.shape
    for r in prange(rows):
        m = _row_max(x, r)
        s = 0.0
        for j in range(n):
            s += math.exp(x[r, j] - m)
        log_s = math.log(s)
        for j in range(n):
            out[r, j] = (x[r, j] - m) - log_s


@njit(**_KERNEL)
def softmax_backward_rows(y, grad, out):
    """dx[r] = y[r] * (g[r] - sum(g[r] * y[r])): the softmax Jacobian times g, per row."""
    rows, n = y.shape
    for r in prange(rows):
        dot = 0.0
        for j in range(n):
            dot += grad[r, j] * y[r, j]
        for j in range(n):
            out[r, j] = y[r, j] * (grad[r, j] - dot)


@njit(**_KERNEL)
def log_softmax_backward_rows(y, grad, out):
    """dx[r] = g[r] - exp(y[r]) * sum(g[r]), with y the saved log-softmax output."""
    rows, n = y.shape
    for r in prange(rows):
        total = 0.0
        for j in range(n):
            total += grad[r, j]
        for j in range(n):
            out[r, j] = grad[r, j] - math.exp(y[r, j]) * total


@njit(**_KERNEL)
def logsumexp_rows(x, out):
    """out[r] = log(sum(exp(x[r]))), computed as max + log(sum(exp(x[r] - max))).

    An infinite max (an all -inf row, or a +inf) is replaced by 0 as the shift,
    so an all -inf row gives log(0) = -inf instead of NaN from -inf - -inf.
    """
    rows, n = x.shape
    for r in prange(rows):
        m = _row_max(x, r)
        if not math.isfinite(m):
            m = 0.0
        s = 0.0
        for j in range(n):
            s += math.exp(x[r, j] - m)
        out[r] = np.log(s) + m
