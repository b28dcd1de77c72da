"""im2col kernel: the convolution's window copy, in the layout of one product per group.

The Numba backend multiplies the weight with the windows of the whole batch at once
(``conv_backend.py``), so the copy writes every window of every image side by side,
channel-major::

    cols[c, i, j, n, oh, ow] = x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]   (0 outside)

numpy makes the same array as a strided copy of a padded image (``numpy_families/
conv.py``: ``padded`` then ``windows``): two passes, the second walking rows as short as
the output (14 floats on the course CNN's second layer).  Here the border is not copied
at all -- which windows a tap reaches is worked out once per tap (``_reach``, shared
with ``col2im``), the rows outside it are written as zeros -- and each image goes to one
thread.  Measured on the course CNN's layers, float32, 3x3 windows, padding 1:

    (32, 1, 28, 28): numpy 67 us; this kernel 37 us on one thread, 22 us on two
    (32, 8, 14, 14): numpy 194 us; this kernel 135 us on one thread, 77 us on two

Why the arrays are indexed flat with unsigned offsets: Numba adds a negative-index test
to every access with a signed computed index (``row[k + w0]``), and a slice per row
(``plane[h, w0:]``) costs a view each; either way the first version of this kernel was
~1.5x *slower* than numpy.  An unsigned offset cannot be negative, so the copy loops
compile to plain vector moves (``col2im_kernels.py`` does the same).

Contract:

* ``x`` is a C-contiguous (N, C, H, W) array and ``cols`` a C-contiguous
  (C, kh, kw, N, Ho, Wo) array of the same dtype (float32 or float64), which the kernel
  overwrites entirely;
* window geometry is torch's (``backends/geometry.py``), padding reads as zero;
* thread layout: ``prange`` over images, each thread writing only its images' columns.
"""
from numba import njit, prange, uint64

from .col2im_kernels import _reach

_KERNEL = dict(parallel=True, cache=True, error_model="numpy", boundscheck=False)


@njit(**_KERNEL)
def im2col(x, kh, kw, sh, sw, ph, pw, dh, dw, cols):
    """cols[c, i, j, n, oh, ow] = pixel (oh*sh - ph + i*dh, ow*sw - pw + j*dw) of x[n, c],
    or 0 where that pixel lies in the padding."""
    n_images, n_channels, height, width = x.shape
    n_oh, n_ow = cols.shape[4], cols.shape[5]
    src, dst = x.ravel(), cols.ravel()
    for n in prange(n_images):
        for c in range(n_channels):
            plane_at = uint64((n * n_channels + c) * height * width)
            for i in range(kh):
                oh_lo, oh_hi, h0 = _reach(i, n_oh, height, sh, ph, dh)
                for j in range(kw):
                    ow_lo, ow_hi, w0 = _reach(j, n_ow, width, sw, pw, dw)
                    block_at = uint64((((c * kh + i) * kw + j) * n_images + n) * n_oh * n_ow)
                    for oh in range(n_oh):
                        row_at = block_at + uint64(oh * n_ow)
                        if oh < oh_lo or oh >= oh_hi:  # the whole row of windows in the padding
                            for k in range(n_ow):
                                dst[row_at + uint64(k)] = 0
                            continue
                        for k in range(ow_lo):  # windows whose tap lies in the left padding
                            dst[row_at + uint64(k)] = 0
                        source = plane_at + uint64((oh * sh + h0) * width + ow_lo * sw + w0)
                        target = row_at + uint64(ow_lo)
                        if sw == 1:
                            for k in range(ow_hi - ow_lo):
                                dst[target + uint64(k)] = src[source + uint64(k)]
                        else:
                            for k in range(ow_hi - ow_lo):
                                dst[target + uint64(k)] = src[source + uint64(k * sw)]
                        for k in range(ow_hi, n_ow):  # ... and in the right padding
                            dst[row_at + uint64(k)] = 0
