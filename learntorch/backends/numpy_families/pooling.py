"""Pooling windows: max, average and adaptive pooling, forward and backward.

Pooling slides a window over every channel on its own and keeps one number per
window: the largest (max) or the mean (avg).  The windows are the convolution's
``Geometry`` (``backends/geometry.py``), and the input is handled as a stack of
*planes*: an (N, C, H, W) or (C, H, W) array is a stack of N*C or C independent
(H, W) planes; every method takes and returns (..., H, W) arrays.

Derivatives, with g = dLoss/dout:

* max: only the winner of a window influenced the output, so g goes to that
  one pixel (its flat index ``h*W + w`` in the plane is what ``return_indices``
  returns); a pixel that wins several overlapping windows collects them all.
* avg: every pixel of a window contributed 1/divisor, so each receives
  g/divisor -- a scatter-add of the windows, the convolution's ``col2im``.
* adaptive avg: the windows are fixed by the output size instead of a kernel;
  the means over rows and over columns are two small averaging matrices,
  out = A_h @ x @ A_w^T, and the gradient is A_h^T @ g @ A_w.
* adaptive max: like max, with adaptive windows.

The Numba backend runs max pooling with kernels (``numba_cpu/pooling_backend.py``);
a device array is handed to its own backend (``backends/cuda/pooling.py``).
"""
import math

import numpy as np

from .. import reference as _reference
from ..geometry import adaptive_windows
from .constants import like
from .conv import padded, windows


