"""Pooling: ``F.max_pool2d``, ``F.avg_pool2d``, the adaptive forms and the 1-D ones.

Pooling slides a window over every channel on its own and keeps one number per
window: the largest (max) or the mean (avg).  The windows are the convolution's
``Geometry``; the arithmetic is the backend's pooling family
(``backends/numpy_families/pooling.py``, which explains where each gradient goes;
the Numba backend runs max pooling compiled, cuda its own kernels).  This file checks
the arguments as torch does and records the ops.

Each backward is an op of its own, so that a gradient can be differentiated again
(``create_graph=True``):

* max: the gradient is routed to the winners (``max_pool2d_backward``); differentiated
  in the gradient, that routing is read back: gather the incoming gradient at the
  winners' positions.
* avg, adaptive avg: linear maps, whose backward is the adjoint map; the adjoint's
  backward is the forward again.

The 1-D poolings view (N, C, L) as (N, C, 1, L) and pool with windows of height 1,
as torch does (their result's ``grad_fn`` is ``SqueezeBackward1``, as in torch).
"""
import numbers

from ... import backends
from ..._tensor import Tensor
from ...autograd.function import Function
from ...backends.geometry import Geometry, avg_divisor, output_size
from ...ops._helpers import wrap

_TORCH_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                     "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                     "bool": "Bool"}


# ---------------------------------------------------------------- max pooling
class MaxPool2d(Function):
    """Max over every window; returns (values, int64 flat indices) like torch's op."""

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, g):
        out, indices = backends.current.max_pool2d(x._data, g)
        indices = wrap(indices)
        ctx.geometry = g
        # the returned indices are saved (not a copy): changing them in place, or x (whose
        # maxima they point to), is reported at backward, as torch does
        ctx.save_for_backward(x, indices)
        ctx.set_materialize_grads(False)  # the indices output never gets a gradient
        return wrap(out), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        x, indices = ctx.saved_tensors
        return MaxPool2dBackward.apply(grad, indices, ctx.geometry), None


class MaxPool2dBackward(Function):
    """dx of max pooling: every window's gradient goes to the pixel that won it.

    Linear in ``grad``; its derivative reads the routing back: the incoming
    gradient gathered at the winners' positions (torch's max_pool double backward).
    """

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, g):
        ctx.save_for_backward(indices)
        return wrap(backends.current.max_pool2d_backward(grad._data, indices._data, g))

    @staticmethod
    def backward(ctx, gg):
        indices, = ctx.saved_tensors
        return at_winners(gg, indices), None, None


def at_winners(gg, indices):
    """``gg`` (..., H, W) read at each window's winner: (..., Ho, Wo)."""
    return gg.flatten(-2).gather(-1, indices.flatten(-2)).reshape(indices.shape)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over (kH, kW) windows of an (N, C, H, W) or (C, H, W) input, as torch's."""
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


def _window_arguments(name, kernel_size, stride, padding):
    """kernel, stride (the kernel when omitted, as in torch) and padding as pairs."""
    kernel = _pair(name, "kernel_size", kernel_size,
                   "must either be a single int, or a tuple of two ints")
    if stride is None or stride == () or stride == []:
        stride = kernel
    else:
        stride = _pair(name, "stride", stride,
                       "must either be omitted, a single int, or a tuple of two ints")
    padding = _pair(name, "padding", padding, "must either be a single int, or a tuple of two ints")
    return kernel, stride, padding


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool2d that always returns (values, indices), whatever ``return_indices`` says."""
    _require_tensor("max_pool2d", input)
    kernel, stride, padding = _window_arguments("max_pool2d", kernel_size, stride, padding)
    dilation = _pair("max_pool2d", "dilation", dilation, "must be either a single int, or a tuple "
                     "of two ints")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got "
                           f"input of size {list(input.shape)}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool': convert the input "
                                  "first, e.g. input.float()")
    g = _pool_geometry(input, kernel, stride, padding, dilation, ceil_mode)
    return MaxPool2d.apply(input, g)


# ---------------------------------------------------------------- average pooling
class AvgPool2d(Function):
    """Mean over every window: the sum of the window divided by ``divisor`` (Ho, Wo)."""

    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, g, divisor):
        ctx.geometry, ctx.divisor = g, divisor
        return wrap(backends.current.avg_pool2d(x._data, g, divisor))

    @staticmethod
    def backward(ctx, grad):
        return AvgPool2dBackward.apply(grad, ctx.geometry, ctx.divisor), None, None


class AvgPool2dBackward(Function):
    """dx of average pooling: every pixel of a window gets grad / divisor.  Its own
    derivative is average pooling again (the adjoint of the adjoint)."""

    node_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, g, divisor):
        ctx.geometry, ctx.divisor = g, divisor
        return wrap(backends.current.avg_pool2d_backward(grad._data, g, divisor))

    @staticmethod
    def backward(ctx, gg):
        return AvgPool2d.apply(gg, ctx.geometry, ctx.divisor), None, None


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over (kH, kW) windows of an (N, C, H, W) or (C, H, W) input, as torch's."""
    _require_tensor("avg_pool2d", input)
    kernel, stride, padding = _window_arguments("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override,
                                                                numbers.Integral):
            raise TypeError(f"avg_pool2d(): argument 'divisor_override' (position 7) must be "
                            f"int, not {type(divisor_override).__name__}")
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero (divisor_override=0); leave it None to "
                               "divide by the window size")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"avg_pool2d\" not implemented for 'Bool': convert the input "
                                  "first, e.g. input.float()")
    g = _pool_geometry(input, kernel, stride, padding, (1, 1), ceil_mode)
    return AvgPool2d.apply(input, g, avg_divisor(g, count_include_pad, divisor_override))


