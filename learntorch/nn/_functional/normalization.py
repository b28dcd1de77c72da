"""``F.batch_norm``, ``F.layer_norm`` and ``F.group_norm``: normalise, then scale and shift.

All three compute, over some dimensions ("the group" of each element),

    x_hat = (x - mean) / sqrt(var + eps)        y = x_hat * weight + bias

with the *biased* variance (divided by n, not n - 1).  They differ only in the
group: batch norm normalises each channel over the batch and spatial dims (N, H, W
for an (N, C, H, W) input); layer norm normalises each sample over its last dims
(``normalized_shape``); group norm normalises each sample over a group of channels
and their pixels.  Each picks its group by *viewing* the input in a shape where the
group is a set of dims (group norm: (N, C, H, W) as (N, G, C/G, H*W), the group
dims 2 and 3), and the parameters in a shape that broadcasts against that view.

The arithmetic is the backend's normalisation family (``backends/numpy_families/
normalization.py``, which derives the gradient).  The backward is two ops of their
own, so that it can itself be differentiated (``create_graph=True``):

* ``NormalizeBackward`` -- dLoss/dx from dLoss/dx_hat, in one backend pass;
* ``NormalizeAffineBackward`` -- the parameters' gradients, sum(grad * x_hat), sum(grad).

Their own backwards (the second derivatives) are written with tensor ops, the
statistics recomputed from ``x`` so that higher derivatives see how they depend on it.
"""
import math
import numbers

from ... import _dtypes
from ... import backends
from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops._helpers import check_same_device, wrap
from .named import named


class _Groups:
    """How a normalisation sees its input: ``view`` (the input's shape for the statistics),
    ``dims`` (the group: the dims of ``view`` reduced over) and ``affine`` (the shape of
    the weight and bias in that view, broadcasting against it)."""

    __slots__ = ("view", "dims", "affine")

    def __init__(self, view, dims, affine):
        self.view, self.dims, self.affine = tuple(view), tuple(dims), tuple(affine)


class _Normalization(Function):
    """What batch, layer and group norm share; a subclass says how it groups its input."""

    @staticmethod
    def _forward(ctx, x, weight, bias, groups, eps, running=None):
        """(y, var) for ``x`` grouped by ``groups``: batch statistics, or the ``running``
        (mean, var) when given."""
        backend = backends.current
        # 16-bit sums lose too many digits: compute in float32, return 16 bits (as torch)
        a = x._data.astype(_compute_dtype(x).np, copy=False).reshape(groups.view)
        if running is None:
            mean, var = backend.norm_statistics(a, groups.dims)
        else:
            mean, var = (r.astype(a.dtype).reshape(groups.affine) for r in running)
        inv_std = backend.inverse_std(var, eps)
        w = None if weight is None else weight._data.reshape(groups.affine)
        b = None if bias is None else bias._data.reshape(groups.affine)
        ctx.save_for_backward(x, weight)
        ctx.statistics, ctx.groups, ctx.eps = (mean, inv_std), groups, eps
        ctx.batch_statistics = running is None
        parameter = weight if weight is not None else bias
        ctx.parameter_shape = None if parameter is None else parameter.shape
        y = backend.normalize(a, mean, inv_std, w, b)
        return wrap(y.astype(x._data.dtype, copy=False).reshape(x.shape)), var

    @staticmethod
    def _backward(ctx, grad, need_x, need_w, need_b, node_name):
        """(dx, dweight, dbias): the two derivative ops below, on the grouped view, under
        torch's ``node_name``."""
        x, weight = ctx.saved_tensors
        groups, shape = ctx.groups, x.shape
        if grad._dtype in _HALF:  # as in forward: 16-bit floats compute in float32
            x, grad = x.float(), grad.float()
        x, grad = x.reshape(groups.view), grad.reshape(groups.view)
        arguments = (ctx.statistics, groups, ctx.batch_statistics, ctx.eps)
        gx = gw = gb = None
        if need_x:
            g = grad if weight is None else grad * weight.to(grad.dtype).reshape(groups.affine)
            gx = named(NormalizeBackward, node_name).apply(g, x, *arguments).reshape(shape)
        if need_w or need_b:
            gw, gb = named(NormalizeAffineBackward, node_name).apply(grad, x, *arguments)
            gw = gw.reshape(ctx.parameter_shape) if need_w else None
            gb = gb.reshape(ctx.parameter_shape) if need_b else None
        return gx, gw, gb