class PoolingFamily:
    # ---- max pooling
    def max_pool2d(self, x, g):
        """(values, int64 indices), each (..., Ho, Wo): the largest pixel of every window of
        ``x`` (..., H, W) and its flat position ``h*W + w`` in the plane (torch's rules:
        ties keep the first pixel, a NaN always wins, padding never does)."""
        device = _reference.on_device(x)
        if device is not None:
            return device.max_pool2d(x, g)
        best, indices = running_max(planes(x), g)
        shape = x.shape[:-2] + g.out
        return best.reshape(shape), indices.reshape(shape)

    def max_pool2d_backward(self, grad, indices, g):
        """The (..., H, W) input gradient: each window's ``grad`` goes to its winner."""
        device = _reference.on_device(grad)
        if device is not None:
            return device.max_pool2d_backward(grad, indices, g)
        return scatter_to_winners(grad, indices, g.size, g.overlapping)

    # ---- average pooling
    def avg_pool2d(self, x, g, divisor):
        """The mean of every window of ``x`` (..., H, W): its sum / ``divisor`` (Ho, Wo)."""
        device = _reference.on_device(x)
        if device is not None:
            return device.avg_pool2d(x, g, divisor)
        view = windows(padded(planes(x)[:, None], g, 0), g)[:, 0]  # (P, kh, kw, Ho, Wo)
        if x.dtype.kind == "f":
            # half precision sums in float32, as torch accumulates
            acc = np.float32 if x.dtype == np.float16 else x.dtype
            out = (view.sum(axis=(1, 2), dtype=acc) / divisor.astype(acc)).astype(x.dtype)
        else:  # integers: the sum divided with truncation toward zero, as torch's C++ does
            total = view.sum(axis=(1, 2), dtype=np.int64)
            out = (np.sign(total) * (np.abs(total) // divisor)).astype(x.dtype)
        return out.reshape(x.shape[:-2] + g.out)

    def avg_pool2d_backward(self, grad, g, divisor):
        """The (..., H, W) input gradient: every pixel of a window gets grad / divisor."""
        device = _reference.on_device(grad)
        if device is not None:
            return device.avg_pool2d_backward(grad, g, divisor)
        (kh, kw), n_planes = g.kernel, planes(grad).shape[0]
        share = planes(grad) / divisor.astype(grad.dtype)
        # col2im of that share, broadcast (not copied) over the kh*kw taps
        cols = np.broadcast_to(share[:, None, None, None], (n_planes, 1, kh, kw) + g.out)
        return self.col2im(cols, g).reshape(grad.shape[:-2] + g.size)

    # ---- adaptive pooling
    def adaptive_avg_pool2d(self, x, size):
        """Mean pooling of ``x`` (..., H, W) to ``size`` (out_H, out_W): A_h @ x @ A_w^T."""
        a_h, a_w = (like(m, x) for m in averaging_matrices(x.shape[-2:], size, x.dtype))
        return self.matmul(self.matmul(a_h, x), a_w.T)  # matmul broadcasts over N, C

    def adaptive_avg_pool2d_backward(self, grad, input_size):
        """The (..., H, W) input gradient of ``adaptive_avg_pool2d``: A_h^T @ grad @ A_w."""
        a_h, a_w = (like(m, grad) for m in averaging_matrices(input_size, grad.shape[-2:],
                                                              grad.dtype))
        return self.matmul(self.matmul(a_h.T, grad), a_w)

    def adaptive_max_pool2d(self, x, size):
        """(values, int64 indices) of max pooling ``x`` (..., H, W) to ``size`` with adaptive
        windows; the same rules as ``max_pool2d``."""
        p = planes(x)
        rows, cols = adaptive_windows(x.shape[-2], size[0]), adaptive_windows(x.shape[-1],
                                                                              size[1])
        best = np.empty((p.shape[0],) + tuple(size), dtype=x.dtype, like=x)
        indices = np.empty(best.shape, dtype=np.int64, like=x)
        width = x.shape[-1]
        for oh, (top, bottom) in enumerate(rows):          # one window at a time:
            for ow, (left, right) in enumerate(cols):      # the output is small
                window = p[:, top:bottom, left:right].copy()  # C order, on any device
                flat = window.reshape(p.shape[0], -1)
                at = _argmax_nan_last(flat)
                k = right - left
                best[:, oh, ow] = np.take_along_axis(flat, at[:, None], axis=1)[:, 0]
                indices[:, oh, ow] = (top + at // k) * width + left + at % k
        shape = x.shape[:-2] + tuple(size)
        return best.reshape(shape), indices.reshape(shape)

    def adaptive_max_pool2d_backward(self, grad, indices, input_size):
        """The (..., H, W) input gradient: each window's ``grad`` goes to its winner."""
        return scatter_to_winners(grad, indices, input_size, True)


# ---------------------------------------------------------------- helpers
def planes(a):
    """An (N, C, H, W) or (C, H, W) array as a (P, H, W) stack of planes (a view if it can)."""
    return a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])  # (no -1: sizes may be 0)


def running_max(stack, g):
    """(values, indices) of every window of ``stack`` (P, H, W): a running maximum over
    the kh*kw kernel taps, each step one pass over whole arrays.

    The border is -inf (the lowest integer for integer dtypes), so padding never
    wins.  Each window starts at -inf with the index of its first pixel inside the
    plane; a pixel takes over when it is strictly greater (ties keep the earlier
    index) or NaN (a NaN always propagates; the last one wins).
    """
    fill = -np.inf if stack.dtype.kind == "f" else np.iinfo(stack.dtype).min
    n_planes, (h, w) = stack.shape[0], g.size
    view = windows(padded(stack[:, None], g, fill), g)[:, 0]    # (P, kh, kw, Ho, Wo)
    rows, cols = _tap_positions(g)                               # (kh, Ho), (kw, Wo)
    best = np.full((n_planes,) + g.out, fill, dtype=stack.dtype)
    first_row = np.where(rows >= 0, rows, h).min(axis=0)         # first tap inside the plane
    first_col = np.where(cols >= 0, cols, w).min(axis=0)
    indices = np.broadcast_to(first_row[:, None] * w + first_col, best.shape).copy()
    for i in range(g.kernel[0]):
        for j in range(g.kernel[1]):
            v = view[:, i, j]
            take = v > best
            if stack.dtype.kind == "f":
                take |= np.isnan(v)
            np.copyto(best, v, where=take)
            np.copyto(indices, rows[i][:, None] * w + cols[j], where=take)
    return best, indices


def _tap_positions(g):
    """Row of kernel tap i for every output row (kh, Ho), and column of tap j (kw, Wo)."""
    (kh, kw), (sh, sw), (dh, dw), (ph, pw), (ho, wo) = g.kernel, g.stride, g.dilation, g.pad, g.out
    rows = np.arange(ho) * sh - ph + np.arange(kh)[:, None] * dh
    cols = np.arange(wo) * sw - pw + np.arange(kw)[:, None] * dw
    return rows, cols


def scatter_to_winners(grad, indices, size, overlapping):
    """Route each output's gradient (..., Ho, Wo) to its argmax; returns (..., H, W)."""
    n_planes = math.prod(grad.shape[:-2])
    g2 = grad.reshape(n_planes, grad.shape[-2] * grad.shape[-1])        # (P, Ho*Wo)
    at = indices.reshape(g2.shape)
    plane_size = size[0] * size[1]
    if not overlapping:
        # every pixel wins at most one window: plain assignment, no sums to form
        gx = np.zeros((n_planes, plane_size), dtype=grad.dtype, like=grad)
        np.put_along_axis(gx, at, g2, axis=1)
    elif isinstance(grad, np.ndarray):
        # a pixel may win several windows: add them up (bincount sums in float64)
        flat = at + (np.arange(n_planes) * plane_size)[:, None]
        sums = np.bincount(flat.ravel(), weights=g2.ravel(), minlength=n_planes * plane_size)
        gx = sums.astype(grad.dtype).reshape(n_planes, plane_size)
    else:  # a device array: an indexed add, which sums repeated positions
        gx = np.zeros((n_planes, plane_size), dtype=grad.dtype, like=grad)
        rows = np.broadcast_to(np.arange(n_planes)[:, None], at.shape)
        np.add.at(gx, (rows.reshape(-1), at.reshape(-1)), g2.reshape(-1))
    return gx.reshape(grad.shape[:-2] + tuple(size))


def _argmax_nan_last(flat):
    """Per row of ``flat``: the position of the first maximum, or of the *last* NaN if the
    row has one (torch's max pooling rule, which ``np.argmax`` -- first NaN -- differs from)."""
    at = np.argmax(flat, axis=1)
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        last_nan = flat.shape[1] - 1 - np.argmax(np.flip(nan, axis=1), axis=1)
        at = np.where(nan.any(axis=1), last_nan, at)
    return at


def averaging_matrices(size, out_size, dtype):
    """(A_h, A_w): the (out, in) matrices whose row i averages adaptive window i."""
    return tuple(_averaging(n, m, dtype) for n, m in zip(size, out_size))


def _averaging(size, n_out, dtype):
    windows_ = adaptive_windows(size, n_out)
    start = np.array([s for s, _ in windows_], dtype=np.int64)
    end = np.array([e for _, e in windows_], dtype=np.int64)
    pixel = np.arange(size)
    inside = (pixel >= start[:, None]) & (pixel < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)
