"""``F.conv1d``, ``F.conv2d`` and their transposes: convolution through the backend.

The arithmetic is three methods of the backend contract (``backends/numpy_families/
conv.py`` explains them with a picture: im2col + one matrix product on the cpu; one
GPU thread per output element on cuda)::

    out = conv2d(x, W) + b                    the forward
    dx  = conv2d_backward_input(g, W)         = col2im(W^T @ g)
    dW  = conv2d_backward_weight(g, x)        = g @ im2col(x)^T, summed over the images
    db  = g summed over N, Ho, Wo

for an input x (N, C, H, W), a weight (O, C/groups, kh, kw) and g = dLoss/dout.  This
file checks the arguments as torch does, works out where the windows lie (a
``Geometry``) and records the ops.

The two gradients are operations of their own (``ConvolutionBackwardInput``,
``ConvolutionBackwardWeight``): each is linear in both of its inputs, so its own
backward is again a convolution or one of the two gradients -- which is what
``create_graph=True`` differentiates (a gradient penalty, Hessian products).  The
transposed convolution (``F.conv_transpose2d``) *is* ``conv2d_backward_input``: the
adjoint of a convolution, spreading every input pixel over a window of outputs.

A 1-D convolution is the same thing on images of height 1: (N, C, L) is viewed as
(N, C, 1, L) and the kernel (O, C, k) as (O, C, 1, k), no copy.
"""
import numbers

from ... import backends
from ..._tensor import Tensor
from ...autograd.function import Function, autocast_inputs
from ...backends.geometry import Geometry, output_size
from ...ops._helpers import check_same_device, wrap
from .named import named


class Convolution(Function):
    """One recorded convolution (1-D or 2-D); ``forward`` receives checked arguments."""

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, geometry, groups):
        out = backends.current.conv2d(_as_4d(x._data), _as_4d(weight._data),
                                      None if bias is None else bias._data, geometry, groups)
        ctx.geometry, ctx.groups = geometry, groups
        # like torch, keep the input, not its kh*kw times larger im2col matrix: backward
        # copies the windows again (cheap next to the products), and memory stays small
        ctx.save_for_backward(x, weight)
        return wrap(_as_dims(out, x.ndim))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        g, groups = ctx.geometry, ctx.groups
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        return (ConvolutionBackwardInput.apply(grad, weight, g, groups) if need_x else None,
                ConvolutionBackwardWeight.apply(grad, x, g, groups) if need_w else None,
                grad.sum(dim=bias_dims(grad.ndim)) if need_b else None, None, None)


class ConvolutionBackwardInput(Function):
    """dx = conv2d_backward_input(grad, W): linear in grad and in W, so its derivatives are
    a convolution (d/dgrad) and a weight gradient (d/dW)."""

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, weight, geometry, groups):
        ctx.geometry, ctx.groups = geometry, groups
        ctx.save_for_backward(grad, weight)
        return wrap(_as_dims(backends.current.conv2d_backward_input(
            _as_4d(grad._data), _as_4d(weight._data), geometry, groups), weight.ndim))

    @staticmethod
    def backward(ctx, gg):
        # <gg, dx(grad, W)> = <grad, conv2d(gg, W)>: differentiate that in grad and in W
        grad, weight = ctx.saved_tensors
        g, groups = ctx.geometry, ctx.groups
        return (Convolution.apply(gg, weight, None, g, groups) if ctx.needs_input_grad[0]
                else None,
                ConvolutionBackwardWeight.apply(grad, gg, g, groups) if ctx.needs_input_grad[1]
                else None, None, None)


class ConvolutionBackwardWeight(Function):
    """dW = conv2d_backward_weight(grad, x): linear in grad and in x, so its derivatives are
    a convolution (d/dgrad) and an input gradient (d/dx)."""

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, geometry, groups):
        ctx.geometry, ctx.groups = geometry, groups
        ctx.save_for_backward(grad, x)
        gw = backends.current.conv2d_backward_weight(_as_4d(grad._data), _as_4d(x._data),
                                                     geometry, groups)
        return wrap(gw if x.ndim == 4 else gw.reshape(gw.shape[:2] + gw.shape[3:]))

    @staticmethod
    def backward(ctx, gg):
        # <gg, dW(grad, x)> = <grad, conv2d(x, gg)>: differentiate that in grad and in x
        grad, x = ctx.saved_tensors
        g, groups = ctx.geometry, ctx.groups
        return (Convolution.apply(x, gg, None, g, groups) if ctx.needs_input_grad[0] else None,
                ConvolutionBackwardInput.apply(grad, gg, g, groups) if ctx.needs_input_grad[1]
                else None, None, None)


class ConvolutionTranspose(Function):
    """The transposed convolution: ``conv2d_backward_input(x, W)`` plus the bias.

    Its geometry describes the *convolution it transposes*, from this op's output
    (``geometry.size``) to its input (``geometry.out``).
    """

    node_name = "ConvolutionBackward0"  # torch records both directions as one op

    @staticmethod
    def forward(ctx, x, weight, bias, geometry, groups):
        backend = backends.current
        out = backend.conv2d_backward_input(_as_4d(x._data), _as_4d(weight._data), geometry,
                                            groups)
        if bias is not None:
            out = backend.add(out, bias._data.reshape(-1, 1, 1))
        ctx.geometry, ctx.groups = geometry, groups
        ctx.save_for_backward(x, weight)
        return wrap(_as_dims(out, x.ndim))

    @staticmethod
    def backward(ctx, grad):
        # out = dx(x, W) of the convolution it transposes: <grad, out> = <x, conv2d(grad, W)>
        # (a convolution under the name torch gives the backward of a convolution op)
        x, weight = ctx.saved_tensors
        g, groups = ctx.geometry, ctx.groups
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        return (named(Convolution, "ConvolutionBackwardBackward0").apply(grad, weight, None, g,
                                                                         groups)
                if need_x else None,
                ConvolutionBackwardWeight.apply(x, grad, g, groups) if need_w else None,
                grad.sum(dim=bias_dims(grad.ndim)) if need_b else None, None, None)


