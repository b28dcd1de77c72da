"""Where the windows of a sliding-window op lie: the one description convolution, im2col and
pooling share, on every backend.

A layer (``nn/_functional/conv.py``, ``pooling.py``) checks its arguments and turns them
into a ``Geometry``; the backend methods (``numpy_families/conv.py``, ``pooling.py``, the
Numba and CUDA kernels) receive it and compute.  It lives here, with the backends, because
the kernels need it and a backend never imports the layers above it.

All tuples are (height, width); a 1-D op is an image of height 1.  Window (oh, ow) starts
at pixel (oh*stride - pad) of each axis, and its tap (i, j) lies ``dilation`` pixels per
tap further; a tap outside the image reads the padding.
"""
import numpy as np


class Geometry:
    """The windows of one 2-D sliding-window op over an image of ``size``.

    ``pad`` is the border before the image (top, left); the border after it
    is whatever the last window needs (``buffer`` is the padded size).
    """

    __slots__ = ("size", "kernel", "stride", "dilation", "pad", "out", "buffer")

    def __init__(self, size, kernel, stride, dilation, pad, out):
        self.size, self.kernel, self.stride = tuple(size), tuple(kernel), tuple(stride)
        self.dilation, self.pad, self.out = tuple(dilation), tuple(pad), tuple(out)
        # the padded image must hold the image itself and reach the end of the last window
        self.buffer = tuple(max(p + n, (o - 1) * s + d * (k - 1) + 1) if o > 0 else p + n
                            for n, k, s, d, p, o in zip(size, kernel, stride, dilation, pad, out))

    def __repr__(self):
        return (f"Geometry(size={self.size}, kernel={self.kernel}, stride={self.stride}, "
                f"dilation={self.dilation}, pad={self.pad}, out={self.out})")

    def __eq__(self, other):
        return isinstance(other, Geometry) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __hash__(self):
        return hash(tuple(getattr(self, name) for name in self.__slots__))

    @property
    def padded(self):
        """True when the image must be copied into a border first."""
        return self.pad != (0, 0) or self.buffer != self.size

    @property
    def overlapping(self):
        """True when two windows can share a pixel (the stride is shorter than a window)."""
        return any(s < d * (k - 1) + 1 for k, s, d in zip(self.kernel, self.stride, self.dilation))


def output_size(size, kernel, stride, dilation, pad_before, pad_after, ceil_mode=False):
    """Number of window positions along one dimension (torch's formula).

    The window covers ``dilation * (kernel - 1) + 1`` pixels; it starts at every
    ``stride``-th pixel of the padded line while it still fits.  With
    ``ceil_mode`` (pooling) a last, partial window is kept too -- but only if it
    starts inside the image or its left padding, never entirely in the right one.
    """
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + pad_before:
            out -= 1
        return out
    return span // stride + 1


def avg_divisor(g, count_include_pad=True, divisor_override=None):
    """What average pooling divides each window's sum by: an int64 (Ho, Wo) array.

    torch's rule: ``divisor_override`` if given; else the window's size, where a
    window is clipped to the padded image (ceil_mode can push the last one past it)
    and ``count_include_pad`` counts its padding pixels -- otherwise only the pixels
    of the image itself.
    """
    if divisor_override is not None:
        return np.full(g.out, divisor_override, dtype=np.int64)
    counts = []
    for o, n, k, s, p in zip(g.out, g.size, g.kernel, g.stride, g.pad):
        start = np.arange(o, dtype=np.int64) * s - p
        end = np.minimum(start + k, n + p)
        counts.append(end - start if count_include_pad else
                      np.minimum(end, n) - np.maximum(start, 0))
    return counts[0][:, None] * counts[1][None, :]


def adaptive_windows(size, n_out):
    """The [start, end) of each of ``n_out`` adaptive-pooling windows over ``size`` pixels:
    start_i = floor(i * size / n_out), end_i = ceil((i + 1) * size / n_out) (torch's)."""
    return [(i * size // n_out, -(-(i + 1) * size // n_out)) for i in range(n_out)]
