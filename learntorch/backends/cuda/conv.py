"""2-D convolution on the GPU: one thread per output element, gathers only.

The CPU convolution (``nn/_functional/conv.py``) copies every window into a
matrix (im2col) so that BLAS can do all the dot products at once.  Here each
quantity is computed the way its formula reads, with one GPU thread per
element of the result -- four small kernels, no atomics, no shared memory:

    out[n, o, oh, ow] = bias[o] + sum over (c, i, j) of
                        w[o, c, i, j] * x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
    dx[n, c, h, w]    = sum over the (o, oh, ow, i, j) whose tap (i, j) lands on (h, w)
                        of grad[n, o, oh, ow] * w[o, c, i, j]
    dw[o, c, i, j]    = sum over (n, oh, ow) of grad[n, o, oh, ow] * x[n, c, h, w]
    dbias[o]          = sum over (n, oh, ow) of grad[n, o, oh, ow]

(with groups, input channel c only meets the output channels of its group).
Window geometry is torch's, as ``Geometry`` (``nn/_functional/im2col.py``)
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

**im2col and col2im.**  Backward with ``create_graph=True`` builds the
convolution's gradient from differentiable ops instead (``_backward_from_ops``
in ``nn/_functional/conv.py``): matrix products and the ``Im2col`` / ``Col2im``
pair of ``nn/_functional/im2col.py``.  ``window_kernels`` are that pair on the
GPU, the same gathers once more: im2col's thread k copies element k of the
(N, C, kh, kw, Ho, Wo) windows (``window_tap``; padding reads zero), and
col2im's thread k owns pixel k of the (N, C, H, W) image and adds up the
window entries copied from it (``window_hit``), taps in row-major order as
the CPU adds them.

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
    """The four convolution kernels for ``dtype`` (compiled once per dtype)."""
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

    @cuda.jit
    def bias_grad(grad, gb, N, O, L):
        """Thread o sums gb[o] = grad[:, o] over the batch and the L = Ho*Wo positions."""
        o = cuda.grid(1)
        if o >= O:
            return
        acc = cast(0)
        for n in range(N):
            for p in range(L):
                acc += grad[(n * O + o) * L + p]
        gb[o] = acc

    return forward, input_grad, weight_grad, bias_grad


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
    Arguments are already checked (``F.conv2d`` or ``conv2d`` below does it).
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


def backward(grad, x, weight, g, groups, needs_input_grad=(True, True, True)):
    """(dx, dweight, dbias) of ``forward`` for the upstream (N, O, Ho, Wo) ``grad``.

    An entry is None where ``needs_input_grad`` says it is not wanted.
    """
    grad, x, weight = _contiguous(grad), _contiguous(x), _contiguous(weight)
    (n, c, h, w), o = x.shape, weight.shape[0]
    _, input_grad, weight_grad, bias_grad = kernels(x.dtype)
    need_x, need_w, need_b = needs_input_grad[:3]
    gx = gw = gb = None
    if need_x:
        gx = CudaArray.empty(x.shape, x.dtype)
        if gx.size:
            launch(input_grad, gx.size)(grad._flat(), weight._flat(), gx._flat(), c, h, w, o,
                                        groups, *_window_args(g), gx.size)
    if need_w:
        gw = CudaArray.empty(weight.shape, x.dtype)
        if gw.size:
            launch(weight_grad, gw.size)(grad._flat(), x._flat(), gw._flat(), n, c, h, w, o,
                                         groups, *_window_args(g), gw.size)
    if need_b:
        gb = CudaArray.empty((o,), x.dtype)
        if gb.size:
            launch(bias_grad, o)(grad._flat(), gb._flat(), n, o, g.out[0] * g.out[1])
    return gx, gw, gb


def im2col(x, g):
    """Every window ``g`` of ``x`` (N, C, H, W): a C-contiguous (N, C, kh, kw, Ho, Wo) CudaArray.

    ``nn/_functional/im2col.py``'s ``im2col`` on the GPU (taps in the padding are zero).
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


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv2d`` on CudaArrays: (N, C, H, W) input, torch's stride/padding/dilation/groups.

    ``padding`` is an int, a pair, 'valid' or 'same'.  The window geometry
    and its checks are the CPU's (``nn/_functional/conv.py``).
    """
    from ...nn._functional.conv import _expand, _geometry
    _check(x, weight, bias, groups)
    padding = padding if isinstance(padding, str) else _expand("conv2d", "padding", padding, 2)
    g = _geometry(x, weight, _expand("conv2d", "stride", stride, 2), padding,
                  _expand("conv2d", "dilation", dilation, 2))
    return forward(x, weight, bias, g, groups)


def _check(x, weight, bias, groups):
    arrays = [a for a in (x, weight, bias) if a is not None]
    for a in arrays:
        if not isinstance(a, CudaArray):
            raise TypeError(f"the cuda convolution takes CudaArrays, got {type(a).__name__}: "
                            "move every operand to the device first")
    if x.ndim != 4 or weight.ndim != 4:
        raise RuntimeError(f"the cuda conv2d expects a 4-D input (N, C, H, W) and a 4-D weight "
                           f"(O, C/groups, kH, kW), got input {list(x.shape)} and weight "
                           f"{list(weight.shape)}")
    if weight.shape[0] % groups or x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have "
                           f"{weight.shape[1] * groups} channels and out_channels divisible by "
                           f"{groups}")
    if any(a.dtype != x.dtype for a in arrays) or x.dtype.kind != "f":
        raise RuntimeError(f"the cuda conv2d needs one floating dtype for input, weight and bias, "
                           f"got {[str(a.dtype) for a in arrays]}: convert them, e.g. "
                           "weight.to(input.dtype)")
