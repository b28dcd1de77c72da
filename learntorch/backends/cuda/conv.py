"""2-D convolution on the GPU: one thread per output element, gathers only.

The CPU convolution (``backends/numpy_families/conv.py``) copies every window
into a matrix (im2col) so that BLAS can do all the dot products at once.  Here
each quantity is computed the way its formula reads, with one GPU thread per
element of the result -- three small kernels, no atomics, no shared memory:

    out[n, o, oh, ow] = bias[o] + sum over (c, i, j) of
                        w[o, c, i, j] * x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
    dx[n, c, h, w]    = sum over the (o, oh, ow, i, j) whose tap (i, j) lands on (h, w)
                        of grad[n, o, oh, ow] * w[o, c, i, j]
    dw[o, c, i, j]    = sum over (n, oh, ow) of grad[n, o, oh, ow] * x[n, c, h, w]

(the bias's gradient is a sum over (n, oh, ow), which the reduction kernels make;
with groups, input channel c only meets the output channels of its group).
Window geometry is torch's, as ``Geometry`` (``backends/geometry.py``)
describes it: window (oh, ow) starts at pixel (oh*sh - ph, ow*sw - pw), tap
(i, j) lies ``i*dh`` rows and ``j*dw`` columns further, and taps outside the
image read zero padding (``window_tap`` finds the pixel a tap reads, or -1
in the padding).  Only the padding *before* the image matters: a tap
past the bottom/right edge is simply outside (that is how 'same' padding's odd
extra pixel after the image comes for free).

**Why gathers.**  The input gradient is naturally a *scatter*: every output
element sends grad * w to the kh*kw pixels of its window, and overlapping
windows send to the same pixel -- as threads, they would need
``cuda.atomic.add``.  Turned around, every pixel *gathers* the few
(window, tap) pairs that hit it (``window_hit``) and writes its own element
once: no atomics, and the sums do not depend on the order threads run in.

**Why not im2col + matmul here.**  For large layers on a real GPU, im2col
followed by the tiled matmul (``matmul.py``) reuses each loaded value many
times and is faster; but it costs memory kh*kw times the input, and these
one-formula kernels are the ones to read first (and fast enough for the
course's small CNNs).  Every kernel keeps its running sum in the data's dtype,
as the CPU does.

**im2col and col2im** (``F.unfold`` / ``F.fold``) are the same gathers once more
(``window_kernels``): im2col's thread k copies element k of the (N, C, kh, kw, Ho,
Wo) windows (``window_tap``; padding reads zero), and col2im's thread k owns pixel
k of the (N, C, H, W) image and adds up the window entries copied from it
(``window_hit``), taps in row-major order as the CPU adds them.

Contract: every array is a flat, C-contiguous device array of one float
dtype; the host functions below make views contiguous first.
"""
import functools

from .array import CudaArray
from .driver import launch, numba_cuda

cuda = numba_cuda()


@cuda.jit(device=True)
def window_hit(pixel, pad, tap, dilation, stride, n_out):
    """The window whose tap number ``tap`` lands on ``pixel`` (along one axis), or -1.

    Window o puts that tap on pixel o*stride - pad + tap*dilation; solving for
    o gives (pixel + pad - tap*dilation) / stride, which must be a whole
    number in [0, n_out).
    """
    start = pixel + pad - tap * dilation
    if start < 0 or start % stride != 0:
        return -1
    o = start // stride
    return o if o < n_out else -1


@cuda.jit(device=True)
def window_tap(window, pad, tap, dilation, stride, size):
    """The pixel that tap number ``tap`` of window ``window`` reads (along one axis), or -1.

    ``window_hit`` turned around: window o puts that tap on pixel
    o*stride - pad + tap*dilation; outside [0, size) it reads padding, which
    adds zero to a sum and is never a max's candidate, so the caller skips it.
    """
    pixel = window * stride - pad + tap * dilation
    return pixel if 0 <= pixel < size else -1