class NormalizeBackward(Function):
    """dLoss/dx of a normalisation, from ``grad`` = dLoss/dx_hat (the weight applied already):
    ``inv_std * (grad - mean(grad) - x_hat * mean(grad * x_hat))`` over the group, or
    ``grad * inv_std`` with fixed statistics."""

    @staticmethod
    def forward(ctx, grad, x, statistics, groups, batch_statistics, eps):
        mean, inv_std = _keep(ctx, grad, x, statistics, groups, batch_statistics, eps)
        return wrap(backends.current.normalize_backward(grad._data, x._data, mean, inv_std,
                                                        groups.dims, batch_statistics))

    @staticmethod
    def backward(ctx, u):
        grad, x = ctx.saved_tensors
        if not ctx.batch_statistics:  # grad * inv_std, with a constant inv_std
            return u * wrap(ctx.statistics[1]), None, None, None, None, None
        x_hat, inv_std = _differentiable_statistics(x, ctx.dims, ctx.eps)

        def mean(t):
            return t.mean(dim=ctx.dims, keepdim=True)

        def project(v):  # dx = inv_std * project(grad), and project is self-adjoint
            return v - mean(v) - x_hat * mean(v * x_hat)

        d_grad = inv_std * project(u) if ctx.needs_input_grad[0] else None
        d_x = None
        if ctx.needs_input_grad[1]:
            # d<u, dx>/dx: dx depends on x through x_hat and inv_std (derived on paper, checked
            # against torch's second derivatives in tests/nn)
            common = mean(u * grad) - mean(grad) * mean(u) - mean(grad * x_hat) * mean(u * x_hat)
            d_x = -(inv_std * inv_std) * (common * x_hat + mean(u * x_hat) * project(grad)
                                          + mean(grad * x_hat) * project(u))
        return d_grad, d_x, None, None, None, None


class NormalizeAffineBackward(Function):
    """(dLoss/dweight, dLoss/dbias) of a normalisation: sum(grad * x_hat) and sum(grad) over
    the dims the parameters were broadcast along."""

    @staticmethod
    def forward(ctx, grad, x, statistics, groups, batch_statistics, eps):
        mean, inv_std = _keep(ctx, grad, x, statistics, groups, batch_statistics, eps)
        gw, gb = backends.current.normalize_affine_backward(grad._data, x._data, mean, inv_std,
                                                            groups.affine)
        return wrap(gw), wrap(gb)

    @staticmethod
    def backward(ctx, ggw, ggb):
        grad, x = ctx.saved_tensors
        if ctx.batch_statistics:
            x_hat, inv_std = _differentiable_statistics(x, ctx.dims, ctx.eps)
        else:
            mean, inv_std = (wrap(s) for s in ctx.statistics)
            x_hat = (x - mean) * inv_std
        d_grad = ggw * x_hat + ggb if ctx.needs_input_grad[0] else None
        d_x = None
        if ctx.needs_input_grad[1]:  # sum(grad * x_hat) depends on x through x_hat
            v = grad * ggw
            d_x = inv_std * v
            if ctx.batch_statistics:
                d_x = inv_std * (v - v.mean(dim=ctx.dims, keepdim=True)
                                 - x_hat * (v * x_hat).mean(dim=ctx.dims, keepdim=True))
        return d_grad, d_x, None, None, None, None


def _keep(ctx, grad, x, statistics, groups, batch_statistics, eps):
    """What the derivatives' own backward needs; returns (mean, inv_std)."""
    ctx.save_for_backward(grad, x)
    ctx.statistics, ctx.dims, ctx.eps = statistics, groups.dims, eps
    ctx.batch_statistics = batch_statistics
    return statistics


def _differentiable_statistics(x, dims, eps):
    """(x_hat, inv_std) computed from ``x`` with tensor ops: their graph shows how they
    depend on every x of the group (what a second derivative needs)."""
    mean = x.mean(dim=dims, keepdim=True)
    inv_std = (x.var(dim=dims, keepdim=True, unbiased=False) + eps).rsqrt()
    return (x - mean) * inv_std, inv_std


# float16 and bfloat16 inputs: statistics and the normalisation in float32, rounded once at
# the end, as torch's kernels (its "opmath" type); their parameters may be float32
_HALF = (_dtypes.float16, _dtypes.bfloat16)


def _compute_dtype(x):
    return _dtypes.float32 if x._dtype in _HALF else x._dtype


