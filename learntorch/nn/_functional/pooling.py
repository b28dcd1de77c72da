"""Pooling: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``.

Pooling slides a window over every channel on its own and keeps one number
per window: the largest (max) or the mean (avg).  The windows are the same
``Geometry`` the convolution uses (``im2col.py``), and the input is handled as
a stack of P = N*C independent *planes* of shape (H, W); a 3-D (C, H, W)
input is simply a stack of C planes.

Derivatives, with g = dLoss/dout:

* max: only the winner of a window influenced the output, so g goes to that
  one pixel (its flat index ``h*W + w`` is what ``return_indices=True``
  returns); a pixel that wins several overlapping windows collects them all.
* avg: every pixel of a window contributed 1/divisor, so each receives
  g/divisor -- a scatter-add of the windows, the same ``col2im`` as the
  convolution's.
* adaptive avg: the windows are fixed by the output size instead of a
  kernel; the mean over rows and over columns are two small averaging
  matrices, out = A_h @ x @ A_w^T, and the gradient is A_h^T @ g @ A_w.
"""
import math
import numbers

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ...backends.numba_cpu import tuning
from ...backends.numba_cpu.loader import layer_kernel_serves, use_threads
from ...ops._helpers import recording_gradient_graph, wrap
from ...ops.indexing import scatter_add
from .im2col import Col2im, Geometry, col2im, output_size, padded, windows

#: smallest array (elements: the input in forward, the gradient in backward) for which max
#: pooling runs the Numba kernels instead of numpy.  Measured at float32 with 2x2 windows on
#: a shared 2-core machine (numpy / kernel, microseconds):
#:   forward   2e3 elements: 43 / 13,   5e4: 370 / 130,   2e5: 1500 / 380,   3e6: 25000 / 4000
#:   backward  5e2 gradients: 4 / 9,    2e3: 8 / 10,      1.3e4: 34 / 14,    5e4: 130 / 32
#: The forward kernel wins even on tiny inputs, but for those importing Numba (~0.5 s, once)
#: is not worth it: toys stay on numpy.
MAX_POOL_KERNEL_MIN_SIZE = tuning.threshold("layer_min_sizes", "max_pool2d")  # (tuning.json)
#: one-thread cost of the kernels in ns per float32 element (forward: of the input, backward:
#: of the gradient), 2x2 windows: it picks each call's thread count (``loader.use_threads``)
MAX_POOL_FORWARD_NS, MAX_POOL_BACKWARD_NS = 0.8, 0.45

_TORCH_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                     "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                     "bool": "Bool"}


# ---------------------------------------------------------------- max pooling
class MaxPool2d(Function):
    """Max over every window; returns (values, int64 flat indices) like torch's op."""

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, g):
        planes = _planes(x._data)
        out, indices = _max_pool(planes, g)
        shape = x.shape[:-2] + g.out
        indices = wrap(indices.reshape(shape))
        ctx.geometry = g
        # the returned indices are saved (not a copy): changing them in place, or x (whose
        # maxima they point to), is reported at backward, as torch does
        ctx.save_for_backward(x, indices)
        ctx.set_materialize_grads(False)  # the indices output never gets a gradient
        return wrap(out.reshape(shape)), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        x, indices = ctx.saved_tensors
        g = ctx.geometry
        (h, w) = g.size
        n_planes, n_out = math.prod(x.shape[:-2]), g.out[0] * g.out[1]
        indices = indices._data.reshape(n_planes, n_out)
        if recording_gradient_graph():
            # the same routing from differentiable ops: a scatter-add of grad into zeros
            # (made on grad's device: like= gives device memory for a cuda gradient)
            zeros = Tensor._wrap(np.zeros((n_planes, h * w), dtype=grad._data.dtype,
                                          like=grad._data))
            flat = scatter_add(zeros, 1, Tensor._wrap(indices), grad.reshape(n_planes, n_out))
            return flat.reshape(x.shape), None
        if _on_cuda(indices):
            gx = _cuda_pooling().max_pool2d_backward(grad._data, indices.reshape(grad.shape), g)
            return wrap(gx.reshape(x.shape)), None
        gx = _max_pool_backward(grad._data.reshape(n_planes, n_out), indices, h * w,
                                _windows_overlap(g))
        return wrap(gx.reshape(x.shape)), None


