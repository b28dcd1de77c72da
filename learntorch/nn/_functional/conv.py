"""``F.conv1d`` and ``F.conv2d``: convolution as im2col + matrix products.

Forward, for an input x (N, C, H, W) and a weight (O, C/groups, kh, kw)::

    cols = im2col(x)                          (C*kh*kw, N*Ho*Wo)   every window of every image,
                                                                   one per column
    out  = weight.reshape(O, C*kh*kw) @ cols  (O, N*Ho*Wo)         one large matmul (BLAS)
         + bias, reordered to (N, O, Ho, Wo)

(see ``im2col.py`` for the picture).  The columns of all images sit side by side
so that one product serves the whole batch: BLAS is far faster on one large
product than on N small ones (the course's second conv: ~95 us against ~155 us).
With ``groups`` > 1 the channels are cut into ``groups`` independent slices --
rows of ``cols`` and of the weight -- and numpy's matmul broadcasts over them:
(G, O/G, Cg*kh*kw) @ (G, Cg*kh*kw, N*L).

Backward, with g = dLoss/dout: the forward is the product ``W @ cols``, so by the
matmul rule

    dW    = g @ cols^T                        (O, C*kh*kw) -- g as (O, N*Ho*Wo), cols copied
                                                              again from x
    dcols = W^T @ g                           (N, C*kh*kw, Ho*Wo)
    dx    = col2im(dcols)                     every window's gradient added back to its pixels
    db    = g summed over N, Ho, Wo

dcols is as large as forward's cols (kh*kw times x): one batched product
makes all of it, then one col2im pass (a Numba kernel for large float arrays)
adds it back into the image.  The large forward temporaries -- padded image,
cols -- are scratch arrays reused from call to call (``workspace.py``); on the
course's CNN that saved ~2 ms of a 5 ms training step in page faults.

A 1-D convolution is the same thing on images of height 1: (N, C, L) is
viewed as (N, C, 1, L) and the kernel (O, C, k) as (O, C, 1, k), no copy.
"""
import numbers

import numpy as np

from ... import backends
from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops._helpers import check_same_device, recording_gradient_graph, wrap
from ...ops.einsum import einsum
from .im2col import Col2im, Geometry, Im2col, col2im, im2col, output_size
from .workspace import scratch