def bias_dims(ndim):
    """The dims a bias (one value per channel, dim 1) was broadcast along."""
    return [d for d in range(ndim) if d != 1]


def _as_4d(a):
    """A 1-D convolution's (N, C, L) array as (N, C, 1, L): a view, nothing copied."""
    return a if a.ndim == 4 else a.reshape(a.shape[:2] + (1,) + a.shape[2:])


def _as_dims(a, ndim):
    """A 4-D result back in the caller's rank: a 1-D op drops the unit height."""
    return a if ndim == 4 else a.reshape(a.shape[:2] + a.shape[3:])


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
    _check_window_arguments(stride, padding, dilation, groups)
    if padding == "same" and any(s != 1 for s in stride):
        raise RuntimeError(f"padding='same' is not supported for strided convolutions (got "
                           f"stride={list(stride)}); use stride=1 or give the padding as numbers")
    _check_ranks(name, dims, input, weight, "out_channels, in_channels/groups")
    if input.ndim == dims + 1:  # one unbatched sample: a batch of one, as torch does
        out = _convolution(name, dims, input.unsqueeze(0), weight, bias, stride, padding,
                           dilation, groups)
        return out.squeeze(0)
    _check_shapes(input, weight, bias, groups)
    input, weight, bias = autocast_inputs(Convolution, input, weight, bias)
    _check_dtypes(name, input, weight, bias)
    check_same_device(input, weight, bias)
    geometry = _geometry(input, weight, stride, padding, dilation)
    return Convolution.apply(input, weight, bias, geometry, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 2-D convolution of ``input`` (N, C_in, H, W) or (C_in, H, W) with
    ``weight`` (C_in, C_out/groups, kH, kW), as ``torch.nn.functional.conv_transpose2d``:
    the gradient of a convolution with that weight, spreading every input pixel over a
    window of the output ("deconvolution", upsampling by ``stride``)."""
    return _transposed("conv_transpose2d", 2, input, weight, bias, stride, padding,
                       output_padding, groups, dilation)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 1-D convolution of ``input`` (N, C_in, L) or (C_in, L) with ``weight``
    (C_in, C_out/groups, k), as ``torch.nn.functional.conv_transpose1d``."""
    return _transposed("conv_transpose1d", 1, input, weight, bias, stride, padding,
                       output_padding, groups, dilation)


def _transposed(name, dims, input, weight, bias, stride, padding, output_padding, groups,
                dilation):
    _check_types(name, input, weight, bias, groups)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str (a "
                        "transposed convolution takes its padding as numbers)")
    stride, padding, dilation, output_padding = (
        _expand(name, what, value, dims) for what, value in
        (("stride", stride), ("padding", padding), ("dilation", dilation),
         ("output_padding", output_padding)))
    _check_window_arguments(stride, padding, dilation, groups)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        sizes = " ".join(f"{what}_{axis}: {v}" for what, values in
                         (("output_padding", output_padding), ("stride", stride),
                          ("dilation", dilation))
                         for axis, v in zip(("height", "width")[-dims:], values))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got {sizes}")
    _check_ranks(name, dims, input, weight, "in_channels, out_channels/groups")
    if input.ndim == dims + 1:  # one unbatched sample: a batch of one, as torch does
        return _transposed(name, dims, input.unsqueeze(0), weight, bias, stride, padding,
                           output_padding, groups, dilation).squeeze(0)
    c_in, c_out = weight.shape[0], weight.shape[1] * groups
    if c_in < groups or c_in % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead (in_channels must be a "
            "multiple of groups)")
    if input.shape[1] != c_in:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {c_in} channels, but got {input.shape[1]} "
            "channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != c_out):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {c_out} elements, but got bias of size {list(bias.shape)} "
            "instead")
    input, weight, bias = autocast_inputs(ConvolutionTranspose, input, weight, bias)
    _check_dtypes(name, input, weight, bias)
    check_same_device(input, weight, bias)
    size, kernel = tuple(input.shape[2:]), tuple(weight.shape[2:])
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, s, p, d, k, op
                in zip(size, stride, padding, dilation, kernel, output_padding))
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, size))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    # the convolution this one transposes runs from our output (its input) to our input
    geometry = Geometry(out, kernel, stride, dilation, padding, size)
    if dims == 1:
        geometry = Geometry((1,) + out, (1,) + kernel, (1,) + stride, (1,) + dilation,
                            (0,) + padding, (1,) + size)
    return ConvolutionTranspose.apply(input, weight, bias, geometry, groups)


def _check_ranks(name, dims, input, weight, channels):
    """An unbatched or batched input, and a weight (``channels``, *kernel), as torch wants."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}")
    if weight.ndim != dims + 2:
        kernel = "kH, kW" if dims == 2 else "kL"
        raise RuntimeError(
            f"{name} expects a {dims + 2}-D weight ({channels}, {kernel}), but got weight of "
            f"size {list(weight.shape)}")


def _check_window_arguments(stride, padding, dilation, groups):
    """torch's rules for the numbers every convolution takes."""
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
