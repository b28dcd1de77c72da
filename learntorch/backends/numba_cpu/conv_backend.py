"""The conv family on the Numba backend: the same products as the numpy reference
(``numpy_families/conv.py``), laid out for speed, and col2im as a compiled kernel.

**One product per group for the whole batch.**  The reference multiplies the weight with
each image's window matrix (a batched matmul over N).  BLAS is far faster on one large
product than on N small ones (the course's second conv: ~95 us against ~155 us), so
here the windows of all images sit side by side, channel-major::

    cols (G, Cg*kh*kw, N*Ho*Wo)        every window of every image, one per column
    out  = W (G, O/G, Cg*kh*kw) @ cols  -> (O, N, Ho*Wo), reordered to (N, O, Ho, Wo)

(the bias is added by the copy that reorders it), and the weight gradient is
``g (G, O/G, N*Ho*Wo) @ cols^T`` in one product too.  The windows are copied straight
into that order, into scratch arrays reused from call to call (``workspace.py``): on
the course's CNN that saved ~2 ms of a 5 ms training step in page faults.  The sums
run in another order than the reference's, so the two agree within float rounding.

**The window copy** (im2col, ``im2col_kernels.py``) and **col2im** (the input
gradient's scatter-add, ``col2im_kernels.py``) run compiled for large float arrays: the
copy of (32, 8, 14, 14) float32 with 3x3 windows takes ~135 us on one thread against
numpy's ~194 us for the padded image and its strided copy, col2im ~120 us against ~350
us.  Other dtypes and small arrays take numpy's copy.  The input gradient's product
itself stays the reference's (one batched product per image, then col2im).
"""
import numpy as np

from ..numpy_families.conv import padded, windows
from .layer_dispatch import LayerKernels
from .loader import kernels
from .workspace import scratch


class NumbaConv(LayerKernels):
    def conv2d(self, x, weight, bias, g, groups):
        if type(x) is not np.ndarray:
            return super().conv2d(x, weight, bias, g, groups)
        n, o = x.shape[0], weight.shape[0]
        pixels = g.out[0] * g.out[1]
        cols = self._window_columns(x, g, groups)                  # (G, Cg*kh*kw, N*L)
        wm = weight.reshape(groups, o // groups, weight[0].size)   # (G, O/G, Cg*kh*kw)
        # sizes spelled out: numpy cannot infer a "-1" when another size is 0
        by_channel = self.matmul(wm, cols).reshape(o, n, pixels)
        out = np.empty((n, o, pixels), dtype=by_channel.dtype)
        if bias is not None:  # the bias is added by the copy that reorders the result
            np.add(by_channel.transpose(1, 0, 2), bias[:, None], out=out)
        else:
            np.copyto(out, by_channel.transpose(1, 0, 2))
        return out.reshape((n, o) + g.out)

    def conv2d_backward_weight(self, grad, x, g, groups):
        if type(grad) is not np.ndarray:
            return super().conv2d_backward_weight(grad, x, g, groups)
        n, o = grad.shape[:2]
        pixels = g.out[0] * g.out[1]
        cols = self._window_columns(x, g, groups)                  # (G, Cg*kh*kw, N*L)
        # dW = g @ cols^T over the whole batch at once: g reordered to (G, O/G, N*L)
        by_channel = np.ascontiguousarray(
            grad.reshape(n, groups, o // groups, pixels).transpose(1, 2, 0, 3)).reshape(
            groups, o // groups, n * pixels)
        # computed as (cols @ g^T)^T: the same sums, but BLAS shares a product with few
        # output rows (O/G = 16) and a long inner dimension badly between threads, and
        # the window rows (Cg*kh*kw = 72) are the longer side -- 290 -> 147 us on the
        # course CNN's second layer
        gw = self.matmul(cols, by_channel.swapaxes(-1, -2)).swapaxes(-1, -2)
        return gw.reshape((o, x.shape[1] // groups) + g.kernel)

    def col2im(self, cols, g):
        if not self._layer_kernel_serves("col2im", cols):
            return super().col2im(cols, g)
        n, c, kh, kw = cols.shape[:4]
        planes = np.ascontiguousarray(cols).reshape((n * c,) + cols.shape[2:])
        dx = np.empty((n, c) + g.size, dtype=cols.dtype)
        module = kernels("col2im_kernels")
        self._layer_threads("col2im", planes)
        module.col2im(planes, kh, kw, *g.stride, *g.pad, *g.dilation,
                      dx.reshape((n * c,) + g.size))
        return dx

    def _window_columns(self, a, g, groups):
        """im2col of ``a`` laid out channel-major: (G, Cg*kh*kw, N*Ho*Wo), one column per
        window of every image, so that one matrix product per group covers the whole batch.

        The windows are copied straight into that order (no second reordering copy) in a
        reused scratch array: the result never escapes the caller.
        """
        n, c = a.shape[:2]
        by_row = scratch("conv.cols", (c,) + g.kernel + (n,) + g.out, a.dtype)
        if self._layer_kernel_serves("im2col", by_row):
            module = kernels("im2col_kernels")
            self._layer_threads("im2col", by_row)
            module.im2col(np.ascontiguousarray(a), *g.kernel, *g.stride, *g.pad, *g.dilation,
                          by_row)
        else:
            pad = scratch("conv.padded", (n, c) + g.buffer, a.dtype) if g.padded else None
            np.copyto(by_row.transpose(3, 0, 1, 2, 4, 5), windows(padded(a, g, out=pad), g))
        rows = (c // groups) * g.kernel[0] * g.kernel[1]
        return by_row.reshape(groups, rows, n * g.out[0] * g.out[1])  # sizes spelled out: may be 0
