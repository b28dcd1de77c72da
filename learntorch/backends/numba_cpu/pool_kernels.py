"""Max pooling kernels: the largest value of every window, and where it was.

Why a kernel: numpy has no "argmax over sliding windows".  The numpy path
(``nn/_functional/pooling.py``) walks the kh*kw kernel offsets and keeps a
running maximum over whole arrays -- four full passes per offset (compare,
NaN test, two masked copies).  Here each window is one short loop that keeps
its best value and index in registers: on (32, 8, 28, 28) float32 with 2x2
windows that measured ~1.5 ms for numpy against ~0.4 ms for the general kernel
and ~0.09 ms for the 2x2 one on a shared 2-core machine (torch 2.13's CPU kernel,
one thread: ~0.8 ms).

Contract shared by the kernels in this file:

* ``x`` is a C-contiguous (P, H, W) array of *planes* (batch and channels
  merged), float32 or float64; ``out``/``indices`` are C-contiguous (P, Ho, Wo)
  arrays of x's dtype / int64 that the kernel fills;
* thread layout: ``prange`` over planes, so each thread owns whole planes and
  writes only its own planes' outputs (or, in backward, its own planes of the
  gradient) -- no two threads touch the same element, no atomics needed;
* window geometry is torch's: window (oh, ow) starts at pixel
  (oh*sh - ph, ow*sw - pw) of the unpadded plane and takes every dh-th row
  and dw-th column, kh x kw of them; positions outside the plane are padding,
  which never wins.

Semantics are torch's, element for element: the maximum starts at -inf with
the index of the window's first valid pixel; a pixel replaces it when it is
*strictly* greater (so ties keep the first index in row-major order) or when
it is NaN (so a NaN always wins, and among several NaNs the last one does).
"""
import numpy as np
from numba import njit, prange

_KERNEL = dict(parallel=True, cache=True, error_model="numpy", boundscheck=False)


@njit(cache=True, error_model="numpy")
def _valid_taps(n_out, size, kernel, stride, pad, dilation):
    """For every output position, the first and one-past-last kernel tap inside the plane.

    Computed once per call, outside the hot loop: integer division is slow
    (tens of cycles), and doing it per window made the kernel ~2x slower.
    """
    lo = np.empty(n_out, np.int64)
    hi = np.empty(n_out, np.int64)
    for o in range(n_out):
        start = o * stride - pad
        lo[o] = 0 if start >= 0 else (-start + dilation - 1) // dilation
        hi[o] = min(kernel, (size - start + dilation - 1) // dilation)
    return lo, hi


@njit(**_KERNEL)
def max_pool2d_forward(x, kh, kw, sh, sw, ph, pw, dh, dw, out, indices):
    """out[p, oh, ow] = max of window (oh, ow) of plane p; indices = its flat h*W + w."""
    n_planes, height, width = x.shape
    n_oh, n_ow = out.shape[1], out.shape[2]
    i_lo, i_hi = _valid_taps(n_oh, height, kh, sh, ph, dh)
    j_lo, j_hi = _valid_taps(n_ow, width, kw, sw, pw, dw)
    lowest = -np.inf
    for p in prange(n_planes):
        plane = x[p]
        for oh in range(n_oh):
            h_start = oh * sh - ph
            for ow in range(n_ow):
                w_start = ow * sw - pw
                best = lowest
                best_at = (h_start + i_lo[oh] * dh) * width + w_start + j_lo[ow] * dw
                for i in range(i_lo[oh], i_hi[oh]):
                    h = h_start + i * dh
                    for j in range(j_lo[ow], j_hi[ow]):
                        w = w_start + j * dw
                        v = plane[h, w]
                        # branch-free: on random data "v > best" is a coin flip, and a
                        # mispredicted branch costs more than computing both sides
                        take = (v > best) | (v != v)
                        best = v if take else best
                        best_at = h * width + w if take else best_at
                out[p, oh, ow] = best
                indices[p, oh, ow] = best_at


@njit(**_KERNEL)
def max_pool2d_2x2_forward(x, sh, sw, out, indices):
    """``max_pool2d_forward`` for the most common window, 2x2 without padding or dilation,
    every window inside the plane.

    The same rules, with the four taps written out: a loop whose length is only
    known at run time (kh*kw) costs more than the four comparisons themselves,
    while a fixed sequence compiles to straight-line code.  And two passes per row
    of windows (``_plane_2x2``): the first keeps, for each window, which tap won as
    a small int32 offset (0, 1, W or W+1) beside the maximum, the second widens
    those offsets into the int64 indices.  Written as one pass, the int64 index
    stores made LLVM give up the SIMD lanes for the whole loop.  The common stride 2
    is passed as a constant, so that the taps load as even and odd lanes rather than
    gathered one by one (a stride known only at run time, even in a branch of the
    same loop, kept the loop scalar).  On (256, 28, 28) float32, one thread: ~200 us
    as one pass, ~95 us now (the maxima alone, no indices: ~22 us).
    """
    n_planes = x.shape[0]
    for p in prange(n_planes):
        won = np.empty(out.shape[2], np.int32)  # the winning tap of each window of a row
        if sw == 2:
            _plane_2x2(x[p], sh, 2, out[p], indices[p], won)
        else:
            _plane_2x2(x[p], sh, sw, out[p], indices[p], won)


@njit(inline="always", cache=True)
def _plane_2x2(plane, sh, sw, best_out, at_out, won):
    """One plane of ``max_pool2d_2x2_forward``, row of windows by row of windows."""
    width = plane.shape[1]
    n_oh, n_ow = best_out.shape
    for oh in range(n_oh):
        h = oh * sh
        top, bottom, best_row = plane[h], plane[h + 1], best_out[oh]
        for ow in range(n_ow):
            w = ow * sw
            best_row[ow], won[ow] = _best_of_four(top[w], top[w + 1], bottom[w], bottom[w + 1],
                                                  width)
        at_row, first = at_out[oh], h * width
        for ow in range(n_ow):
            at_row[ow] = first + ow * sw + won[ow]


@njit(inline="always", cache=True)
def _best_of_four(a, b, c, d, width):
    """The winner of a 2x2 window's taps in torch's order -- (0, 0), (0, 1), (1, 0), (1, 1)
    -- and its offset from the first tap (0, 1, width, width + 1), as int32.

    Branch-free: on random data "v > best" is a coin flip, and a mispredicted branch
    costs more than computing both sides.
    """
    best, offset = a, np.int32(0)
    take = (b > best) | (b != b)
    best, offset = (b, np.int32(1)) if take else (best, offset)
    take = (c > best) | (c != c)
    best, offset = (c, np.int32(width)) if take else (best, offset)
    take = (d > best) | (d != d)
    best, offset = (d, np.int32(width + 1)) if take else (best, offset)
    return best, offset


@njit(**_KERNEL)
def max_pool2d_backward(grad, indices, grad_input):
    """grad_input[p, indices[p, k]] += grad[p, k]: every output's gradient goes to its argmax.

    ``grad``/``indices`` are (P, Ho*Wo), ``grad_input`` a zeroed (P, H*W).  With
    overlapping windows one pixel can win several windows: its gradients add up.
    """
    for p in prange(grad.shape[0]):
        g, at, gi = grad[p], indices[p], grad_input[p]
        for k in range(g.shape[0]):
            gi[at[k]] += g[k]
