"""``F.unfold`` and ``F.fold``: the sliding windows of a convolution, as a tensor.

``unfold`` (im2col) copies every window of an (N, C, H, W) image into a column:
the result is (N, C*kh*kw, L) with one column per window position, L of them.  A
convolution is then one matrix product, ``weight.view(O, -1) @ unfold(x)``; a
learner can build one from this and ``matmul`` and compare it with ``F.conv2d``.

``fold`` (col2im) is its adjoint: it adds every entry of such a matrix back into the
pixel it was copied from, summing where windows overlap.  So each is the other's
backward -- ``unfold``'s gradient is ``fold`` of the gradient, and the other way
round -- and both can be differentiated any number of times.  The window copies
themselves are backend methods (``backends/numpy_families/conv.py``: ``im2col`` and
``col2im``; the Numba backend runs col2im compiled, cuda its own kernels).
"""
import numbers

from ... import backends
from ..._tensor import Tensor
from ...autograd.function import Function
from ...backends.geometry import Geometry, output_size
from ...ops._helpers import wrap


class Im2col(Function):
    """(N, C, H, W) -> (N, C*kh*kw, L): every window, one column each."""

    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, g):
        ctx.geometry = g
        cols = backends.current.im2col(x._data, g)                  # (N, C, kh, kw, Ho, Wo)
        n, c = cols.shape[:2]
        return wrap(cols.reshape(n, c * g.kernel[0] * g.kernel[1], g.out[0] * g.out[1]))

    @staticmethod
    def backward(ctx, grad):
        return Col2im.apply(grad, ctx.geometry), None


class Col2im(Function):
    """(N, C*kh*kw, L) -> (N, C, H, W): every entry added back to the pixel it came from."""

    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, g):
        ctx.geometry = g
        a = cols._data
        n, c = a.shape[0], a.shape[1] // (g.kernel[0] * g.kernel[1])
        return wrap(backends.current.col2im(a.reshape((n, c) + g.kernel + g.out), g))

    @staticmethod
    def backward(ctx, grad):
        return Im2col.apply(grad, ctx.geometry), None


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Every (kH, kW) window of ``input`` (N, C, H, W) or (C, H, W) as a column:
    (N, C*kH*kW, L), as ``torch.nn.functional.unfold``."""
    _require_tensor("unfold", input)
    kernel, dilation, padding, stride = _window_arguments("im2col", kernel_size, dilation,
                                                          padding, stride)
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range: unfold expects a 3-D (C, H, W) or 4-D "
                         f"(N, C, H, W) input, but got input of size {list(input.shape)}")
    if input.ndim > 4 or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    _check_dtype("im2col", input, allow_bool=True)
    size = tuple(input.shape[-2:])
    out = tuple(output_size(n, k, s, d, p, p)
                for n, k, s, d, p in zip(size, kernel, stride, dilation, padding))
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, calculated shape of the array of sliding blocks as {out}, but "
            "its components must be at least one.")
    g = Geometry(size, kernel, stride, dilation, padding, out)
    if input.ndim == 3:
        return Im2col.apply(input.unsqueeze(0), g).squeeze(0)
    return Im2col.apply(input, g)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum the columns of ``input`` (N, C*kH*kW, L) or (C*kH*kW, L) back into an image of
    ``output_size``: (N, C, H, W), as ``torch.nn.functional.fold``."""
    _require_tensor("fold", input)
    size = _pair("col2im", "output_size", output_size)
    kernel, dilation, padding, stride = _window_arguments("col2im", kernel_size, dilation,
                                                          padding, stride)
    batched = input.ndim == 3
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    _check_dtype("col2im", input)
    rows = input.shape[-2]
    if rows % (kernel[0] * kernel[1]):
        raise RuntimeError(
            f"Expected size of input's dimension {1 if batched else 0} to be divisible by the "
            f"product of kernel_size, but got input.size({1 if batched else 0})={rows} and "
            f"kernel_size={kernel}.")
    out = tuple(_output_size(n, k, s, d, p)
                for n, k, s, d, p in zip(size, kernel, stride, dilation, padding))
    if out[0] * out[1] != input.shape[-1] or out[0] < 1 or out[1] < 1:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}, expected size of input's dimension "
            f"{2 if batched else 1} to match the calculated number of sliding blocks "
            f"{max(out[0], 0)} * {max(out[1], 0)} = {max(out[0], 0) * max(out[1], 0)}, but got "
            f"input.size({2 if batched else 1})={input.shape[-1]}.")
    g = Geometry(size, kernel, stride, dilation, padding, out)
    if not batched:
        return Col2im.apply(input.unsqueeze(0), g).squeeze(0)
    return Col2im.apply(input, g)


def _output_size(n, k, s, d, p):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _window_arguments(name, kernel_size, dilation, padding, stride):
    """kernel, dilation, padding, stride as pairs, with torch's checks."""
    kernel, dilation, padding, stride = (
        _pair(name, what, value) for what, value in (("kernel_size", kernel_size),
                                                      ("dilation", dilation),
                                                      ("padding", padding), ("stride", stride)))
    for what, short, values, low in (("kernel size", "kernel", kernel, 1),
                                     ("stride", "stride", stride, 1),
                                     ("dilation", "dilation", dilation, 1),
                                     ("padding", "pad", padding, 0)):
        if min(values) < low:
            rule = "greater than zero" if low else "non-negative"
            raise RuntimeError(f"{what} should be {rule}, but got {short}_height: {values[0]} "
                               f"{short}_width: {values[1]}")
    return kernel, dilation, padding, stride


def _pair(name, what, value):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * 2
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{name}(): argument '{what}' must be tuple of ints, but found "
                                f"element of type {type(v).__name__} at pos {i}")
        if len(value) != 2:
            raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(value)}")
        return tuple(int(v) for v in value)
    raise TypeError(f"{name}(): argument '{what}' must be tuple of ints, but found element of "
                    f"type {type(value).__name__} at pos 0")


def _require_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _check_dtype(name, input, allow_bool=False):
    if not (input.dtype.is_floating_point or (allow_bool and input.dtype.name == "bool")):
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for '{input.dtype}': "
                                  "convert the input first, e.g. input.float()")
