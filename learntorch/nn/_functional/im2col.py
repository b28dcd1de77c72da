"""im2col: turn a sliding-window operation into one matrix product.

A 2-D convolution slides a small kernel over the image and, at every stop,
takes a dot product between the kernel and the patch under it.  Written as
loops that is six nested ``for``s -- slow in Python.  The trick that every
CPU and GPU library uses is to *copy every patch into a column of a matrix*
(im2col = "image to columns"); then all the dot products of all the stops are
a single matrix product, which BLAS runs at full speed.

One channel, a 3x3 image, a 2x2 kernel, stride 1 (so 2x2 stops)::

    image          patches (one per output pixel)     cols: one column per stop
    a b c          [a b]  [b c]  [d e]  [e f]          a b d e     <- kernel (0, 0)
    d e f          [d e]  [e f]  [g h]  [h i]          b c e f     <- kernel (0, 1)
    g h i                                              d e g h     <- kernel (1, 0)
                                                       e f h i     <- kernel (1, 1)

    out (1 x 4) = weight (1 x 4: w00 w01 w10 w11) @ cols (4 x 4)

With C channels the rows are (channel, kernel row, kernel column) -- C*kh*kw
of them -- and every image of a batch of N gets its own matrix: ``im2col``
returns shape ``(N, C, kh, kw, Ho, Wo)``, which flattened is a stack of N
(C*kh*kw, Ho*Wo) matrices.  The convolution of the whole batch is then one
batched matmul, ``weight (O, C*kh*kw) @ cols (N, C*kh*kw, Ho*Wo)``, whose
result (N, O, Ho*Wo) already is the (N, O, Ho, Wo) output: no reordering.

How the copy is made: ``windows`` does not copy anything.  It describes the
patches as a strided *view* of the (padded) image -- a 6-D array whose strides
step through the image memory: moving one output column moves ``stride``
pixels, moving one kernel column moves ``dilation`` pixels.  Only
``np.ascontiguousarray`` then copies the view into the matrix, in one pass.

The backward of a gather is a scatter-*add*: ``col2im`` sends every entry of
a gradient matrix back to the pixel it was copied from, adding where patches
overlap (pixel ``e`` above sits in all four patches, so it receives four
contributions).  ``Im2col`` and ``Col2im`` below are that pair as autograd
Functions: each one's backward is the other, so they can be differentiated
any number of times (double backward of a convolution uses them).

Padding is part of the geometry: the image is placed inside a zero (or -inf,
for max pooling) border, ``pad`` pixels on the top/left, and as many on the
bottom/right as the windows reach (torch's 'same' padding puts the odd extra
pixel there; pooling's ceil_mode lets the last window hang over the edge).
"""
import numpy as np

from ...autograd.function import Function
from ...backends.numba_cpu import tuning
from ...backends.numba_cpu.loader import kernels, layer_kernel_serves, use_threads
from ...ops._helpers import recording_gradient_graph, wrap

_as_strided = np.lib.stride_tricks.as_strided

#: smallest gradient matrix (elements) for which ``col2im`` runs the Numba kernel
#: (``backends/numba_cpu/col2im_kernels.py``).  Measured at float32, 3x3 windows, one
#: thread on a shared 2-core machine (numpy / kernel, microseconds): (32, 1, 28, 28):
#: 125 / 50, (32, 8, 14, 14): 350 / 205.  Smaller ones stay on numpy so that toys never
#: import Numba (~0.5 s, once).
COL2IM_KERNEL_MIN_SIZE = tuning.threshold("layer_min_sizes", "col2im")  # (tuning.json)
#: one-thread cost of the kernel per float32 entry of ``cols`` (3x3 windows, 2^18-2^20
#: entries): it picks the call's thread count (``loader.use_threads``)
COL2IM_NS_PER_ELEMENT = 0.3