class Convolution(Function):
    """One recorded convolution (1-D or 2-D); ``forward`` receives checked arguments."""

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, geometry, groups):
        a, w = _as_4d(x._data), _as_4d(weight._data)
        n, o = a.shape[0], w.shape[0]
        ho, wo = geometry.out
        # sizes spelled out: numpy cannot infer a "-1" when another size is 0
        rows, pixels = w[0].size, ho * wo                              # Cg*kh*kw, Ho*Wo
        if _on_cuda(a):  # the GPU kernels of backends/cuda/conv.py
            out = _cuda_conv().forward(a, w, None, geometry, groups).reshape(n, o, pixels)
            if bias is not None:
                out += bias._data[:, None]  # out is a fresh result: add in place
        else:
            cols = _window_columns(a, geometry, groups)                 # (G, Cg*kh*kw, N*L)
            wm = w.reshape(groups, o // groups, rows)                   # (G, O/G, Cg*kh*kw)
            # one product per group for the whole batch (a few large BLAS calls, not one
            # small one per image); its (O, N, L) result is turned into (N, O, L) below
            by_channel = np.asarray(backends.current.matmul(wm, cols)).reshape(o, n, pixels)
            out = np.empty((n, o, pixels), dtype=by_channel.dtype)
            if bias is not None:  # the bias is added by the copy that reorders the result
                np.add(by_channel.transpose(1, 0, 2), bias._data[:, None], out=out)
            else:
                np.copyto(out, by_channel.transpose(1, 0, 2))
        out = out.reshape(n, o, ho, wo)
        ctx.geometry, ctx.groups = geometry, groups
        # like torch, keep the input, not its kh*kw times larger im2col matrix: backward
        # copies the windows again (cheap next to the products), and memory stays small
        ctx.save_for_backward(x, weight)
        return wrap(out if x.ndim == 4 else out.reshape(n, o, wo))  # 1-D: drop the unit height

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if recording_gradient_graph():
            return _backward_from_ops(ctx, grad, x, weight) + (None, None)
        g, groups = ctx.geometry, ctx.groups
        n, c = x.shape[:2]
        o = weight.shape[0]
        w = _as_4d(weight._data)
        if _on_cuda(w):
            grads = _cuda_conv().backward(grad._data.reshape((n, o) + g.out), _as_4d(x._data), w,
                                          g, groups, (need_x, need_w, need_b))
            shapes = (x.shape, weight.shape, (o,))
            return tuple(None if a is None else wrap(a.reshape(shape))
                         for a, shape in zip(grads, shapes)) + (None, None)
        # the gradient as the (N, G, O/G, L) stack of forward's products
        g4 = grad._data.reshape(n, groups, o // groups, g.out[0] * g.out[1])
        matmul = backends.current.matmul
        gx = gw = gb = None
        if need_w:
            cols = _window_columns(_as_4d(x._data), g, groups)     # (G, Cg*kh*kw, N*L)
            # dW = g @ cols^T over the whole batch at once: g reordered to (G, O/G, N*L)
            by_channel = np.ascontiguousarray(g4.transpose(1, 2, 0, 3)).reshape(
                groups, o // groups, n * g4.shape[-1])
            gw = wrap(np.asarray(matmul(by_channel, cols.swapaxes(-1, -2))).reshape(
                weight.shape))
        if need_x:
            gx = wrap(_input_gradient(w, g4, g, groups, n, c).reshape(x.shape))
        if need_b:
            gb = wrap(g4.sum(axis=(0, 3)).reshape(o))
        return gx, gw, gb, None, None


def _window_columns(a, g, groups):
    """im2col of ``a`` laid out channel-major: (G, Cg*kh*kw, N*Ho*Wo), one column per
    window of every image, so that one matrix product per group covers the whole batch.

    The windows are copied straight into that order (no second reordering copy) in
    reused scratch arrays (see workspace.py): the result never escapes the caller.
    """
    n, c = a.shape[:2]
    pad = scratch("conv.padded", (n, c) + g.buffer, a.dtype) if g.padded else None
    by_row = scratch("conv.cols", (c,) + g.kernel + (n,) + g.out, a.dtype)
    im2col(a, g, out=by_row.transpose(3, 0, 1, 2, 4, 5), pad_out=pad)  # (N, C, kh, kw, ...)
    rows = (c // groups) * g.kernel[0] * g.kernel[1]
    return by_row.reshape(groups, rows, n * g.out[0] * g.out[1])  # sizes spelled out: may be 0


def _input_gradient(w, g4, g, groups, n, c):
    """dx = col2im(W^T @ g): the gradient of every window, added back to its pixels.

    (G, Cg*kh*kw, O/G) @ (N, G, O/G, L) -> (N, G, Cg*kh*kw, L) is the gradient
    of cols, (N, C, kh, kw, Ho, Wo): one product per image (W^T is a view that
    BLAS reads transposed in place).  Taking the product one kernel tap at a
    time instead -- nine (Cg, O/G) @ (O/G, L) products per image, each added
    into a padded image at once -- needs less memory but, with numpy's strided
    adds, took ~1.3x as long on the course CNN's second layer.
    """
    o = w.shape[0]
    wm = w.reshape(groups, o // groups, w[0].size)
    dcols = np.asarray(backends.current.matmul(wm.swapaxes(-1, -2), g4))
    return col2im(dcols.reshape((n, c) + g.kernel + g.out), g)


def _backward_from_ops(ctx, grad, x, weight):
    """The same three rules built from differentiable ops (backward with create_graph=True),
    so that the gradient can itself be differentiated (a gradient penalty, Hessian products).

    The products are einsums rather than matmuls of transposed views: an einsum's
    result, and each of its gradients, comes out contiguous in its own letter
    order, so every reshape here and in the backward of this graph is a view.  A
    transposed operand would send its gradient back transposed, and reshaping that
    to the weight's or the gradient's shape needs a copy (which cuda tensors
    cannot make inside ``reshape`` yet).
    """
    g, groups = ctx.geometry, ctx.groups
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    n, c = x.shape[:2]
    o = weight.shape[0]
    rows, pixels = weight[0].numel(), g.out[0] * g.out[1]
    g4 = grad.reshape(n, groups, o // groups, pixels)        # n g o l: o this group's outputs
    gx = gw = gb = None
    if need_w:
        cols = Im2col.apply(x.reshape((n, c) + g.size), g).reshape(n, groups, rows, pixels)
        gw = einsum("ngol,ngrl->gor", g4, cols).reshape(weight.shape)    # dW = g @ cols^T
    if need_x:
        wm = weight.reshape(groups, o // groups, rows)
        dcols = einsum("gor,ngol->ngrl", wm, g4)                          # dcols = W^T @ g
        gx = Col2im.apply(dcols.reshape((n, c) + g.kernel + g.out), g).reshape(x.shape)
    if need_b:
        gb = grad.sum(dim=[d for d in range(grad.ndim) if d != 1])
    return gx, gw, gb


def _on_cuda(a):
    return not isinstance(a, np.ndarray)  # a device array (backends/cuda)


def _cuda_conv():
    from ...backends.cuda import conv
    return conv


def _as_4d(a):
    """A 1-D convolution's (N, C, L) array as (N, C, 1, L): a view, nothing copied."""
    return a if a.ndim == 4 else a.reshape(a.shape[:2] + (1,) + a.shape[2:])


# ---------------------------------------------------------------- the public functions
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution of ``input`` (N, C, H, W) or (C, H, W) with ``weight``
    (out_channels, C/groups, kH, kW), as ``torch.nn.functional.conv2d``."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of ``input`` (N, C, L) or (C, L) with ``weight``
    (out_channels, C/groups, k), as ``torch.nn.functional.conv1d``."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def _convolution(name, dims, input, weight, bias, stride, padding, dilation, groups):
    _check_types(name, input, weight, bias, groups)
    stride = _expand(name, "stride", stride, dims)
    dilation = _expand(name, "dilation", dilation, dims)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: {padding!r}; {name} takes 'valid' (no "
                               "padding), 'same' (output as large as the input) or numbers")
    else:
        padding = _expand(name, "padding", padding, dims)
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"non-positive stride is not supported (got stride={list(stride)})")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"non-positive dilation is not supported (got "
                           f"dilation={list(dilation)})")
    if not isinstance(padding, str) and any(p < 0 for p in padding):
        raise RuntimeError(f"negative padding is not supported (got padding={list(padding)}); "
                           "to crop the input, slice it first")
    if groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups})")
    if padding == "same" and any(s != 1 for s in stride):
        raise RuntimeError(f"padding='same' is not supported for strided convolutions (got "
                           f"stride={list(stride)}); use stride=1 or give the padding as numbers")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}")
    if weight.ndim != dims + 2:
        kernel = "kH, kW" if dims == 2 else "kL"
        raise RuntimeError(
            f"{name} expects a {dims + 2}-D weight (out_channels, in_channels/groups, {kernel}), "
            f"but got weight of size {list(weight.shape)}")
    if input.ndim == dims + 1:  # one unbatched sample: a batch of one, as torch does
        out = _convolution(name, dims, input.unsqueeze(0), weight, bias, stride, padding,
                           dilation, groups)
        return out.squeeze(0)
    _check_shapes(input, weight, bias, groups)
    _check_dtypes(name, input, weight, bias)
    check_same_device(input, weight, bias)
    geometry = _geometry(input, weight, stride, padding, dilation)
    return Convolution.apply(input, weight, bias, geometry, groups)


def _geometry(input, weight, stride, padding, dilation):
    """The windows of this convolution, in 2-D (a 1-D one is an image of height 1)."""
    size, kernel = tuple(input.shape[2:]), tuple(weight.shape[2:])
    if padding == "valid":
        padding = (0,) * len(size)
    if padding == "same":
        # total padding d*(k-1) keeps the size; an odd total puts the extra pixel after
        # the image (bottom/right), as torch does
        before = tuple(d * (k - 1) // 2 for k, d in zip(kernel, dilation))
        after = tuple(d * (k - 1) - b for k, d, b in zip(kernel, dilation, before))
    else:
        before = after = tuple(padding)
    padded = tuple(n + b + a for n, b, a in zip(size, before, after))
    reach = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(r > p for r, p in zip(reach, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, reach))}). Kernel size can't be greater than "
            f"actual input size (input of size {list(input.shape)}, weight of size "
            f"{list(weight.shape)}): use a larger input, more padding or a smaller kernel")
    out = tuple(output_size(n, k, s, d, b, a) for n, k, s, d, b, a
                in zip(size, kernel, stride, dilation, before, after))
    if len(size) == 1:  # 1-D: height 1, nothing to pad or slide vertically
        size, kernel, stride, dilation = (1,) + size, (1,) + kernel, (1,) + stride, (1,) + dilation
        before, out = (0,) + before, (1,) + out
    return Geometry(size, kernel, stride, dilation, before, out)


