"""Row kernels for the softmax family: softmax, log_softmax, their backward, logsumexp.

All of them see **2-D, C-contiguous** arrays of shape (rows, n) and work on
each row independently: the backend first moves the dimension being reduced to
the end (free when it already is the last one of a contiguous array).  The
last argument ``out`` is the array the kernel fills, allocated by the backend:
(rows, n) like the input, or (rows,) for logsumexp.  Inputs are never written.

Thread layout: the main loop is a ``prange`` over rows, so each thread owns
whole rows.  Inside a row the work is a few sequential passes: max, exp and
sum, then the kernel's own last pass (scale, or subtract).  The max is inlined
into the kernel; the exp-and-sum pass is a function of its own, called once
per row, because it is compiled with other flags (below).  Running max and
sums live in local variables (registers), and the only writes are to that
row of the output, so threads never write to the same place.

Speed: every pass must compile to SIMD instructions (8 or 16 elements per
instruction), or numpy, which is SIMD throughout, wins.  Three things make
that happen.  Measured on one core, softmax of 1024 x 1024 float32: 0.31 ms;
numpy 1.2 ms; and with any one of the three undone:

* ``fast_exp`` (see ``fast_exp.py``) instead of ``math.exp``, which is a
  scalar C library call per element -- 2.1 ms with ``math.exp``;
* the row maximum is found by comparing the floats' bits as integers (see
  ``_make_row_max``): LLVM vectorizes an integer max, but not a float max,
  whose NaN rules it must keep -- 0.76 ms with ``if x > m: m = x``;
* the exp-and-sum pass is compiled with ``fastmath={"reassoc"}``, which
  allows the compiler to keep one running sum per SIMD lane and add the lanes
  at the end; without it the sum must be formed one element at a time, in
  order, and the whole loop stays scalar -- 2.3 ms.  Only the passes that
  sum (``_exp_and_sum``, ``_dot``, ``_sum``) get the flag: reassociating
  ``(x - max) - log(sum)`` into ``x - (max + log(sum))`` would lose the
  exactness of ``x - max``.

Row length matters: the SIMD loop takes 64 float32 elements per step (16 lanes,
4 steps interleaved, as LLVM chose here) and does the remainder one element
at a time, so rows shorter than about 64 run several times slower per element
(still faster than numpy).

Numerics (finite for logits of +-1000, like the numpy reference and torch):

* subtract the row maximum before ``exp``: the largest term becomes exp(0) = 1,
  so the sum can neither overflow nor be 0;
* log_softmax is ``(x - max) - log(sum)``, never ``log`` of an underflowed
  softmax value;
* sum of exponentials: float32 input is summed in float32 SIMD lanes within
  blocks of ``_BLOCK`` elements and the block sums in float64, as accurate as
  numpy's pairwise float32 sum (a few units in the last place) at float32
  speed; the gradient sums of the backward kernels are float64 throughout;
* NaN anywhere in a row makes the whole row NaN, and so does +inf (inf - inf),
  exactly as in the reference.  logsumexp of an all ``-inf`` row is ``-inf``.
"""
import math

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .fast_exp import fast_exp

_KERNEL = dict(parallel=True, cache=True, error_model="numpy")
_PASS = dict(cache=True, error_model="numpy")            # one pass over one row
_SUMMING_PASS = dict(_PASS, fastmath={"reassoc", "contract"})

# float32 partial sums over this many elements, then added in float64 (see docstring)
_BLOCK = 256


# ---------------------------------------------------------------- the passes
def _make_row_max(float_type):
    """The largest element of a row of ``float_type``, by integer comparisons.

    IEEE floats of one sign are ordered like their bit patterns read as
    integers; for negative floats the order is reversed, and flipping every
    bit but the sign bit (``b ^ 0x7fff...``) reverses it back.  After that
    flip, integer ``max`` is float ``max``: -inf < -1 < -0 < 0 < 1 < inf.  A
    NaN with the sign bit clear sorts above +inf, so it becomes the max and
    the whole row NaN, as in numpy; one with the sign bit set sorts below
    -inf and is skipped here, but reaches ``exp`` and makes the sum NaN.
    """
    int_type = np.dtype(f"i{np.dtype(float_type).itemsize}").type   # same width
    smallest = int_type(np.iinfo(int_type).min)
    all_but_sign = int_type(np.iinfo(int_type).max)

    @njit(inline="always", **_PASS)
    def row_max(row):
        bits = row.view(int_type)
        m = smallest
        for j in range(bits.shape[0]):
            b = bits[j]
            if b < 0:
                # int_type(...): Numba computes with int64, which would halve the SIMD lanes
                b = int_type(b ^ all_but_sign)
            if b > m:
                m = b
        if m < 0:
            m = int_type(m ^ all_but_sign)    # the same flip undoes itself
        return int_type(m).view(float_type)

    return row_max


