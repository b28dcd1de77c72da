"""col2im kernel: the backward of the convolution's window copy (im2col).

col2im adds every entry of a (N, C, kh, kw, Ho, Wo) gradient matrix back to
the pixel it was copied from.  numpy does it as kh*kw strided ``+=`` over a
padded image (``nn/_functional/im2col.py``), each walking rows as short as the
image (14 floats on the course CNN's second layer), then crops the border
off: on (32, 8, 14, 14) float32 with 3x3 windows, one thread, ~350 us.  Here
each plane is finished in one go while it sits in cache, borders are handled
by computing once which windows a tap reaches (no padded buffer, no crop),
and the planes are spread over the threads: ~120 us on one thread.

(The forward copy, im2col, is ``im2col_kernels.py``, written the same way.)

Contract:

* ``cols`` is a C-contiguous (P, kh, kw, Ho, Wo) array -- numpy's ``im2col``
  layout (N, C, kh, kw, Ho, Wo) with N and C merged into P planes -- and ``dx``
  a C-contiguous (P, H, W) array of the same dtype (float32 or float64) that
  the kernel overwrites;
* window geometry is torch's: tap (i, j) of window (oh, ow) is pixel
  (oh*sh - ph + i*dh, ow*sw - pw + j*dw); a tap outside the plane lies in the
  padding, whose gradient is dropped;
* thread layout: ``prange`` over planes, so each thread owns whole planes and
  writes only its own planes of ``dx`` -- no two threads touch the same element.
"""
from numba import njit, prange, uint64

_KERNEL = dict(parallel=True, cache=True, error_model="numpy", boundscheck=False)


@njit(cache=True, inline="always")
def _reach(tap, n_out, size, stride, pad, dilation):
    """Outputs [lo, hi) whose tap ``tap`` lands inside the plane: 0 <= o*s - p + t*d < size.

    Computed once per tap, outside the pixel loops, so those loops have no
    border test in them.
    """
    offset = tap * dilation - pad              # position of the tap in window 0
    lo = 0 if offset >= 0 else (-offset + stride - 1) // stride
    last = size - 1 - offset                   # o*stride <= last
    hi = 0 if last < 0 else min(n_out, last // stride + 1)
    return lo, max(lo, hi), offset


@njit(**_KERNEL)
def col2im(cols, kh, kw, sh, sw, ph, pw, dh, dw, dx):
    """dx[p] = 0, then every cols[p, i, j, oh, ow] is added to the pixel it was copied from.

    The adjoint of ``im2col``: where windows overlap, a pixel collects one
    term per window that covers it.  Padding positions receive nothing.

    Why the arrays are indexed flat with unsigned offsets: with a signed computed
    index such as ``line[ow + w0]`` Numba adds a negative-index test to every
    access (~5x slower on 14-pixel rows), and a slice per row (``plane[h, w0:]``,
    which avoids the test) costs a view each: ~280 us on one thread on (32, 8, 14,
    14) float32 with 3x3 windows.  An unsigned offset cannot be negative: ~120 us.
    """
    n_planes, height, width = dx.shape
    n_oh, n_ow = cols.shape[3], cols.shape[4]
    src, dst = cols.ravel(), dx.ravel()
    for p in prange(n_planes):
        plane_at = uint64(p * height * width)
        for k in range(height * width):
            dst[plane_at + uint64(k)] = 0
        for i in range(kh):
            oh_lo, oh_hi, h0 = _reach(i, n_oh, height, sh, ph, dh)
            for j in range(kw):
                ow_lo, ow_hi, w0 = _reach(j, n_ow, width, sw, pw, dw)
                tap_at = uint64(((p * kh + i) * kw + j) * n_oh * n_ow)
                for oh in range(oh_lo, oh_hi):
                    source = tap_at + uint64(oh * n_ow + ow_lo)
                    target = plane_at + uint64((oh * sh + h0) * width + ow_lo * sw + w0)
                    if sw == 1:
                        for k in range(ow_hi - ow_lo):
                            dst[target + uint64(k)] += src[source + uint64(k)]
                    else:
                        for k in range(ow_hi - ow_lo):
                            dst[target + uint64(k * sw)] += src[source + uint64(k)]
