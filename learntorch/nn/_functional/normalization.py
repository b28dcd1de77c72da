"""``F.batch_norm`` and ``F.layer_norm``: normalise, then scale and shift.

Both compute, over some dimensions ("the group" of each element),

    x_hat = (x - mean) / sqrt(var + eps)        y = x_hat * weight + bias

with the *biased* variance (divided by n, not n - 1).  They differ only in
the group: batch norm normalises each channel over the batch and spatial
dims (N, H, W for an (N, C, H, W) input); layer norm normalises each sample
over its last dims (``normalized_shape``).

Each is one ``Function`` whose backward is the closed-form gradient (derived
once on paper instead of recorded as ten small ops).  With g = dLoss/dx_hat
= grad * weight, and means taken over the group:

    dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sqrt(var + eps)

The two subtracted terms are what flows back through ``mean`` and ``var``,
which depend on every x in the group.  In batch norm's eval mode the running
statistics are constants, so only ``dx = g / sqrt(var + eps)`` is left.
The backward is written with tensor ops, so it can itself be differentiated
(``create_graph=True``).
"""
import math
import numpy as np

from ... import _dtypes
from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops._helpers import check_same_device, recording_gradient_graph, wrap


def _statistics(a, axes):
    """Mean and biased variance of ``a`` over ``axes`` (kept as size-1 dims)."""
    mean = a.mean(axis=axes, keepdims=True)
    var = np.square(a - mean).mean(axis=axes, keepdims=True)  # two passes: no cancellation
    return mean, var


def _input_grad(g, x_hat, inv_std, dims):
    """dLoss/dx for x_hat = (x - mean(x)) * inv_std, given g = dLoss/dx_hat (see the top)."""
    return inv_std * (g - g.mean(dim=dims, keepdim=True)
                      - x_hat * (g * x_hat).mean(dim=dims, keepdim=True))


def _compute_dtype(x):
    # half precision sums lose too many digits: compute in float32, return half (as torch)
    return _dtypes.float32 if x._dtype is _dtypes.float16 else x._dtype