class Geometry:
    """Where the windows of a 2-D sliding-window op lie; all tuples are (height, width).

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

    @property
    def padded(self):
        """True when the image must be copied into a border first."""
        return self.pad != (0, 0) or self.buffer != self.size


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


def padded(x, g, fill=0, out=None):
    """``x`` (N, C, H, W) inside a border of ``fill`` as ``g`` asks; ``x`` itself if none.

    ``out``: an array of the padded shape to fill instead of a new one.
    """
    if not g.padded:
        return x
    n, c = x.shape[:2]
    (top, left), (h, w) = g.pad, g.size
    buf = np.empty((n, c) + g.buffer, dtype=x.dtype) if out is None else out
    buf.fill(fill)
    buf[:, :, top:top + h, left:left + w] = x
    return buf


def windows(buf, g):
    """A read-only strided view (N, C, kh, kw, Ho, Wo) of every window of ``buf``: no copy.

    ``view[n, c, i, j, oh, ow]`` is pixel ``(oh*stride + i*dilation,
    ow*stride + j*dilation)`` of image ``n``, channel ``c``.
    """
    sn, sc, sh, sw = buf.strides
    (kh, kw), (ho, wo) = g.kernel, g.out
    (st_h, st_w), (dl_h, dl_w) = g.stride, g.dilation
    return _as_strided(buf, shape=buf.shape[:2] + (kh, kw, ho, wo),
                       strides=(sn, sc, sh * dl_h, sw * dl_w, sh * st_h, sw * st_w),
                       writeable=False)


def im2col(x, g, out=None, pad_out=None):
    """Every window of ``x`` (N, C, H, W), copied into a C-contiguous (N, C, kh, kw, Ho, Wo).

    ``out``/``pad_out``: arrays to write the result / the padded image into
    instead of new ones (the convolution passes reused scratch arrays).
    """
    view = windows(padded(x, g, out=pad_out), g)
    if out is None:
        return np.ascontiguousarray(view)
    np.copyto(out, view)
    return out


def col2im(cols, g):
    """The adjoint of ``im2col``: add every entry of ``cols`` (N, C, kh, kw, Ho, Wo) back
    to the pixel it came from; returns (N, C, H, W), C-contiguous.

    Large float arrays go to the Numba kernel, which fills each plane in one go
    (see ``col2im_kernels.py``).  numpy does one strided add per kernel offset
    (kh*kw of them, each over a whole (N, C, Ho, Wo) slab), so the Python loop
    stays short whatever the image size.
    """
    n, c, kh, kw = cols.shape[:4]
    if layer_kernel_serves(cols, COL2IM_KERNEL_MIN_SIZE):
        planes = np.ascontiguousarray(cols).reshape((n * c,) + cols.shape[2:])
        dx = np.empty((n, c) + g.size, dtype=cols.dtype)
        module = kernels("col2im_kernels")
        use_threads(planes.size * COL2IM_NS_PER_ELEMENT * (planes.itemsize / 4))
        module.col2im(planes, kh, kw, *g.stride, *g.pad, *g.dilation,
                                         dx.reshape((n * c,) + g.size))
        return dx
    buf = np.zeros((n, c) + g.buffer, dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            add_at_tap(buf, g, i, j, cols[:, :, i, j])
    return crop(buf, g)


def add_at_tap(buf, g, i, j, values):
    """``buf`` (the padded image) += ``values`` (N, C, Ho, Wo) at tap (i, j) of every window.

    The pixels under tap (i, j) of all windows form a strided slice of the
    image; no two windows put that tap on the same pixel, which is what makes
    ``+=`` on the slice correct.
    """
    (st_h, st_w), (dl_h, dl_w), (ho, wo) = g.stride, g.dilation, g.out
    buf[:, :, i * dl_h:i * dl_h + st_h * (ho - 1) + 1:st_h,
        j * dl_w:j * dl_w + st_w * (wo - 1) + 1:st_w] += values


def crop(buf, g):
    """The image part of a padded (N, C, Hb, Wb) buffer, as a C-contiguous array."""
    if not g.padded:
        return buf
    (top, left), (h, w) = g.pad, g.size
    return np.ascontiguousarray(buf[:, :, top:top + h, left:left + w])


def im2col_on_device(a, g):
    """``im2col`` where ``a`` lives: the GPU kernel (``backends/cuda/conv.py``) for a cuda array."""
    if isinstance(a, np.ndarray):
        return im2col(a, g)
    from ...backends.cuda import conv
    return conv.im2col(a, g)


def col2im_on_device(cols, g):
    """``col2im`` where ``cols`` lives: the GPU kernel for a cuda array."""
    if isinstance(cols, np.ndarray):
        return col2im(cols, g)
    from ...backends.cuda import conv
    return conv.col2im(cols, g)


class Im2col(Function):
    """``cols = im2col(x)`` as a differentiable op: its backward is ``Col2im``.

    The convolution's own backward uses this pair only when the gradient
    itself must be differentiable (``create_graph=True``); the fast path works
    on arrays directly.  Both run on the cpu and on cuda (``*_on_device``).
    """

    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, g):
        ctx.geometry = g
        return wrap(im2col_on_device(x._data, g))

    @staticmethod
    def backward(ctx, grad):
        if recording_gradient_graph():
            return Col2im.apply(grad, ctx.geometry), None
        return wrap(col2im_on_device(grad._data, ctx.geometry)), None


class Col2im(Function):
    """``x = col2im(cols)`` as a differentiable op: its backward is ``Im2col``."""

    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, g):
        ctx.geometry = g
        return wrap(col2im_on_device(cols._data, g))

    @staticmethod
    def backward(ctx, grad):
        if recording_gradient_graph():
            return Im2col.apply(grad, ctx.geometry), None
        return wrap(im2col_on_device(grad._data, ctx.geometry)), None
