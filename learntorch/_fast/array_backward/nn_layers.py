"""Array backward of the layers: convolution, pooling, normalisation, unfold/fold, embedding.

Each entry replaces a layer Function's reference ``backward`` (``nn/_functional/``),
which applies derivative Functions (``ConvolutionBackwardInput``, ``MaxPool2dBackward``,
``NormalizeBackward``, ...) whose forwards call one backend method each: here the same
backend methods are called on the arrays, with the same arguments in the same order,
so the gradients are the same bits -- without a Tensor, a node or an ``apply`` per
gradient.  On the course's CNN step that bookkeeping is several Function calls per
layer per step.
"""
from ... import _dtypes
from ... import backends
from ...backends.reference import as_array
from ...nn._functional import conv, fold, normalization, pooling, sparse
from .registry import register as _register


def _sum(grad, dims):
    """``grad.sum(dim=dims)`` as ``ops.reductions.Sum.forward`` computes it on arrays."""
    return as_array(backends.current.sum(grad, tuple(dims), False), dtype=grad.dtype)


@_register(conv.Convolution)
def convolution_backward(ctx, grad):
    """Replaces ``Convolution.backward`` (``ConvolutionBackwardInput.forward``,
    ``ConvolutionBackwardWeight.forward`` and the bias's sum)."""
    x, weight = ctx.saved_tensors
    g4, w4 = conv._as_4d(grad), conv._as_4d(weight._data)
    gx = None
    if ctx.needs_input_grad[0]:
        gx = conv._as_dims(backends.current.conv2d_backward_input(g4, w4, ctx.geometry,
                                                                  ctx.groups), weight.ndim)
    return (gx,) + _weight_and_bias(ctx, g4, conv._as_4d(x._data), grad, x.ndim) + (None, None)


@_register(conv.ConvolutionTranspose)
def convolution_transpose_backward(ctx, grad):
    """Replaces ``ConvolutionTranspose.backward`` (``Convolution.forward``,
    ``ConvolutionBackwardWeight.forward`` with the roles of grad and x swapped, and the
    bias's sum)."""
    x, weight = ctx.saved_tensors
    g4, w4 = conv._as_4d(grad), conv._as_4d(weight._data)
    gx = None
    if ctx.needs_input_grad[0]:
        gx = conv._as_dims(backends.current.conv2d(g4, w4, None, ctx.geometry, ctx.groups),
                           grad.ndim)
    return (gx,) + _weight_and_bias(ctx, conv._as_4d(x._data), g4, grad, x.ndim) + (None, None)


def _weight_and_bias(ctx, upstream, below, grad, ndim):
    """(dW, db): ``conv2d_backward_weight(upstream, below)`` in the weight's rank, and
    ``grad`` summed over all but the channels."""
    gw = gb = None
    if ctx.needs_input_grad[1]:
        gw = backends.current.conv2d_backward_weight(upstream, below, ctx.geometry, ctx.groups)
        gw = gw if ndim == 4 else gw.reshape(gw.shape[:2] + gw.shape[3:])
    if ctx.needs_input_grad[2]:
        gb = _sum(grad, conv.bias_dims(grad.ndim))
    return gw, gb


@_register(pooling.MaxPool2d)
def max_pool2d_backward(ctx, grad, _grad_indices):
    """Replaces ``MaxPool2d.backward`` (``MaxPool2dBackward.forward``)."""
    x, indices = ctx.saved_tensors
    return backends.current.max_pool2d_backward(grad, indices._data, ctx.geometry), None


@_register(pooling.AdaptiveMaxPool2d)
def adaptive_max_pool2d_backward(ctx, grad, _grad_indices):
    """Replaces ``AdaptiveMaxPool2d.backward`` (``AdaptiveMaxPool2dBackward.forward``)."""
    x, indices = ctx.saved_tensors
    return (backends.current.adaptive_max_pool2d_backward(grad, indices._data, ctx.input_size),
            None)


@_register(pooling.AvgPool2d)
def avg_pool2d_backward(ctx, grad):
    """Replaces ``AvgPool2d.backward`` (``AvgPool2dBackward.forward``)."""
    return backends.current.avg_pool2d_backward(grad, ctx.geometry, ctx.divisor), None, None


@_register(pooling.AdaptiveAvgPool2d)
def adaptive_avg_pool2d_backward(ctx, grad):
    """Replaces ``AdaptiveAvgPool2d.backward`` (``AdaptiveAvgPool2dBackward.forward``)."""
    return backends.current.adaptive_avg_pool2d_backward(grad, ctx.input_size), None


@_register(fold.Im2col)
def im2col_backward(ctx, grad):
    """Replaces ``Im2col.backward`` (``Col2im.forward``)."""
    g = ctx.geometry
    n, c = grad.shape[0], grad.shape[1] // (g.kernel[0] * g.kernel[1])
    return backends.current.col2im(grad.reshape((n, c) + g.kernel + g.out), g), None


@_register(fold.Col2im)
def col2im_backward(ctx, grad):
    """Replaces ``Col2im.backward`` (``Im2col.forward``)."""
    g = ctx.geometry
    cols = backends.current.im2col(grad, g)
    n, c = cols.shape[:2]
    return cols.reshape(n, c * g.kernel[0] * g.kernel[1], g.out[0] * g.out[1]), None


def _normalization_backward(ctx, grad, need_x, need_w, need_b):
    """``_Normalization._backward`` on arrays: the same backend calls (``mul`` for the
    weight, ``normalize_backward``, ``normalize_affine_backward``)."""
    x, weight = ctx.saved_tensors
    groups = ctx.groups
    a = x._data
    if grad.dtype == _dtypes.float16.np:  # (the reference's x.float(), grad.float())
        a, grad = a.astype(_dtypes.float32.np), grad.astype(_dtypes.float32.np)
    a, grad = a.reshape(groups.view), grad.reshape(groups.view)
    mean, inv_std = ctx.statistics
    backend = backends.current
    gx = gw = gb = None
    if need_x:
        g = grad
        if weight is not None:
            w = weight._data
            w = w if w.dtype == grad.dtype else w.astype(grad.dtype)
            g = backend.mul(grad, w.reshape(groups.affine))
        gx = backend.normalize_backward(g, a, mean, inv_std, groups.dims,
                                        ctx.batch_statistics).reshape(x.shape)
    if need_w or need_b:
        gw, gb = backend.normalize_affine_backward(grad, a, mean, inv_std, groups.affine)
        gw = gw.reshape(ctx.parameter_shape) if need_w else None
        gb = gb.reshape(ctx.parameter_shape) if need_b else None
    return gx, gw, gb


@_register(normalization.BatchNorm)
def batch_norm_backward(ctx, grad):
    """Replaces ``BatchNorm.backward``."""
    return _normalization_backward(ctx, grad, *ctx.needs_input_grad[:3]) + (None,) * 5


@_register(normalization.LayerNorm, normalization.GroupNorm)
def layer_or_group_norm_backward(ctx, grad):
    """Replaces ``LayerNorm.backward`` and ``GroupNorm.backward``."""
    needs = ctx.needs_input_grad
    gx, gw, gb = _normalization_backward(ctx, grad, needs[0], needs[2], needs[3])
    return gx, None, gw, gb, None


@_register(sparse.Embedding)
def embedding_backward(ctx, grad):
    """Replaces ``Embedding.backward`` (``EmbeddingDenseBackward.forward``)."""
    indices, = ctx.saved_tensors
    return (backends.current.embedding_backward(grad, indices._data, ctx.num_weights,
                                                ctx.padding_idx, ctx.scale_grad_by_freq),
            None, None, None)
