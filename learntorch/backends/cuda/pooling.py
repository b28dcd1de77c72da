"""Max and average pooling on the GPU, forward and backward, one thread per element.

The same windows as the convolution's (``conv.py``, and ``Geometry`` in
``backends/geometry.py``), slid over every *plane* on its own: an
(N, C, H, W) or (C, H, W) input is a stack of P = N*C planes of (H, W).

Semantics are the CPU's (``backends/numba_cpu/pool_kernels.py`` and
``backends/numpy_families/pooling.py``), which are torch's, element for element:

* max: each window starts at the lowest value (-inf; an integer dtype's
  minimum) with the index of its first pixel inside the plane; a pixel takes
  over when it is *strictly* greater (ties keep the first index, row-major)
  or NaN (a NaN always wins; of several NaNs the last one does).  Padding is
  never a candidate.  ``indices`` are flat ``h*W + w`` positions in the plane.
* avg: the sum of the window's pixels (padding adds zero) divided by the
  window's divisor (count_include_pad / divisor_override / ceil_mode are
  all in the (Ho, Wo) divisor array that ``geometry.avg_divisor`` computes).

**Thread layout.**  Forward: thread ``k = cuda.grid(1)`` computes output
element k of the flat (P, Ho, Wo) result.  Backward: thread k owns *input*
element k of the flat (P, H, W) gradient and *gathers* what reaches it.  The
backward passes are scatters by nature -- a max window sends its gradient to
its winner, an average window to all its pixels -- and overlapping windows
send to the same pixel, which as threads would need ``cuda.atomic.add``.
Gathering instead (``conv.window_hit`` finds the windows whose tap lands on a
pixel; ``conv.window_tap``, the other way round, the pixel a tap reads) lets every thread write only its own element: no atomics, and sums
that do not depend on the order threads run in.  The gathers add in the CPU
kernels' order (max: windows in row-major order; avg: taps in row-major
order), so their sums round the same way.

Contract: arrays are flat, C-contiguous device arrays (the host functions
make them so); float32 or float64 for both, and integer dtypes for max.
"""
import functools

import numpy as np

from .array import CudaArray
from .conv import window_hit, window_tap
from .driver import launch, numba_cuda

cuda = numba_cuda()


@cuda.jit(device=True)
def plane_position(k, rows, cols):
    """(plane, row, col) of element k of a flat C-contiguous (P, rows, cols) stack of planes."""
    return k // (rows * cols), (k // cols) % rows, k % cols


@functools.lru_cache(maxsize=None)
def kernels(dtype):
    """The four pooling kernels for ``dtype`` (compiled once per dtype)."""
    # constants are converted inside the kernels (cast(0)): a numpy float16 *constant* captured
    # from here compiles to IR that NVVM rejects, while the conversion compiles for every dtype
    cast = dtype.type
    lowest = -np.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)

    @cuda.jit
    def max_forward(x, out, indices, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, total):
        """out[k], indices[k] = max of window k and where it is (k indexes (P, Ho, Wo))."""
        k = cuda.grid(1)
        if k >= total:
            return
        p, oh, ow = plane_position(k, Ho, Wo)
        best = cast(lowest)
        best_at = -1
        for i in range(kh):
            h = window_tap(oh, ph, i, dh, sh, H)
            if h < 0:
                continue
            for j in range(kw):
                w = window_tap(ow, pw, j, dw, sw, W)
                if w < 0:
                    continue
                if best_at < 0:
                    best_at = h * W + w       # the window's first pixel in the plane
                v = x[(p * H + h) * W + w]
                if v > best or v != v:        # strictly greater, or NaN
                    best = v
                    best_at = h * W + w
        out[k] = best
        indices[k] = best_at

    @cuda.jit
    def max_backward(grad, indices, grad_input, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo,
                     total):
        """grad_input[k] = sum of grad over the windows whose winner is pixel k.

        The taps are walked from the last to the first, so the windows that
        cover the pixel come in row-major order, as the CPU kernel adds them.
        """
        k = cuda.grid(1)
        if k >= total:
            return
        p, h, w = plane_position(k, H, W)
        acc = cast(0)
        for i in range(kh - 1, -1, -1):
            oh = window_hit(h, ph, i, dh, sh, Ho)
            if oh < 0:
                continue
            for j in range(kw - 1, -1, -1):
                ow = window_hit(w, pw, j, dw, sw, Wo)
                if ow < 0:
                    continue
                at = (p * Ho + oh) * Wo + ow
                if indices[at] == h * W + w:
                    acc += grad[at]
        grad_input[k] = acc

    @cuda.jit
    def avg_forward(x, divisor, out, H, W, kh, kw, sh, sw, ph, pw, Ho, Wo, total):
        """out[k] = sum of window k / its divisor (k indexes (P, Ho, Wo)); dilation is 1."""
        k = cuda.grid(1)
        if k >= total:
            return
        p, oh, ow = plane_position(k, Ho, Wo)
        acc = cast(0)
        for i in range(kh):
            h = window_tap(oh, ph, i, 1, sh, H)
            if h < 0:
                continue
            for j in range(kw):
                w = window_tap(ow, pw, j, 1, sw, W)
                if w >= 0:
                    acc += x[(p * H + h) * W + w]
        out[k] = acc / divisor[oh * Wo + ow]

    @cuda.jit
    def avg_backward(grad, divisor, grad_input, H, W, kh, kw, sh, sw, ph, pw, Ho, Wo, total):
        """grad_input[k] = sum over the windows covering pixel k of grad / divisor."""
        k = cuda.grid(1)
        if k >= total:
            return
        p, h, w = plane_position(k, H, W)
        acc = cast(0)
        for i in range(kh):
            oh = window_hit(h, ph, i, 1, sh, Ho)
            if oh < 0:
                continue
            for j in range(kw):
                ow = window_hit(w, pw, j, 1, sw, Wo)
                if ow >= 0:
                    share = grad[(p * Ho + oh) * Wo + ow] / divisor[oh * Wo + ow]
                    acc += share
        grad_input[k] = acc

    return max_forward, max_backward, avg_forward, avg_backward


