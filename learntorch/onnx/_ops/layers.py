"""Converters of the layers' ops: linear and matmul, convolution, pooling, normalisation.

The sliding-window ops recorded a ``Geometry`` (``backends/geometry.py``):
image size, kernel, stride, dilation, the padding *before* the image and the
output size.  ONNX wants the padding after it too: torch pads both sides alike,
and ONNX's output-size formula with that padding gives the recorded output
size, which each converter checks rather than trusts.
"""
import numpy as np

from ...backends.geometry import avg_divisor
from ...backends.numpy_families.pooling import averaging_matrices
from .._registry import converts


# ---------------------------------------------------------------- products
@converts("Linear")
def linear(ctx):
    x, weight, bias = ctx.args
    if len(ctx.meta(x).shape) == 2:
        # Gemm: x @ W^T + b in one node, W as stored (out, in): ONNX's own Linear
        inputs = [ctx.value(x), ctx.value(weight)] + ([ctx.value(bias)] if bias is not None
                                                      else [])
        return ctx.op("Gemm", *inputs, transB=1, last=True)
    product = ctx.op("MatMul", ctx.value(x), ctx.op("Transpose", ctx.value(weight), perm=[1, 0]),
                     last=bias is None)
    if bias is None:
        return product
    return ctx.op("Add", product, ctx.value(bias), last=True)


@converts("Matmul", "Dot")
def matmul(ctx):
    a, b = ctx.args
    return ctx.op("MatMul", ctx.value(a), ctx.value(b), last=True)


# ---------------------------------------------------------------- sliding windows
def _pads(g, dims):
    """ONNX ``pads`` (all befores, then all afters) of a recorded Geometry; torch pads
    both sides by the same amount.  ``dims`` = 1 for a 1-D op (height 1 dropped)."""
    before = list(g.pad[-dims:])
    return before + before


def _window_attributes(g, dims):
    return dict(kernel_shape=list(g.kernel[-dims:]), strides=list(g.stride[-dims:]),
                dilations=list(g.dilation[-dims:]), pads=_pads(g, dims))


def _output_size(n, k, s, d, p, ceil):
    span = n + 2 * p - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


def _ceil_mode(ctx, g):
    """0 or 1: which rounding gives the recorded output size (torch's ceil_mode)."""
    for ceil in (0, 1):
        sizes = tuple(_output_size(n, k, s, d, p, ceil) for n, k, s, d, p
                      in zip(g.size, g.kernel, g.stride, g.dilation, g.pad))
        if sizes == tuple(g.out):
            return ceil
    ctx.unsupported(f"its windows ({g}) are not ones ONNX pooling can describe")


def _conv_pads(g, dims):
    """``pads`` of a convolution: the same after as before where that gives the recorded
    output size; else (padding='same' with an even kernel) what the last window needs."""
    before, after = [], []
    for n, k, s, d, p, o in list(zip(g.size, g.kernel, g.stride, g.dilation, g.pad,
                                     g.out))[-dims:]:
        before.append(p)
        after.append(p if _output_size(n, k, s, d, p, False) == o else
                     (o - 1) * s + d * (k - 1) + 1 - n - p)
    return before + after


@converts("Convolution")
def convolution(ctx):
    x, weight, bias, g, groups = ctx.args
    dims = len(ctx.meta(x).shape) - 2
    attributes = _window_attributes(g, dims)
    attributes["pads"] = _conv_pads(g, dims)
    inputs = [ctx.value(x), ctx.value(weight)] + ([ctx.value(bias)] if bias is not None else [])
    return ctx.op("Conv", *inputs, group=int(groups), **attributes, last=True)


@converts("ConvolutionTranspose")
def convolution_transpose(ctx):
    # the recorded geometry is the convolution it transposes: from this op's output
    # (g.size) to its input (g.out); ONNX's output_padding is what the formula leaves over
    x, weight, bias, g, groups = ctx.args
    dims = len(ctx.meta(x).shape) - 2
    attributes = _window_attributes(g, dims)
    attributes["output_padding"] = [
        n - ((o - 1) * s - 2 * p + d * (k - 1) + 1) for n, o, s, p, d, k in
        list(zip(g.size, g.out, g.stride, g.pad, g.dilation, g.kernel))[-dims:]]
    inputs = [ctx.value(x), ctx.value(weight)] + ([ctx.value(bias)] if bias is not None else [])
    return ctx.op("ConvTranspose", *inputs, group=int(groups), **attributes, last=True)


@converts("MaxPool2d")
def max_pool2d(ctx):
    x, g = ctx.args
    if any(user.args[1] == 1 for user in ctx.node.users):
        ctx.unsupported("its indices (return_indices=True) count positions inside each "
                        "(H, W) plane, ONNX MaxPool's inside the whole tensor",
                        "Export a model that uses the pooled values only.")
    values = _batched(ctx, x, lambda v: ctx.op(
        "MaxPool", v, ceil_mode=_ceil_mode(ctx, g), **_window_attributes(g, 2),
        last=len(ctx.meta(x).shape) == 4))
    return [values, None]