def _check_types(name, input, weight, bias, groups):
    for arg, what, pos in ((input, "input", 1), (weight, "weight", 2)):
        if not isinstance(arg, Tensor):
            raise TypeError(f"{name}(): argument '{what}' (position {pos}) must be Tensor, not "
                            f"{type(arg).__name__}; wrap data with torch.tensor(...)")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"{name}(): argument 'bias' (position 3) must be Tensor or None, not "
                        f"{type(bias).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(f"{name}(): argument 'groups' (position 7) must be int, not "
                        f"{type(groups).__name__}")


def _expand(name, what, value, dims):
    """An int, or a sequence of ``dims`` ints (or of one), as a tuple of ``dims`` ints."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * dims
    if isinstance(value, (tuple, list)) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        if len(value) == 1:
            return (int(value[0]),) * dims
        if len(value) == dims:
            return tuple(int(v) for v in value)
        raise RuntimeError(
            f"expected {what} to be a single integer value or a list of {dims} values to match "
            f"the convolution dimensions, but got {what}={list(value)}")
    raise TypeError(f"{name}(): argument '{what}' must be an int or a tuple of {dims} ints, not "
                    f"{value!r}")


def _check_shapes(input, weight, bias, groups):
    o, cg = weight.shape[:2]
    if o < groups or o % groups:
        need = "at least" if o < groups else "divisible by"
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be {need} {groups} at dimension 0, but "
            f"got weight of size {list(weight.shape)} instead (out_channels must be a multiple "
            "of groups)")
    if input.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {cg * groups} channels, but got {input.shape[1]} "
            "channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{o} elements, but got bias of size {list(bias.shape)} instead")


def _check_dtypes(name, input, weight, bias):
    # no type promotion in a convolution (as in torch): every operand has the input's dtype
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"Input type ({input._type_name()}) and weight type ({weight._type_name()}) should "
            f"be the same: convert one of them, e.g. input.to({weight.dtype}) or, for a layer, "
            f"layer.to({input.dtype})")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(
            f"Input type ({input.dtype}) and bias type ({bias.dtype}) should be the same: "
            f"convert one of them, e.g. input.to({bias.dtype})")
    if input.dtype.name == "bool":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool': convert the tensors "
                                  "first, e.g. input.float()")