def _max_pool(planes, g):
    """(values, indices) of every window of ``planes`` (P, H, W): the kernel or numpy."""
    if _on_cuda(planes):
        return _cuda_pooling().max_pool2d_forward(planes, g)
    if _use_kernel(planes):
        from ...backends.numba_cpu.loader import kernels
        x = np.ascontiguousarray(planes)
        out = np.empty((x.shape[0],) + g.out, dtype=x.dtype)
        indices = np.empty(out.shape, dtype=np.int64)
        pool = kernels("pool_kernels")
        use_threads(x.size * MAX_POOL_FORWARD_NS * (x.itemsize / 4))
        if g.kernel == (2, 2) and g.dilation == (1, 1) and not g.padded:
            pool.max_pool2d_2x2_forward(x, *g.stride, out, indices)  # the common case
        else:
            pool.max_pool2d_forward(x, *g.kernel, *g.stride, *g.pad, *g.dilation, out, indices)
        return out, indices
    return max_pool_numpy(planes, g)


def max_pool_numpy(planes, g):
    """The reference: a running maximum over the kh*kw kernel offsets, torch's rules.

    The border is -inf (the lowest integer for integer dtypes), so padding
    never wins.  Each window starts at -inf with the index of its first pixel
    inside the plane; a pixel takes over when it is strictly greater (ties
    keep the earlier index) or NaN (a NaN always propagates; the last one wins).
    """
    fill = -np.inf if planes.dtype.kind == "f" else np.iinfo(planes.dtype).min
    n_planes, (h, w) = planes.shape[0], g.size
    view = windows(padded(planes[:, None], g, fill), g)[:, 0]   # (P, kh, kw, Ho, Wo)
    rows, cols = _tap_positions(g)                               # (kh, Ho), (kw, Wo)
    best = np.full((n_planes,) + g.out, fill, dtype=planes.dtype)
    first_row = np.where(rows >= 0, rows, h).min(axis=0)         # first tap inside the plane
    first_col = np.where(cols >= 0, cols, w).min(axis=0)
    indices = np.broadcast_to(first_row[:, None] * w + first_col, best.shape).copy()
    for i in range(g.kernel[0]):
        for j in range(g.kernel[1]):
            v = view[:, i, j]
            take = v > best
            if planes.dtype.kind == "f":
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


def _max_pool_backward(grad, indices, plane_size, overlapping):
    """Route each output's gradient (P, Ho*Wo) to its argmax; returns (P, H*W)."""
    if _use_kernel(grad):
        from ...backends.numba_cpu.loader import kernels
        gx = np.zeros((grad.shape[0], plane_size), dtype=grad.dtype)
        module = kernels("pool_kernels")
        use_threads(grad.size * MAX_POOL_BACKWARD_NS * (grad.itemsize / 4))
        module.max_pool2d_backward(np.ascontiguousarray(grad), indices, gx)
        return gx
    if not overlapping:
        # every pixel wins at most one window: plain assignment, no sums to form
        gx = np.zeros((grad.shape[0], plane_size), dtype=grad.dtype)
        np.put_along_axis(gx, indices, grad, axis=1)
        return gx
    # a pixel may win several windows: add them up (bincount sums in float64)
    n_planes = grad.shape[0]
    flat = indices + (np.arange(n_planes) * plane_size)[:, None]
    sums = np.bincount(flat.ravel(), weights=grad.ravel(), minlength=n_planes * plane_size)
    return sums.astype(grad.dtype).reshape(n_planes, plane_size)


def _windows_overlap(g):
    return any(s < d * (k - 1) + 1 for k, s, d in zip(g.kernel, g.stride, g.dilation))


def _use_kernel(a):
    """The Numba kernel serves large float arrays when the Numba backend is active."""
    return layer_kernel_serves(a, MAX_POOL_KERNEL_MIN_SIZE)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over (kH, kW) windows of an (N, C, H, W) or (C, H, W) input, as torch's."""
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