# ---------------------------------------------------------------- adaptive average pooling
class AdaptiveAvgPool2d(Function):
    """out = A_h @ x @ A_w^T on every plane, with adaptive averaging windows."""

    node_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, out_size):
        ctx.input_size = x.shape[-2:]
        return wrap(backends.current.adaptive_avg_pool2d(x._data, out_size))

    @staticmethod
    def backward(ctx, grad):
        return AdaptiveAvgPool2dBackward.apply(grad, ctx.input_size), None


class AdaptiveAvgPool2dBackward(Function):
    """dx = A_h^T @ grad @ A_w; its own derivative is the pooling again."""

    node_name = "AdaptiveAvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input_size):
        ctx.out_size = grad.shape[-2:]
        return wrap(backends.current.adaptive_avg_pool2d_backward(grad._data, input_size))

    @staticmethod
    def backward(ctx, gg):
        return AdaptiveAvgPool2d.apply(gg, ctx.out_size), None


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (out_H, out_W) whatever the input size; None keeps a size."""
    return AdaptiveAvgPool2d.apply(input, _adaptive_sizes("adaptive_avg_pool2d", input,
                                                          output_size))


# ---------------------------------------------------------------- adaptive max pooling
class AdaptiveMaxPool2d(Function):
    """Max over adaptive windows; returns (values, int64 flat indices) like torch's op."""

    node_name = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def forward(ctx, x, out_size):
        out, indices = backends.current.adaptive_max_pool2d(x._data, out_size)
        indices = wrap(indices)
        ctx.input_size = x.shape[-2:]
        ctx.save_for_backward(x, indices)
        ctx.set_materialize_grads(False)
        return wrap(out), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        x, indices = ctx.saved_tensors
        return AdaptiveMaxPool2dBackward.apply(grad, indices, ctx.input_size), None


class AdaptiveMaxPool2dBackward(Function):
    """dx of adaptive max pooling: each window's gradient to its winner (see MaxPool2dBackward)."""

    node_name = "AdaptiveMaxPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, input_size):
        ctx.save_for_backward(indices)
        return wrap(backends.current.adaptive_max_pool2d_backward(grad._data, indices._data,
                                                                  input_size))

    @staticmethod
    def backward(ctx, gg):
        indices, = ctx.saved_tensors
        return at_winners(gg, indices), None, None


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (out_H, out_W) whatever the input size; None keeps a size."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d that always returns (values, indices)."""
    return AdaptiveMaxPool2d.apply(input, _adaptive_sizes("adaptive_max_pool2d", input,
                                                          output_size))


def _adaptive_sizes(name, input, output_size):
    """(out_H, out_W) from an int, a pair or a pair with None (keep that size), checked."""
    _require_tensor(name, input)
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:  # (torch's two messages differ)
            rule = ("(): internal error: output_size.size() must be 2" if "max" in name
                    else ": output_size must be 2")
            raise RuntimeError(f"{name}{rule} (got output_size={output_size!r}: give (out_H, "
                               "out_W) or one int)")
        sizes = tuple(output_size)
    else:
        sizes = (output_size, output_size)
    for s in sizes:
        if s is not None and (isinstance(s, bool) or not isinstance(s, numbers.Integral)):
            raise TypeError(f"{name}(): output_size must be an int, None or a tuple of two of "
                            f"them, got {output_size!r}")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    for d in range(1 if input.ndim == 3 else 2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {d} being empty")
    sizes = tuple(int(input.shape[-2 + k]) if s is None else int(s) for k, s in enumerate(sizes))
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{sizes[0]}, {sizes[1]}}}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{_TORCH_TYPE_NAMES[input.dtype.name]}': convert "
            "the input first, e.g. input.float()")
    return sizes


