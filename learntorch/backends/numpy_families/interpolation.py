"""Resizing images: nearest-neighbour and (bi/tri)linear interpolation, and their adjoints.

Both act on the trailing ``len(size)`` spatial dims of an (N, C, *spatial) array, one dim
after the other (they are *separable*):

* nearest: output position o copies input position ``min(floor(o * scale), n - 1)`` --
  a gather along each dim (``padding.gather_along_dims``), whose backward is the
  scatter-add of the gradients;
* linear: output position o reads the two input positions around its source
  coordinate ``src`` and mixes them, ``(1 - l) * x[i0] + l * x[i1]`` with
  ``l = src - i0``.  Interpolating the last dim first, then the one before, gives
  torch's arithmetic for bilinear: ``h0l * (w0l * x00 + w1l * x01) + h1l * (...)``.

Where the source coordinate lies is torch's rule (``area_pixel_compute_source_index``):
with ``align_corners`` the corner pixels of input and output are aligned,
``src = o * (n_in - 1) / (n_out - 1)``; without, the pixel *areas* are,
``src = (o + 0.5) * scale - 0.5`` (never below 0), with ``scale = 1 / scale_factor``
when a scale factor was given, else ``n_in / n_out``.  The coordinates are computed in
the data's float type, as torch's kernels do.
"""
import numpy as np

from .constants import like
from .padding import gather_along_dims, scatter_add_along_dims


class InterpolationFamily:
    def upsample_nearest(self, x, size, scales, exact=False):
        """``x`` resized to ``size`` (its last len(size) dims) by nearest neighbours;
        ``scales``: the scale factor of each dim, or None to use the size ratio;
        ``exact``: torch's 'nearest-exact' (the nearest pixel centre)."""
        return gather_along_dims(x, _nearest_positions(x.shape, size, scales, exact))

    def upsample_nearest_backward(self, grad, input_shape, scales, exact=False):
        """dLoss/dx of ``upsample_nearest``: each output's gradient added to its source."""
        size = grad.shape[len(grad.shape) - len(scales):]
        return scatter_add_along_dims(
            grad, _nearest_positions(input_shape, size, scales, exact), input_shape)

    def upsample_linear(self, x, size, align_corners, scales):
        """``x`` resized to ``size`` by linear interpolation along each of its last
        len(size) dims (linear, bilinear, trilinear)."""
        first = x.ndim - len(size)
        for d in reversed(range(len(size))):  # the last dim first, as torch's kernels
            i0, i1, l0, l1 = _linear_sources(x.shape[first + d], size[d], align_corners,
                                             scales[d], x.dtype)
            shape = (-1,) + (1,) * (len(size) - 1 - d)
            x = (np.take(x, i0, axis=first + d) * like(l0.reshape(shape), x)
                 + np.take(x, i1, axis=first + d) * like(l1.reshape(shape), x))
        return x

    def upsample_linear_backward(self, grad, input_shape, align_corners, scales):
        """dLoss/dx of ``upsample_linear``: each output's gradient shared between its two
        sources in the proportions the forward mixed them, dim by dim."""
        k = len(scales)
        first = grad.ndim - k
        for d in range(k):  # the adjoint of each step, the first dim first
            n_in, n_out = input_shape[first + d], grad.shape[first + d]
            i0, i1, l0, l1 = _linear_sources(n_in, n_out, align_corners, scales[d], grad.dtype)
            shape = (-1,) + (1,) * (k - 1 - d)
            sizes = list(grad.shape)
            sizes[first + d] = n_in
            summed = np.zeros(sizes, dtype=grad.dtype, like=grad)
            target = np.moveaxis(summed, first + d, 0)
            for index, weight in ((i0, l0), (i1, l1)):
                share = grad * like(weight.reshape(shape), grad)
                np.add.at(target, index, np.moveaxis(share, first + d, 0))
            grad = summed
        return grad


def _nearest_positions(shape, size, scales, exact):
    first = len(shape) - len(size)
    return tuple((first + d, _nearest_sources(shape[first + d], n_out, scales[d], exact))
                 for d, n_out in enumerate(size))


def _nearest_sources(n_in, n_out, scale_factor, exact):
    """The input position each of ``n_out`` outputs copies (torch's ``nearest_idx``; with
    ``exact``, ``nearest_exact_idx``, which rounds to the nearest centre)."""
    o = np.arange(n_out)
    if not exact and n_out == n_in:
        return o
    if not exact and n_out == 2 * n_in:
        return o >> 1
    # float32 arithmetic, as torch's compute_scales_value<float>
    scale = (np.float32(1.0 / scale_factor) if scale_factor is not None and scale_factor > 0
             else np.float32(n_in) / np.float32(n_out))
    src = ((o + 0.5) * np.float64(scale)).astype(np.float32) if exact else \
        o.astype(np.float32) * scale
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


def _linear_sources(n_in, n_out, align_corners, scale_factor, dtype):
    """(i0, i1, l0, l1): for each output, its two source positions and their weights
    (torch's ``compute_source_index_and_lambda``), the weights in ``dtype``."""
    t = np.float64 if np.dtype(dtype) == np.float64 else np.float32  # torch's opmath type
    o = np.arange(n_out)
    if n_out == n_in:  # the identity: every output copies its own input
        return o, o, np.ones(n_out, dtype), np.zeros(n_out, dtype)
    if align_corners:
        scale = t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
        src = scale * o.astype(t)
    else:
        scale = (t(1.0 / scale_factor) if scale_factor is not None and scale_factor > 0
                 else t(n_in) / t(n_out))
        src = np.maximum(scale * (o.astype(t) + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = np.clip(src - i0.astype(t), t(0), t(1))
    return i0, i1, (t(1) - l1).astype(dtype), l1.astype(dtype)