def _window_arguments(name, kernel_size, stride, padding):
    """kernel, stride (the kernel when omitted, as in torch) and padding as pairs."""
    kernel = _pair(name, "kernel_size", kernel_size,
                   "must either be a single int, or a tuple of two ints")
    if stride is None or stride == () or stride == []:
        stride = kernel
    else:
        stride = _pair(name, "stride", stride,
                       "must either be omitted, a single int, or a tuple of two ints")
    padding = _pair(name, "padding", padding, "must either be a single int, or a tuple of two ints")
    return kernel, stride, padding


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool2d that always returns (values, indices), whatever ``return_indices`` says."""
    _require_tensor("max_pool2d", input)
    kernel, stride, padding = _window_arguments("max_pool2d", kernel_size, stride, padding)
    dilation = _pair("max_pool2d", "dilation", dilation, "must be either a single int, or a tuple "
                     "of two ints")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got "
                           f"input of size {list(input.shape)}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool': convert the input "
                                  "first, e.g. input.float()")
    g = _pool_geometry(input, kernel, stride, padding, dilation, ceil_mode)
    return MaxPool2d.apply(input, g)


# ---------------------------------------------------------------- average pooling
class AvgPool2d(Function):
    """Mean over every window: the sum of the window divided by ``divisor`` (Ho, Wo)."""

    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, g, divisor):
        planes = _planes(x._data)
        if _on_cuda(planes):
            ctx.geometry, ctx.divisor, ctx.shape = g, divisor, x.shape
            return wrap(_cuda_pooling().avg_pool2d_forward(x._data, g, divisor))
        view = windows(padded(planes[:, None], g, 0), g)[:, 0]  # (P, kh, kw, Ho, Wo)
        if x.dtype.is_floating_point:
            # half precision sums in float32, as torch accumulates
            acc = np.float32 if planes.dtype == np.float16 else planes.dtype
            out = (view.sum(axis=(1, 2), dtype=acc) / divisor.astype(acc)).astype(planes.dtype)
        else:  # integers: the sum divided with truncation toward zero, as torch's C++ does
            total = view.sum(axis=(1, 2), dtype=np.int64)
            out = (np.sign(total) * (np.abs(total) // divisor)).astype(planes.dtype)
        ctx.geometry, ctx.divisor, ctx.shape = g, divisor, x.shape
        return wrap(out.reshape(x.shape[:-2] + g.out))

    @staticmethod
    def backward(ctx, grad):
        g, divisor = ctx.geometry, ctx.divisor
        shape = ctx.shape
        (kh, kw), n_planes = g.kernel, math.prod(shape[:-2])
        if recording_gradient_graph():
            divisors = Tensor._wrap(divisor.astype(grad._data.dtype)).to(grad.device)
            share = grad.reshape(n_planes, *g.out) / divisors
            cols = share.reshape(n_planes, 1, 1, 1, *g.out).expand(n_planes, 1, kh, kw, *g.out)
            return Col2im.apply(cols, g).reshape(shape), None, None
        if _on_cuda(grad._data):
            return wrap(_cuda_pooling().avg_pool2d_backward(grad._data, g, divisor)), None, None
        # every pixel of a window gets grad / divisor: col2im of that share, broadcast
        # (not copied) over the kh*kw taps
        share = _planes(grad._data) / divisor.astype(grad._data.dtype)
        cols = np.broadcast_to(share[:, None, None, None], (n_planes, 1, kh, kw) + g.out)
        return wrap(col2im(cols, g).reshape(shape)), None, None


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over (kH, kW) windows of an (N, C, H, W) or (C, H, W) input, as torch's."""
    _require_tensor("avg_pool2d", input)
    kernel, stride, padding = _window_arguments("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override,
                                                                numbers.Integral):
            raise TypeError(f"avg_pool2d(): argument 'divisor_override' (position 7) must be "
                            f"int, not {type(divisor_override).__name__}")
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero (divisor_override=0); leave it None to "
                               "divide by the window size")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"avg_pool2d\" not implemented for 'Bool': convert the input "
                                  "first, e.g. input.float()")
    g = _pool_geometry(input, kernel, stride, padding, (1, 1), ceil_mode)
    divisor = _avg_divisor(g, count_include_pad, divisor_override)
    return AvgPool2d.apply(input, g, divisor)


def _avg_divisor(g, count_include_pad, divisor_override):
    """What each window's sum is divided by, (Ho, Wo) int64 -- torch's rule.

    A window is clipped to the padded image (ceil_mode can push the last one
    past it); ``count_include_pad`` counts its padding pixels, otherwise only
    the pixels of the image itself.
    """
    if divisor_override is not None:
        return np.full(g.out, divisor_override, dtype=np.int64)
    counts = []
    for o, n, k, s, p in zip(g.out, g.size, g.kernel, g.stride, g.pad):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            counts.append(end - start)
        else:
            counts.append(np.minimum(end, n) - np.maximum(start, 0))
    return counts[0][:, None] * counts[1][None, :]