def _batched(ctx, x, pool):
    """ONNX pools (N, C, H, W): a (C, H, W) input gets a batch dimension of one around it."""
    if len(ctx.meta(x).shape) == 4:
        return pool(ctx.value(x))
    out = pool(ctx.op("Unsqueeze", ctx.value(x), ctx.ints([0], "axes")))
    return ctx.op("Squeeze", out, ctx.ints([0], "axes"), last=True)


@converts("AvgPool2d")
def avg_pool2d(ctx):
    x, g, divisor = ctx.args
    ceil = _ceil_mode(ctx, g)
    attributes = _window_attributes(g, 2)
    attributes.pop("dilations")  # AveragePool has them only from opset 19; torch's are 1
    full = int(np.prod(g.kernel))
    for include_pad in (1, 0):
        if np.array_equal(divisor, avg_divisor(g, include_pad)) and (
                not ceil or not include_pad):
            return _batched(ctx, x, lambda v: ctx.op(
                "AveragePool", v, ceil_mode=ceil, count_include_pad=include_pad, **attributes,
                last=len(ctx.meta(x).shape) == 4))
    if ceil:
        ctx.unsupported("ceil_mode=True with count_include_pad=True or divisor_override",
                        "Use ceil_mode=False, or count_include_pad=False.")
    # divisor_override: the mean over full windows times (window size / divisor)
    scale = (full / divisor).astype(ctx.out.dtype.np)
    return _batched(ctx, x, lambda v: ctx.op(
        "Mul", ctx.op("AveragePool", v, count_include_pad=1, **attributes),
        ctx.constant(scale, "divisor"), last=len(ctx.meta(x).shape) == 4))


@converts("AdaptiveAvgPool2d")
def adaptive_avg_pool2d(ctx):
    x, sizes = ctx.args
    h, w = ctx.meta(x).shape[-2:]
    oh, ow = sizes
    four_d = len(ctx.meta(x).shape) == 4
    if (oh, ow) == (1, 1):
        return _batched(ctx, x, lambda v: ctx.op("GlobalAveragePool", v, last=four_d))
    if h % oh == 0 and w % ow == 0:  # equal windows side by side: plain average pooling
        kernel = [h // oh, w // ow]
        return _batched(ctx, x, lambda v: ctx.op("AveragePool", v, kernel_shape=kernel,
                                                 strides=kernel, last=four_d))
    # windows of unequal sizes: out = A_h @ x @ A_w^T with the averaging matrices
    a_h, a_w = averaging_matrices((h, w), (oh, ow), ctx.out.dtype.np)
    rows = ctx.op("MatMul", ctx.constant(a_h, "rows"), ctx.value(x))
    return ctx.op("MatMul", rows, ctx.constant(np.ascontiguousarray(a_w.T), "columns"),
                  last=True)


# ---------------------------------------------------------------- normalisation
def _ones_or(ctx, tensor, n, value, hint):
    if tensor is not None:
        return ctx.value(tensor)
    return ctx.constant(np.full(n, value, dtype=ctx.out.dtype.np), hint)


@converts("BatchNorm")
def batch_norm(ctx):
    x, weight, bias, running_mean, running_var, training, momentum, eps = ctx.args
    if training or running_mean is None:
        ctx.unsupported("batch norm with batch statistics (training mode) normalises each "
                        "batch by itself, which an inference graph does not do",
                        "Export in eval mode: training=learntorch.onnx.TrainingMode.EVAL (the "
                        "default), or call model.eval().")
    channels = ctx.meta(x).shape[1]
    return ctx.op("BatchNormalization", ctx.value(x), _ones_or(ctx, weight, channels, 1, "scale"),
                  _ones_or(ctx, bias, channels, 0, "bias"), ctx.value(running_mean),
                  ctx.value(running_var), epsilon=float(eps), last=True)


@converts("LayerNorm")
def layer_norm(ctx):
    x, normalized_ndim, weight, bias, eps = ctx.args
    if ctx.opset < 17:
        ctx.unsupported("LayerNormalization is an ONNX op from opset 17",
                        "Export with opset_version=17 or later.")
    shape = ctx.meta(x).shape[len(ctx.meta(x).shape) - normalized_ndim:]
    scale = (ctx.value(weight) if weight is not None else
             ctx.constant(np.ones(shape, dtype=ctx.out.dtype.np), "scale"))
    inputs = [ctx.value(x), scale] + ([ctx.value(bias)] if bias is not None else [])
    return ctx.op("LayerNormalization", *inputs, axis=-int(normalized_ndim),
                  epsilon=float(eps), last=True)


@converts("Embedding")
def embedding(ctx):
    weight, indices, padding_idx, scale_grad_by_freq = ctx.args
    return ctx.op("Gather", ctx.value(weight), ctx.value(indices), axis=0, last=True)