@functools.lru_cache(maxsize=None)
def kernels(dtype):
    """The three convolution kernels for ``dtype`` (compiled once per dtype)."""
    # zeros are converted inside the kernels (cast(0)): a numpy float16 *constant* captured
    # from here compiles to IR that NVVM rejects, while the conversion compiles for every dtype
    cast = dtype.type

    @cuda.jit
    def forward(x, w, bias, has_bias, out, C, H, W, O, G, kh, kw, sh, sw, ph, pw, dh, dw,
                Ho, Wo, total):
        """Thread k = cuda.grid(1) computes out[k], k indexing the (N, O, Ho, Wo) output."""
        k = cuda.grid(1)
        if k >= total:
            return
        ow = k % Wo
        oh = (k // Wo) % Ho
        o = (k // (Wo * Ho)) % O
        n = k // (Wo * Ho * O)
        cg = C // G                       # input channels per group
        c0 = (o // (O // G)) * cg         # the first input channel of o's group
        acc = cast(0)
        for cc in range(cg):
            for i in range(kh):
                h = window_tap(oh, ph, i, dh, sh, H)
                if h < 0:
                    continue
                for j in range(kw):
                    ww = window_tap(ow, pw, j, dw, sw, W)
                    if ww >= 0:
                        acc += (w[((o * cg + cc) * kh + i) * kw + j]
                                * x[((n * C + c0 + cc) * H + h) * W + ww])
        if has_bias:
            acc += bias[o]
        out[k] = acc

    @cuda.jit
    def input_grad(grad, w, gx, C, H, W, O, G, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo,
                   total):
        """Thread k gathers gx[k], k indexing the (N, C, H, W) input (see ``window_hit``)."""
        k = cuda.grid(1)
        if k >= total:
            return
        x_w = k % W
        h = (k // W) % H
        c = (k // (W * H)) % C
        n = k // (W * H * C)
        cg, og = C // G, O // G
        o0 = (c // cg) * og               # the first output channel of c's group
        acc = cast(0)
        for i in range(kh):
            oh = window_hit(h, ph, i, dh, sh, Ho)
            if oh < 0:
                continue
            for j in range(kw):
                ow = window_hit(x_w, pw, j, dw, sw, Wo)
                if ow < 0:
                    continue
                for o in range(o0, o0 + og):
                    acc += (grad[((n * O + o) * Ho + oh) * Wo + ow]
                            * w[((o * cg + c % cg) * kh + i) * kw + j])
        gx[k] = acc

    @cuda.jit
    def weight_grad(grad, x, gw, N, C, H, W, O, G, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo,
                    total):
        """Thread k sums gw[k] over the batch and the windows, k indexing (O, C/G, kh, kw)."""
        k = cuda.grid(1)
        if k >= total:
            return
        cg = C // G
        j = k % kw
        i = (k // kw) % kh
        cc = (k // (kw * kh)) % cg
        o = k // (kw * kh * cg)
        c = (o // (O // G)) * cg + cc     # the input channel this weight reads
        acc = cast(0)
        for n in range(N):
            for oh in range(Ho):
                h = window_tap(oh, ph, i, dh, sh, H)
                if h < 0:
                    continue
                for ow in range(Wo):
                    ww = window_tap(ow, pw, j, dw, sw, W)
                    if ww >= 0:
                        acc += (grad[((n * O + o) * Ho + oh) * Wo + ow]
                                * x[((n * C + c) * H + h) * W + ww])
        gw[k] = acc

    return forward, input_grad, weight_grad


@functools.lru_cache(maxsize=None)
def window_kernels(dtype):
    """im2col and col2im for ``dtype``: the windows of an image and their adjoint."""
    cast = dtype.type  # zeros converted inside the kernels, as in ``kernels`` above

    @cuda.jit
    def im2col(x, cols, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, total):
        """Thread k copies cols[k], k indexing the (N, C, kh, kw, Ho, Wo) windows of x."""
        k = cuda.grid(1)
        if k >= total:
            return
        ow = k % Wo
        oh = (k // Wo) % Ho
        j = (k // (Wo * Ho)) % kw
        i = (k // (Wo * Ho * kw)) % kh
        plane = k // (Wo * Ho * kw * kh)  # n * C + c
        h = window_tap(oh, ph, i, dh, sh, H)
        w = window_tap(ow, pw, j, dw, sw, W)
        if h >= 0 and w >= 0:
            cols[k] = x[(plane * H + h) * W + w]
        else:  # the tap lies in the padding
            cols[k] = cast(0)

    @cuda.jit
    def col2im(cols, x, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, total):
        """Thread k gathers x[k], k indexing the (N, C, H, W) image: the entries copied from it."""
        k = cuda.grid(1)
        if k >= total:
            return
        w = k % W
        h = (k // W) % H
        plane = k // (W * H)
        acc = cast(0)
        for i in range(kh):
            oh = window_hit(h, ph, i, dh, sh, Ho)
            if oh < 0:
                continue
            for j in range(kw):
                ow = window_hit(w, pw, j, dw, sw, Wo)
                if ow >= 0:
                    acc += cols[(((plane * kh + i) * kw + j) * Ho + oh) * Wo + ow]
        x[k] = acc

    return im2col, col2im


def _contiguous(a):
    return a if a._is_c_contiguous() else a.copy()


def _window_args(g):
    """kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo of the Geometry ``g``."""
    return g.kernel + g.stride + g.pad + g.dilation + g.out


# ---------------------------------------------------------------- the convolution
def forward(x, weight, bias, g, groups):
    """The (N, O, Ho, Wo) convolution of (N, C, H, W) ``x`` with (O, C/groups, kh, kw) ``weight``.

    ``bias``: an (O,) CudaArray or None; ``g``: the ``Geometry`` of the windows.
    Arguments are already checked (``F.conv2d`` does it).
    """
    x, weight = _contiguous(x), _contiguous(weight)
    (n, c, h, w), o = x.shape, weight.shape[0]
    out = CudaArray.empty((n, o) + g.out, x.dtype)
    if out.size:
        has_bias = bias is not None
        b = _contiguous(bias)._flat() if has_bias else weight._flat()  # unread without a bias
        launch(kernels(x.dtype)[0], out.size)(
            x._flat(), weight._flat(), b, has_bias, out._flat(), c, h, w, o, groups,
            *_window_args(g), out.size)
    return out


def input_gradient(grad, weight, g, groups):
    """dx of ``forward`` for the upstream (N, O, Ho, Wo) ``grad``: an (N, C, H, W) array."""
    grad, weight = _contiguous(grad), _contiguous(weight)
    (n, o), c = grad.shape[:2], weight.shape[1] * groups
    h, w = g.size
    gx = CudaArray.empty((n, c, h, w), grad.dtype)
    if gx.size:
        launch(kernels(grad.dtype)[1], gx.size)(grad._flat(), weight._flat(), gx._flat(), c, h,
                                                w, o, groups, *_window_args(g), gx.size)
    return gx


def weight_gradient(grad, x, g, groups):
    """dweight of ``forward`` for the upstream ``grad``: an (O, C/groups, kh, kw) array."""
    grad, x = _contiguous(grad), _contiguous(x)
    (n, c, h, w), o = x.shape, grad.shape[1]
    gw = CudaArray.empty((o, c // groups) + g.kernel, grad.dtype)
    if gw.size:
        launch(kernels(grad.dtype)[2], gw.size)(grad._flat(), x._flat(), gw._flat(), n, c, h, w,
                                                o, groups, *_window_args(g), gw.size)
    return gw


def im2col(x, g):
    """Every window ``g`` of ``x`` (N, C, H, W): a C-contiguous (N, C, kh, kw, Ho, Wo) CudaArray.

    The conv family's ``im2col`` on the GPU (taps in the padding are zero).
    """
    x = _contiguous(x)
    n, c, h, w = x.shape
    cols = CudaArray.empty((n, c) + g.kernel + g.out, x.dtype)
    if cols.size:
        launch(window_kernels(x.dtype)[0], cols.size)(x._flat(), cols._flat(), h, w,
                                                      *_window_args(g), cols.size)
    return cols


def col2im(cols, g):
    """The adjoint of ``im2col``: (N, C, H, W), each pixel the sum of the entries copied from it."""
    cols = _contiguous(cols)
    n, c = cols.shape[:2]
    x = CudaArray.empty((n, c) + g.size, cols.dtype)
    if x.size:
        launch(window_kernels(cols.dtype)[1], x.size)(cols._flat(), x._flat(), *g.size,
                                                      *_window_args(g), x.size)
    return x
