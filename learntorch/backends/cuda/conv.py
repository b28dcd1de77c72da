"""2-D convolution on the GPU: im2col and col2im kernels around the tiled matmul.

The convolution is the CPU's (``nn/_functional/conv.py``, pictures in
``nn/_functional/im2col.py``): copy every window of the image into a column
of a matrix (*im2col*), then one batched matrix product with the weight does
every dot product of every window at once -- on the GPU with the shared-
memory tiled kernel of ``matmul.py``.  Backward is two more products and the
adjoint of im2col, *col2im*, which adds every entry of a column-gradient back
to the pixel it was copied from.

Shapes (G = groups, Cg = C/G, L = Ho*Wo)::

    cols  = im2col(x)              (N, C, kh, kw, Ho, Wo) = (N, G, Cg*kh*kw, L)
    out   = W (G, O/G, Cg*kh*kw) @ cols          -> (N, G, O/G, L) = (N, O, Ho, Wo)
    dW    = sum over n of grad @ cols^T          (O, Cg, kh, kw)
    dx    = col2im(W^T @ grad)                   (N, C, H, W)
    dbias = grad summed over N, Ho, Wo           (O,)

Window geometry is torch's, as ``Geometry`` (``nn/_functional/im2col.py``)
describes it: window (oh, ow) starts at pixel (oh*sh - ph, ow*sw - pw) and
tap (i, j) of it is ``i*dh`` rows and ``j*dw`` columns further; taps outside
the image read zero padding.  Only the padding *before* the image matters
here: a tap past the bottom/right edge is simply outside (that is also how
'same' padding's odd extra pixel after the image comes for free).
"""
import functools

import numba
import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda
from .matmul import matmul

cuda = numba_cuda()


@cuda.jit
def im2col_kernel(x, cols, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, total):
    """cols[n, c, i, j, oh, ow] = x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw] (0 outside).

    Thread layout: one thread per element of ``cols`` -- thread ``k = cuda.grid(1)``
    writes element k of the flat, C-contiguous (N, C, kh, kw, Ho, Wo) ``cols``
    and reads one pixel of the flat, C-contiguous (N, C, H, W) ``x``.  Many
    threads read the same pixel (that is the point of im2col), none write the
    same element: no synchronisation.
    """
    k = cuda.grid(1)
    if k >= total:
        return
    # unravel k into (n, c, i, j, oh, ow), last index fastest
    ow = k % Wo
    r = k // Wo
    oh = r % Ho
    r //= Ho
    j = r % kw
    r //= kw
    i = r % kh
    r //= kh
    c = r % C
    n = r // C
    h = oh * sh - ph + i * dh
    w = ow * sw - pw + j * dw
    if 0 <= h < H and 0 <= w < W:
        cols[k] = x[((n * C + c) * H + h) * W + w]
    else:
        cols[k] = 0


@functools.lru_cache(maxsize=None)
def col2im_kernel(dtype):
    """The col2im kernel for ``dtype`` (its running sum is kept in that dtype, as the CPU's)."""
    zero = numba.from_dtype(dtype)(0)

    @cuda.jit
    def col2im(cols, x, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, total):
        """x[n, c, h, w] = sum of the entries of ``cols`` that im2col copied from that pixel.

        Thread layout: one thread per *pixel* -- thread ``k = cuda.grid(1)`` owns
        element k of the flat (N, C, H, W) ``x``.  This is the *gather* form of
        the scatter-add: instead of every column entry adding itself into its
        pixel (several entries share a pixel where windows overlap, so that
        would need ``cuda.atomic.add``), every pixel collects the entries that
        came from it and writes its own element once.  No atomics, and the
        result does not depend on the order the GPU runs threads in.

        Which entries came from pixel (h, w)?  Tap (i, j) of window (oh, ow)
        lands on it when oh*sh - ph + i*dh == h, i.e. oh = (h + ph - i*dh) / sh,
        which must be a whole number in [0, Ho) -- likewise for ow.
        """
        k = cuda.grid(1)
        if k >= total:
            return
        w = k % W
        r = k // W
        h = r % H
        r //= H
        c = r % C
        n = r // C
        acc = zero
        for i in range(kh):
            top = h + ph - i * dh          # where window row 0 must start for tap i to hit h
            if top < 0 or top % sh != 0:
                continue
            oh = top // sh
            if oh >= Ho:
                continue
            for j in range(kw):
                left = w + pw - j * dw
                if left < 0 or left % sw != 0:
                    continue
                ow = left // sw
                if ow >= Wo:
                    continue
                acc += cols[(((((n * C + c) * kh + i) * kw + j) * Ho + oh) * Wo + ow)]
        x[k] = acc

    return col2im


