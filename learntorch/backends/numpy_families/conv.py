"""Convolution as im2col + one matrix product: the conv family of the backend contract.

im2col ("image to columns") turns a sliding-window operation into one matrix
product.  A 2-D convolution slides a small kernel over the image and, at every
stop, takes a dot product between the kernel and the patch under it.  Written as
loops that is six nested ``for``s -- slow in Python.  The trick that every CPU and
GPU library uses is to *copy every patch into a column of a matrix*; then all the
dot products of all the stops are a single matrix product, which BLAS runs at full
speed.

One channel, a 3x3 image, a 2x2 kernel, stride 1 (so 2x2 stops)::

    image          patches (one per output pixel)     cols: one column per stop
    a b c          [a b]  [b c]  [d e]  [e f]          a b d e     <- kernel (0, 0)
    d e f          [d e]  [e f]  [g h]  [h i]          b c e f     <- kernel (0, 1)
    g h i                                              d e g h     <- kernel (1, 0)
                                                       e f h i     <- kernel (1, 1)

    out (1 x 4) = weight (1 x 4: w00 w01 w10 w11) @ cols (4 x 4)

With C channels the rows are (channel, kernel row, kernel column) -- C*kh*kw of
them -- and every image of a batch of N gets its own matrix: ``im2col`` returns
shape ``(N, C, kh, kw, Ho, Wo)``, which flattened is a stack of N (C*kh*kw, Ho*Wo)
matrices.  The convolution of the whole batch is then one batched matmul,
``weight (O, C*kh*kw) @ cols (N, C*kh*kw, Ho*Wo)``, whose result (N, O, Ho*Wo)
already is the (N, O, Ho, Wo) output.  With ``groups`` the channels are cut into
independent slices -- rows of ``cols`` and of the weight -- and matmul broadcasts
over them: (G, O/G, Cg*kh*kw) @ (N, G, Cg*kh*kw, Ho*Wo).

How the copy is made: ``windows`` does not copy anything.  It describes the patches
as a strided *view* of the (padded) image -- a 6-D array whose strides step through
the image memory: moving one output column moves ``stride`` pixels, moving one
kernel column moves ``dilation`` pixels.  Only ``np.ascontiguousarray`` then copies
the view into the matrix, in one pass.

The backward of a gather is a scatter-*add*: ``col2im`` sends every entry of a
gradient matrix back to the pixel it was copied from, adding where patches overlap
(pixel ``e`` above sits in all four patches, so it receives four contributions).
With g = dLoss/dout, the forward being the product ``W @ cols``, the matmul rule
gives the two gradients::

    conv2d_backward_input:   dx = col2im(W^T @ g)              (also: conv_transpose2d)
    conv2d_backward_weight:  dW = sum over images of g @ im2col(x)^T

Padding is part of the geometry (``backends/geometry.py``): the image is placed
inside a zero (or -inf, for max pooling) border, ``pad`` pixels on the top/left and
as many on the bottom/right as the windows reach.

Every method takes C-contiguous-or-not (N, C, H, W) arrays and a ``Geometry``; a
device array is handed to its own backend (the CUDA kernels of ``backends/cuda/
conv.py``).  The Numba backend replaces ``col2im`` with a kernel and the forward
products with a faster layout (``numba_cpu/conv_backend.py``).
"""
import numpy as np

from .. import reference as _reference

_as_strided = np.lib.stride_tricks.as_strided


class ConvFamily:
    def im2col(self, x, g):
        """Every window of ``x`` (N, C, H, W): a C-contiguous (N, C, kh, kw, Ho, Wo) copy
        (taps in the padding read 0)."""
        device = _reference.on_device(x)
        if device is not None:
            return device.im2col(x, g)
        return np.ascontiguousarray(windows(padded(x, g), g))

    def col2im(self, cols, g):
        """The adjoint of ``im2col``: add every entry of ``cols`` (N, C, kh, kw, Ho, Wo)
        back to the pixel it came from; returns (N, C, H, W), C-contiguous.

        One strided add per kernel tap (kh*kw of them, each over a whole (N, C, Ho,
        Wo) slab), so the Python loop stays short whatever the image size.
        """
        device = _reference.on_device(cols)
        if device is not None:
            return device.col2im(cols, g)
        n, c, kh, kw = cols.shape[:4]
        buf = np.zeros((n, c) + g.buffer, dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                add_at_tap(buf, g, i, j, cols[:, :, i, j])
        return crop(buf, g)

    def conv2d(self, x, weight, bias, g, groups):
        """The (N, O, Ho, Wo) convolution of ``x`` (N, C, H, W) with ``weight``
        (O, C/groups, kh, kw), plus ``bias`` (O,) when it is not None."""
        device = _reference.on_device(x)
        if device is not None:
            return device.conv2d(x, weight, bias, g, groups)
        n, o = x.shape[0], weight.shape[0]
        rows, pixels = weight[0].size, g.out[0] * g.out[1]         # Cg*kh*kw, Ho*Wo
        cols = self.im2col(x, g).reshape(n, groups, rows, pixels)
        out = self.matmul(weight.reshape(groups, o // groups, rows), cols)  # (N, G, O/G, L)
        out = out.reshape((n, o) + g.out)
        if bias is not None:
            out += bias.reshape(o, 1, 1)  # out is a new array: add in place
        return out

    def conv2d_backward_input(self, grad, weight, g, groups):
        """dLoss/dx of ``conv2d`` for the gradient ``grad`` (N, O, Ho, Wo) of its output:
        col2im(W^T @ grad), an (N, C, H, W) array (H, W = ``g.size``).

        This is also the transposed convolution (``F.conv_transpose2d``): the adjoint
        of the convolution, which spreads every input pixel over a window of outputs.
        """
        device = _reference.on_device(grad)
        if device is not None:
            return device.conv2d_backward_input(grad, weight, g, groups)
        n, o = grad.shape[:2]
        rows, pixels = weight[0].size, g.out[0] * g.out[1]
        wm = weight.reshape(groups, o // groups, rows)
        # (G, Cg*kh*kw, O/G) @ (N, G, O/G, L) -> (N, G, Cg*kh*kw, L): the gradient of cols
        dcols = self.matmul(wm.swapaxes(-1, -2), grad.reshape(n, groups, o // groups, pixels))
        return self.col2im(dcols.reshape((n, weight.shape[1] * groups) + g.kernel + g.out), g)

    def conv2d_backward_weight(self, grad, x, g, groups):
        """dLoss/dweight of ``conv2d``: grad @ im2col(x)^T summed over the images,
        an (O, C/groups, kh, kw) array."""
        device = _reference.on_device(grad)
        if device is not None:
            return device.conv2d_backward_weight(grad, x, g, groups)
        n, o = grad.shape[:2]
        cg = x.shape[1] // groups
        rows, pixels = cg * g.kernel[0] * g.kernel[1], g.out[0] * g.out[1]
        cols = self.im2col(x, g).reshape(n, groups, rows, pixels)
        per_image = self.matmul(grad.reshape(n, groups, o // groups, pixels),
                                cols.swapaxes(-1, -2))               # (N, G, O/G, Cg*kh*kw)
        return self.sum(per_image, (0,), False).reshape((o, cg) + g.kernel)


# ---------------------------------------------------------------- the window copies
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