# ---------------------------------------------------------------- adaptive average pooling
class AdaptiveAvgPool2d(Function):
    """out = A_h @ x @ A_w^T on every plane, with the averaging matrices of ``_averaging``."""

    node_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, out_size):
        a_h = _averaging(x.shape[-2], out_size[0], x._data.dtype)
        a_w = _averaging(x.shape[-1], out_size[1], x._data.dtype)
        ctx.matrices = a_h, a_w
        out = np.matmul(np.matmul(a_h, x._data), a_w.T)  # numpy broadcasts over N, C
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        a_h, a_w = ctx.matrices
        if recording_gradient_graph():
            return (Tensor._wrap(a_h.T) @ grad) @ Tensor._wrap(a_w), None
        return wrap(np.matmul(np.matmul(a_h.T, grad._data), a_w)), None


def _averaging(size, n_out, dtype):
    """(n_out, size) matrix whose row i averages pixels [start_i, end_i) -- torch's windows:
    start_i = floor(i * size / n_out), end_i = ceil((i + 1) * size / n_out)."""
    i = np.arange(n_out)
    start = i * size // n_out
    end = -(-(i + 1) * size // n_out)
    pixel = np.arange(size)
    inside = (pixel >= start[:, None]) & (pixel < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (out_H, out_W) whatever the input size; None keeps a size."""
    _require_tensor("adaptive_avg_pool2d", input)
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise RuntimeError(f"adaptive_avg_pool2d: output_size must be 2 (got "
                               f"output_size={output_size!r}: give (out_H, out_W) or one int)")
        sizes = tuple(output_size)
    else:
        sizes = (output_size, output_size)
    for s in sizes:
        if s is not None and (isinstance(s, bool) or not isinstance(s, numbers.Integral)):
            raise TypeError(f"adaptive_avg_pool2d(): output_size must be an int, None or a tuple "
                            f"of two of them, got {output_size!r}")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    for d in range(1 if input.ndim == 3 else 2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {d} being "
                "empty")
    sizes = tuple(int(input.shape[-2 + k]) if s is None else int(s) for k, s in enumerate(sizes))
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{sizes[0]}, {sizes[1]}}}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"adaptive_avg_pool2d\" not implemented for '{_TORCH_TYPE_NAMES[input.dtype.name]}'"
            ": convert the input first, e.g. input.float()")
    return AdaptiveAvgPool2d.apply(input, sizes)


# ---------------------------------------------------------------- shared checks
def _on_cuda(a):
    return not isinstance(a, np.ndarray)  # a device array: kernels in backends/cuda/pooling.py


def _cuda_pooling():
    from ...backends.cuda import pooling
    return pooling


def _planes(a):
    """An (N, C, H, W) or (C, H, W) array as a (P, H, W) stack of planes (a view if it can)."""
    return a.reshape((-1,) + a.shape[-2:])


def _require_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}; wrap data with torch.tensor(...)")


def _pair(name, what, value, rule):
    """An int or a tuple/list of one or two ints, as a pair; torch's errors otherwise."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        if len(value) == 1:
            return (int(value[0]),) * 2
        if len(value) == 2:
            return tuple(int(v) for v in value)
        raise RuntimeError(f"{name}: {what} {rule} (got {what}={list(value)})")
    raise TypeError(f"{name}(): argument '{what}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def _pool_geometry(input, kernel, stride, padding, dilation, ceil_mode):
    """Check the window arguments against the input as torch does; return the Geometry."""
    kh, kw = kernel
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if 0 in stride:
        raise RuntimeError(f"stride should not be zero (got stride={stride})")
    if stride[0] < 0 or stride[1] < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} "
                           f"dW: {stride[1]}")
    if dilation[0] <= 0 or dilation[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for p in padding:
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}")
    if padding[0] > kh // 2 or padding[1] > kw // 2:  # torch also bounds it by the bare kernel
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {padding[1]}, padH = {padding[0]}, kW = {kw}, kH = {kh}")
    size = tuple(input.shape[-2:])
    if any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    out = tuple(output_size(n, k, s, d, p, p, ceil_mode)
                for n, k, s, d, p in zip(size, kernel, stride, dilation, padding))
    if out[0] < 1 or out[1] < 1:
        c = input.shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{size[0]}x{size[1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small: the window "
            f"(kernel_size={kernel}, dilation={dilation}) must fit into the padded input")
    return Geometry(size, kernel, stride, dilation, padding, out)