def _contiguous(a):
    return a if a._is_c_contiguous() else a.copy()


def _geometry_args(g, c):
    (h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ho, wo) = (
        g.size, g.kernel, g.stride, g.pad, g.dilation, g.out)
    return c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo


def im2col(x, g):
    """Every window of the (N, C, H, W) CudaArray ``x``: a new (N, C, kh, kw, Ho, Wo) CudaArray.

    ``g`` is a ``Geometry`` (``nn/_functional/im2col.py``): size, kernel,
    stride, pad (before the image), dilation and out, each (height, width).
    """
    x = _contiguous(x)
    n, c = x.shape[:2]
    cols = CudaArray.empty((n, c) + g.kernel + g.out, x.dtype)
    if cols.size:
        launch(im2col_kernel, cols.size)(x._flat(), cols._flat(), *_geometry_args(g, c),
                                         cols.size)
    return cols


def col2im(cols, g):
    """The adjoint of ``im2col``: (N, C, kh, kw, Ho, Wo) -> a new (N, C, H, W) CudaArray."""
    cols = _contiguous(cols)
    n, c = cols.shape[:2]
    x = CudaArray.empty((n, c) + g.size, cols.dtype)
    if x.size:
        launch(col2im_kernel(cols.dtype), x.size)(cols._flat(), x._flat(),
                                                  *_geometry_args(g, c), x.size)
    return x


# ---------------------------------------------------------------- the convolution
def forward(x, weight, bias, g, groups):
    """The (N, O, Ho, Wo) convolution of (N, C, H, W) ``x`` with (O, C/groups, kh, kw) ``weight``.

    ``bias``: an (O,) CudaArray or None.  Arguments are already checked
    (``F.conv2d`` does it); every array is a CudaArray of one float dtype.
    """
    n, o = x.shape[0], weight.shape[0]
    rows, pixels = int(np.prod(weight.shape[1:])), g.out[0] * g.out[1]   # Cg*kh*kw, L
    cols = im2col(x, g).reshape(n, groups, rows, pixels)
    wm = _contiguous(weight).reshape(groups, o // groups, rows)
    out = matmul(wm, cols).reshape((n, o) + g.out)          # (N, G, O/G, L) is (N, O, Ho, Wo)
    if bias is not None:
        np.add(out, bias.reshape(o, 1, 1), out=out)           # out is a fresh array: in place
    return out


def backward(grad, x, weight, g, groups, needs_input_grad=(True, True, True)):
    """(dx, dweight, dbias) of ``forward`` for the upstream (N, O, Ho, Wo) ``grad``.

    An entry is None where ``needs_input_grad`` says it is not wanted.
    """
    n, c = x.shape[:2]
    o = weight.shape[0]
    rows, pixels = int(np.prod(weight.shape[1:])), g.out[0] * g.out[1]
    g4 = _contiguous(grad).reshape(n, groups, o // groups, pixels)
    need_x, need_w, need_b = needs_input_grad[:3]
    gx = gw = gb = None
    if need_w:
        cols = im2col(x, g).reshape(n, groups, rows, pixels)
        # one (O/G, Cg*kh*kw) product per image, summed over the batch
        gw = np.sum(matmul(g4, cols.swapaxes(-1, -2)), axis=0).reshape(weight.shape)
    if need_x:
        wm = _contiguous(weight).reshape(groups, o // groups, rows)
        dcols = matmul(wm.swapaxes(-1, -2), g4)                # (N, G, Cg*kh*kw, L)
        gx = col2im(dcols.reshape((n, c) + g.kernel + g.out), g)
    if need_b:
        gb = np.sum(g4, axis=(0, 3)).reshape(o)
    return gx, gw, gb


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