_row_max_float32 = _make_row_max(np.float32)
_row_max_float64 = _make_row_max(np.float64)


def _row_max(row):
    """Largest element of a float32 or float64 row (see ``_make_row_max``)."""
    return (_row_max_float32 if row.dtype == np.float32 else _row_max_float64)(row)


@overload(_row_max, inline="always")
def _row_max_for(row):
    """Which compiled function ``_row_max(row)`` means inside Numba code, by the row's dtype."""
    if row.dtype == types.float32:
        return lambda row: _row_max_float32(row)
    if row.dtype == types.float64:
        return lambda row: _row_max_float64(row)
    return None


@njit(**_SUMMING_PASS)
def _exp_and_sum(row, shift, out):
    """Sum of exp(row - shift), in float64; also stored in ``out`` unless it is None.

    Block by block: each block of ``_BLOCK`` elements is summed in the row's
    own type, in SIMD lanes, so that no lane adds more than a few dozen terms
    before its sum joins the float64 total.
    """
    total = 0.0
    for start in range(0, row.shape[0], _BLOCK):
        stop = start + _BLOCK
        if out is None:      # decided when Numba compiles, for each type of ``out``
            total += _block_exp_and_sum(row[start:stop], shift, None)
        else:
            total += _block_exp_and_sum(row[start:stop], shift, out[start:stop])
    return total


@njit(inline="always", **_SUMMING_PASS)
def _block_exp_and_sum(block, shift, out):
    """Sum of exp(block - shift) in block's type; also stored in ``out`` unless it is None.

    (A block and its ``out`` are slices starting at 0: indexing them with the
    loop counter alone is what lets the stores be vectorized.)
    """
    s = block.dtype.type(0)
    for j in range(block.shape[0]):
        e = fast_exp(block[j] - shift)
        if out is not None:
            out[j] = e
        s += e
    return s


@njit(**_SUMMING_PASS)
def _dot(a, b):
    """sum(a * b) in float64."""
    s = 0.0
    for j in range(a.shape[0]):
        s += a[j] * b[j]
    return s


@njit(**_SUMMING_PASS)
def _sum(a):
    """sum(a) in float64."""
    s = 0.0
    for j in range(a.shape[0]):
        s += a[j]
    return s


# ---------------------------------------------------------------- the kernels
@njit(**_KERNEL)
def softmax_rows(x, out):
    """out[r] = exp(x[r] - max) / sum(exp(x[r] - max))."""
    for r in prange(x.shape[0]):
        o = out[r]
        s = _exp_and_sum(x[r], _row_max(x[r]), o)
        inv = o.dtype.type(1.0 / s)
        for j in range(o.shape[0]):
            o[j] *= inv


@njit(**_KERNEL)
def log_softmax_rows(x, out):
    """out[r] = (x[r] - max) - log(sum(exp(x[r] - max)))."""
    for r in prange(x.shape[0]):
        xr, o = x[r], out[r]
        m = _row_max(xr)
        log_s = o.dtype.type(math.log(_exp_and_sum(xr, m, None)))
        for j in range(o.shape[0]):
            o[j] = (xr[j] - m) - log_s


@njit(**_KERNEL)
def softmax_backward_rows(y, grad, out):
    """dx[r] = y[r] * (g[r] - sum(g[r] * y[r])): the softmax Jacobian times g, per row."""
    for r in prange(y.shape[0]):
        yr, g, o = y[r], grad[r], out[r]
        dot = o.dtype.type(_dot(g, yr))
        for j in range(o.shape[0]):
            o[j] = yr[j] * (g[j] - dot)


@njit(**_KERNEL)
def log_softmax_backward_rows(y, grad, out):
    """dx[r] = g[r] - exp(y[r]) * sum(g[r]), with y the saved log-softmax output."""
    for r in prange(y.shape[0]):
        yr, g, o = y[r], grad[r], out[r]
        total = o.dtype.type(_sum(g))
        for j in range(o.shape[0]):
            o[j] = g[j] - fast_exp(yr[j]) * total


@njit(**_KERNEL)
def logsumexp_rows(x, out):
    """out[r] = log(sum(exp(x[r]))), computed as max + log(sum(exp(x[r] - max))).

    An infinite max (an all -inf row, or a +inf) is replaced by 0 as the shift,
    so an all -inf row gives log(0) = -inf instead of NaN from -inf - -inf.
    """
    for r in prange(x.shape[0]):
        m = _row_max(x[r])
        if not math.isfinite(m):
            m = x.dtype.type(0)
        out[r] = math.log(_exp_and_sum(x[r], m, None)) + m