def _planes(a):
    """The (P, H, W) contiguous stack of planes of a (..., H, W) CudaArray."""
    a = a if a._is_c_contiguous() else a.copy()
    return a.reshape((-1,) + a.shape[-2:])


def _window_args(g, dilation=True):
    return g.kernel + g.stride + g.pad + (g.dilation if dilation else ()) + g.out


def _require_float(name, a):
    if a.dtype.kind != "f" or a.dtype == np.float16:
        raise NotImplementedError(f"\"{name}\" not implemented for {a.dtype} on cuda: convert "
                                  "the input first, e.g. input.float()")


# ---------------------------------------------------------------- host functions
def max_pool2d_forward(x, g):
    """(values, int64 indices), each (..., Ho, Wo), of every window ``g`` of ``x`` (..., H, W)."""
    planes = _planes(x)
    out = CudaArray.empty((planes.shape[0],) + g.out, x.dtype)
    indices = CudaArray.empty(out.shape, np.int64)
    if out.size:
        launch(kernels(x.dtype)[0], out.size)(planes._flat(), out._flat(), indices._flat(),
                                              *g.size, *_window_args(g), out.size)
    shape = x.shape[:-2] + g.out
    return out.reshape(shape), indices.reshape(shape)


def max_pool2d_backward(grad, indices, g):
    """The (..., H, W) gradient of the input: each window's ``grad`` goes to its winner."""
    planes, at = _planes(grad), _planes(indices)
    grad_input = CudaArray.empty((planes.shape[0],) + g.size, grad.dtype)
    if grad_input.size:
        launch(kernels(grad.dtype)[1], grad_input.size)(
            planes._flat(), at._flat(), grad_input._flat(), *g.size, *_window_args(g),
            grad_input.size)
    return grad_input.reshape(grad.shape[:-2] + g.size)


def _divisor(divisor, dtype):
    """The (Ho, Wo) divisors on the device, in the data's dtype (the CPU divides in it too)."""
    return CudaArray.from_host(np.ascontiguousarray(divisor, dtype=dtype))._flat()


def avg_pool2d_forward(x, g, divisor):
    """The mean of every window ``g`` of ``x`` (..., H, W): window sum / ``divisor`` (Ho, Wo)."""
    _require_float("avg_pool2d", x)
    planes = _planes(x)
    out = CudaArray.empty((planes.shape[0],) + g.out, x.dtype)
    if out.size:
        launch(kernels(x.dtype)[2], out.size)(planes._flat(), _divisor(divisor, x.dtype),
                                              out._flat(), *g.size,
                                              *_window_args(g, dilation=False), out.size)
    return out.reshape(x.shape[:-2] + g.out)


def avg_pool2d_backward(grad, g, divisor):
    """The (..., H, W) input gradient: every pixel of a window gets grad / divisor."""
    _require_float("avg_pool2d_backward", grad)
    planes = _planes(grad)
    grad_input = CudaArray.empty((planes.shape[0],) + g.size, grad.dtype)
    if grad_input.size:
        launch(kernels(grad.dtype)[3], grad_input.size)(
            planes._flat(), _divisor(divisor, grad.dtype), grad_input._flat(), *g.size,
            *_window_args(g, dilation=False), grad_input.size)
    return grad_input.reshape(grad.shape[:-2] + g.size)