class BatchNorm(_Normalization):
    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
        channel = (1, x.shape[1]) + (1,) * (x.ndim - 2)  # a (C,) vector shaped to broadcast
        groups = _Groups(x.shape, (0,) + tuple(range(2, x.ndim)), channel)
        running = None if training else (running_mean._data, running_var._data)
        y, var = _Normalization._forward(ctx, x, weight, bias, groups, eps, running)
        if training and running_mean is not None and x.numel() > 0:
            n = x.numel() // x.shape[1]
            backend = backends.current
            mean = ctx.statistics[0].reshape(-1)
            # the running variance is the *unbiased* one (times n/(n-1)), as torch keeps it
            _running_update(running_mean, mean, momentum)
            _running_update(running_var, backend.mul(var.reshape(-1), n / (n - 1)), momentum)
        return y

    @staticmethod
    def backward(ctx, grad):
        return _Normalization._backward(ctx, grad, *ctx.needs_input_grad[:3],
                                        "NativeBatchNormBackwardBackward0") + (None,) * 5


class LayerNorm(_Normalization):
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, normalized_ndim, weight, bias, eps):
        dims = tuple(range(x.ndim - normalized_ndim, x.ndim))    # the last dims
        # weight and bias have the normalised shape: they broadcast over the leading dims
        groups = _Groups(x.shape, dims, x.shape[x.ndim - normalized_ndim:])
        return _Normalization._forward(ctx, x, weight, bias, groups, eps)[0]

    @staticmethod
    def backward(ctx, grad):
        return _per_sample_backward(ctx, grad, "NativeLayerNormBackwardBackward0")


class GroupNorm(_Normalization):
    node_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        n, c = x.shape[:2]
        pixels = math.prod(x.shape[2:])
        # (N, C, *) as (N, G, C/G, pixels): each sample's group of channels is dims 2, 3
        groups = _Groups((n, num_groups, c // num_groups, pixels), (2, 3),
                         (1, num_groups, c // num_groups, 1))
        return _Normalization._forward(ctx, x, weight, bias, groups, eps)[0]

    @staticmethod
    def backward(ctx, grad):
        return _per_sample_backward(ctx, grad, "NativeGroupNormBackwardBackward0")


def _per_sample_backward(ctx, grad, node_name):
    """The backward of layer and group norm, whose arguments are (x, a number, weight, bias,
    eps)."""
    needs = ctx.needs_input_grad
    gx, gw, gb = _Normalization._backward(ctx, grad, needs[0], needs[2], needs[3], node_name)
    return gx, None, gw, gb, None


def _running_update(buffer, batch_value, momentum):
    """buffer = (1 - momentum) * buffer + momentum * batch_value, in place (not recorded)."""
    b = buffer._data
    b[...] = backends.current.running_average(b, batch_value, momentum)
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
    if isinstance(normalized_shape, numbers.Integral) or not all(
            isinstance(s, numbers.Integral) for s in normalized_shape):
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


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each sample of ``input`` (N, C, ...) over groups of ``C / num_groups``
    channels (and all their positions), then scale and shift each channel."""
    _require_tensors("group_norm", (1, "input", input), (3, "weight", weight), (4, "bias", bias))
    if isinstance(num_groups, bool) or not isinstance(num_groups, numbers.Integral):
        raise TypeError(f"group_norm(): argument 'num_groups' (position 2) must be int, not "
                        f"{type(num_groups).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    _check_dtypes("group_norm", input, weight, bias)
    check_same_device(input, weight, bias)
    return GroupNorm.apply(input, int(num_groups), weight, bias, eps)


def _require_tensors(name, *arguments):
    """Torch's TypeError for a non-tensor argument: (position, name, value) triples; only
    ``input`` may not be None."""
    for position, arg, value in arguments:
        if (value is not None or arg == "input") and not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def _check_dtypes(name, input, *params):
    """Floating input; parameters of the input's dtype (float32 ones allowed for 16-bit
    input)."""
    if not input.dtype.is_floating_point:
        kernel = {"batch_norm": "batch_norm", "layer_norm": "LayerNormKernelImpl",
                  "group_norm": "GroupNormKernelImpl"}[name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype}': "
                                  "normalisation needs a floating point input, e.g. x.float()")
    allowed = {input.dtype}
    if input.dtype in _HALF:
        allowed.add(_dtypes.float32)  # mixed precision: 16-bit activations, float32 parameters
    for p in params:
        if p is not None and p.dtype not in allowed:
            raise RuntimeError(
                f"mixed dtype (CPU): expect parameter to have scalar type of {input.dtype}, but "
                f"{name} got a parameter of dtype {p.dtype} for an input of dtype "
                f"{input.dtype}. Convert the input (x.to({p.dtype})) or the module "
                f"(model.to({input.dtype}))")