class BatchNorm(Function):
    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        dt = _compute_dtype(x).np
        a = x._data.astype(dt, copy=False)
        axes = (0,) + tuple(range(2, a.ndim))      # every dim but the channels
        channel = (1, a.shape[1]) + (1,) * (a.ndim - 2)  # a (C,) vector shaped to broadcast
        if not training:
            mean = running_mean._data.astype(dt).reshape(channel)
            var = running_var._data.astype(dt).reshape(channel)
        elif a.size == 0:  # an empty batch: nothing to normalise, running stats untouched
            mean, var = np.zeros(channel, dt), np.ones(channel, dt)
        else:
            mean, var = _statistics(a, axes)
            if running_mean is not None:
                n = a.size // a.shape[1]
                # the running variance is the *unbiased* one (times n/(n-1)), as torch keeps it
                _running_update(running_mean, mean.reshape(-1), momentum)
                _running_update(running_var, var.reshape(-1) * (n / (n - 1)), momentum)
        inv_std = 1 / np.sqrt(var + eps)
        ctx.save_for_backward(x, weight)
        ctx.statistics = (wrap(mean), wrap(inv_std))
        ctx.training, ctx.eps, ctx.dims = training, eps, axes
        return wrap(_affine((a - mean) * inv_std, weight, bias, channel, x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        channel = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        x_hat, inv_std, grad, g = _backward_setup(ctx, x, grad, weight, ctx.training, channel)
        dims = ctx.dims
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            # eval mode: mean and var are the running (constant) statistics
            gx = _input_grad(g, x_hat, inv_std, dims) if ctx.training else g * inv_std
        if ctx.needs_input_grad[1]:
            gw = (grad * x_hat).sum(dim=dims)
        if ctx.needs_input_grad[2]:
            gb = grad.sum(dim=dims)
        return gx, gw, gb, None, None, None, None, None


class LayerNorm(Function):
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, normalized_ndim, weight, bias, eps):
        dt = _compute_dtype(x).np
        a = x._data.astype(dt, copy=False)
        axes = tuple(range(a.ndim - normalized_ndim, a.ndim))  # the last dims
        if a.size == 0:
            mean = var = np.zeros(a.shape[:a.ndim - normalized_ndim] + (1,) * normalized_ndim, dt)
        else:
            mean, var = _statistics(a, axes)
        inv_std = 1 / np.sqrt(var + eps)
        ctx.save_for_backward(x, weight)
        ctx.statistics = (wrap(mean), wrap(inv_std))
        ctx.eps, ctx.dims = eps, axes
        # weight and bias have the normalised shape: they broadcast over the leading dims
        return wrap(_affine((a - mean) * inv_std, weight, bias, None, x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        x_hat, inv_std, grad, g = _backward_setup(ctx, x, grad, weight, True)
        gx = _input_grad(g, x_hat, inv_std, ctx.dims) if ctx.needs_input_grad[0] else None
        # weight and bias were broadcast over the leading dims: the engine sums over them
        gw = grad * x_hat if ctx.needs_input_grad[2] else None
        gb = grad if ctx.needs_input_grad[3] else None
        return gx, None, gw, gb, None


def _affine(x_hat, weight, bias, shape, dtype):
    """x_hat * weight + bias (each optional) as an array of ``dtype``; modifies x_hat."""
    if weight is not None:
        w = weight._data
        x_hat *= w if shape is None else w.reshape(shape)
    if bias is not None:
        b = bias._data
        x_hat += b if shape is None else b.reshape(shape)
    return x_hat.astype(dtype, copy=False)


def _backward_setup(ctx, x, grad, weight, batch_statistics, weight_shape=None):
    """x_hat, 1/sqrt(var + eps), grad and g = dLoss/dx_hat, as tensors for the formulas."""
    if grad._dtype is _dtypes.float16:  # as in forward: half precision computes in float32
        x, grad = x.float(), grad.float()
    mean, inv_std = ctx.statistics
    if batch_statistics and recording_gradient_graph():
        # a graph of this gradient must see how mean and var depend on x: recompute them
        mean = x.mean(dim=ctx.dims, keepdim=True)
        inv_std = (x.var(dim=ctx.dims, keepdim=True, unbiased=False) + ctx.eps).rsqrt()
    x_hat = (x - mean) * inv_std
    if weight is None:
        return x_hat, inv_std, grad, grad
    w = weight.to(grad.dtype)
    return x_hat, inv_std, grad, grad * (w if weight_shape is None else w.reshape(weight_shape))


def _running_update(buffer, batch_value, momentum):
    """buffer = (1 - momentum) * buffer + momentum * batch_value, in place (not recorded)."""
    b = buffer._data
    b[...] = (1 - momentum) * b + momentum * batch_value.astype(b.dtype, copy=False)
    buffer._version_counter[0] += 1


# ---------------------------------------------------------------- the public functions
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) of ``input`` (N, C, ...) over the batch and spatial dims.

    ``training=True`` uses the batch's statistics and, when running_mean and
    running_var are given, updates them in place; ``training=False`` uses them.
    """
    _require_tensors("batch_norm", (1, "input", input), (2, "running_mean", running_mean),
                     (3, "running_var", running_var), (4, "weight", weight), (5, "bias", bias))
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm expects an input of shape (N, C, ...) with at least 2 "
                           f"dimensions, but got input of size {list(input.shape)}")
    if training:
        per_channel = input.shape[0] * math.prod(input.shape[2:])
        if per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}: batch statistics need at least 2 values per "
                             "channel (use a larger batch, or call model.eval())")
        if eps <= 0.0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    elif running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode: pass the running "
                           "statistics, or training=True to use the batch's own")
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()} "
                               f"(one per channel of the input of size {list(input.shape)})")
    _check_dtypes("batch_norm", input, running_mean, running_var, weight, bias)
    check_same_device(input, running_mean, running_var, weight, bias)
    return BatchNorm.apply(input, weight, bias, running_mean, running_var, bool(training),
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise each sample of ``input`` over its last dims, of shape ``normalized_shape``."""
    _require_tensors("layer_norm", (1, "input", input), (3, "weight", weight), (4, "bias", bias))
    if isinstance(normalized_shape, (int, np.integer)) or not all(
            isinstance(s, (int, np.integer)) for s in normalized_shape):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}; for the last "
                        "dimension alone pass a 1-tuple, e.g. (x.shape[-1],)")
    shape = [int(s) for s in normalized_shape]
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{shape}")
    if input.ndim < len(shape) or list(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    _check_dtypes("layer_norm", input, weight, bias)
    check_same_device(input, weight, bias)
    return LayerNorm.apply(input, len(shape), weight, bias, eps)


def _require_tensors(name, *arguments):
    """Torch's TypeError for a non-tensor argument: (position, name, value) triples; only
    ``input`` may not be None."""
    for position, arg, value in arguments:
        if (value is not None or arg == "input") and not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def _check_dtypes(name, input, *params):
    """Floating input; parameters of the input's dtype (float32 ones allowed for half input)."""
    if not input.dtype.is_floating_point:
        kernel = "batch_norm" if name == "batch_norm" else "LayerNormKernelImpl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype}': "
                                  "normalisation needs a floating point input, e.g. x.float()")
    allowed = {input.dtype}
    if input.dtype is _dtypes.float16:
        allowed.add(_dtypes.float32)  # mixed precision: half activations, float32 parameters
    for p in params:
        if p is not None and p.dtype not in allowed:
            raise RuntimeError(
                f"mixed dtype (CPU): expect parameter to have scalar type of {input.dtype}, but "
                f"{name} got a parameter of dtype {p.dtype} for an input of dtype "
                f"{input.dtype}. Convert the input (x.to({p.dtype})) or the module "
                f"(model.to({input.dtype}))")