# ---------------------------------------------------------------- 1-D: windows of height 1
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over windows of an (N, C, L) or (C, L) input, as torch's."""
    _require_tensor("max_pool1d", input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    kernel, stride, padding, dilation = (
        _single("max_pool1d", what, value) for what, value in
        (("kernel_size", kernel_size), ("stride", kernel_size if stride is None else stride),
         ("padding", padding), ("dilation", dilation)))
    if padding > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={padding} and kernel_size={kernel}")
    out, indices = max_pool2d_with_indices(input.unsqueeze(-2), (1, kernel), (1, stride),
                                           (0, padding), (1, dilation), ceil_mode)
    out = out.squeeze(-2)
    return (out, indices.squeeze(-2)) if return_indices else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Mean over windows of an (N, C, L) or (C, L) input, as torch's."""
    _require_tensor("avg_pool1d", input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for avg_pool1d)")
    kernel, stride, padding = (
        _single("avg_pool1d", what, value) for what, value in
        (("kernel_size", kernel_size), ("stride", kernel_size if stride is None else stride),
         ("padding", padding)))
    return avg_pool2d(input.unsqueeze(-2), (1, kernel), (1, stride), (0, padding), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of an (N, C, L) or (C, L) input to ``output_size`` positions."""
    _require_tensor("adaptive_avg_pool1d", input)
    _check_1d("adaptive_avg_pool1d", input)
    size = _single("adaptive_avg_pool1d", "output_size", output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of an (N, C, L) or (C, L) input to ``output_size`` positions."""
    _require_tensor("adaptive_max_pool1d", input)
    _check_1d("adaptive_max_pool1d", input)
    size = _single("adaptive_max_pool1d", "output_size", output_size)
    out, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices=True)
    out = out.squeeze(-2)
    return (out, indices.squeeze(-2)) if return_indices else out


def _check_1d(name, input):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{name}(): Expected 2D or 3D tensor, but got {list(input.shape)}")


def _single(name, what, value):
    """An int, or a tuple/list of one int (torch's 1-D window arguments)."""
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"{name}() {what} must be an int, list of ints or tuple of ints "
                               f"of size 1 but got size {len(value)}")
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}(): argument '{what}' must be an int or a tuple of one int, not "
                        f"{type(value).__name__}")
    return int(value)


# ---------------------------------------------------------------- shared checks
def _require_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}; wrap data with torch.tensor(...)")


def _pair(name, what, value, rule):
    """An int or a tuple/list of one or two ints, as a pair; torch's errors otherwise."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        if len(value) == 1:
            return (int(value[0]),) * 2
        if len(value) == 2:
            return tuple(int(v) for v in value)
        raise RuntimeError(f"{name}: {what} {rule} (got {what}={list(value)})")
    raise TypeError(f"{name}(): argument '{what}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def _pool_geometry(input, kernel, stride, padding, dilation, ceil_mode):
    """Check the window arguments against the input as torch does; return the Geometry."""
    kh, kw = kernel
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if 0 in stride:
        raise RuntimeError(f"stride should not be zero (got stride={stride})")
    if stride[0] < 0 or stride[1] < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} "
                           f"dW: {stride[1]}")
    if dilation[0] <= 0 or dilation[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for p in padding:
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}")
    if padding[0] > kh // 2 or padding[1] > kw // 2:  # torch also bounds it by the bare kernel
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {padding[1]}, padH = {padding[0]}, kW = {kw}, kH = {kh}")
    size = tuple(input.shape[-2:])
    if any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    out = tuple(output_size(n, k, s, d, p, p, ceil_mode)
                for n, k, s, d, p in zip(size, kernel, stride, dilation, padding))
    if out[0] < 1 or out[1] < 1:
        c = input.shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{size[0]}x{size[1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small: the window "
            f"(kernel_size={kernel}, dilation={dilation}) must fit into the padded input")
    return Geometry(size, kernel, stride, dilation, padding, out)
