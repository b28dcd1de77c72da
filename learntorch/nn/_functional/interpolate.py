"""``F.interpolate``: resize images by nearest neighbours or (bi/tri)linear interpolation.

Arguments as torch's: exactly one of ``size`` (the output's spatial size) and
``scale_factor`` (output size = floor(input size * factor)); ``mode`` 'nearest',
'nearest-exact', 'linear' (3-D input), 'bilinear' (4-D), 'trilinear' (5-D) or 'area'
(adaptive average pooling); ``align_corners`` for the linear modes only.

The arithmetic is the backend's interpolation family (``backends/numpy_families/
interpolation.py``: where each output reads its input, as torch computes it).  Both
modes are linear maps of the input, so each backward is the adjoint map -- a
scatter-add of the gradients -- and the adjoint's own backward is the forward again.
"""
import math
import numbers

from ... import backends
from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops._helpers import wrap
from .named import named
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}   # mode -> the input rank it needs
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


class UpsampleNearest(Function):
    """Nearest-neighbour resizing; ``names`` are torch's node names of this op and of the
    ops its derivatives make, in turn (``named`` gives each class its name)."""

    @staticmethod
    def forward(ctx, x, size, scales, exact, names):
        ctx.shape, ctx.scales, ctx.exact, ctx.names = x.shape, scales, exact, names
        return wrap(backends.current.upsample_nearest(x._data, size, scales, exact))

    @staticmethod
    def backward(ctx, grad):
        names = ctx.names[1:]
        return (named(UpsampleNearestBackward, names[0]).apply(
            grad, ctx.shape, ctx.scales, ctx.exact, names), None, None, None, None)


class UpsampleNearestBackward(Function):
    """Its adjoint: each output's gradient added back to the pixel it copied."""

    @staticmethod
    def forward(ctx, grad, shape, scales, exact, names):
        ctx.size, ctx.scales, ctx.exact, ctx.names = grad.shape[2:], scales, exact, names
        return wrap(backends.current.upsample_nearest_backward(grad._data, shape, scales, exact))

    @staticmethod
    def backward(ctx, gg):
        names = ctx.names[1:]
        return (named(UpsampleNearest, names[0]).apply(gg, ctx.size, ctx.scales, ctx.exact,
                                                        names), None, None, None, None)


class UpsampleLinear(Function):
    """Linear, bilinear or trilinear resizing (``names`` as for ``UpsampleNearest``)."""

    @staticmethod
    def forward(ctx, x, size, align_corners, scales, names):
        ctx.shape, ctx.align_corners, ctx.scales, ctx.names = x.shape, align_corners, scales, \
            names
        return wrap(backends.current.upsample_linear(x._data, size, align_corners, scales))

    @staticmethod
    def backward(ctx, grad):
        names = ctx.names[1:]
        return (named(UpsampleLinearBackward, names[0]).apply(
            grad, ctx.shape, ctx.align_corners, ctx.scales, names), None, None, None, None)


class UpsampleLinearBackward(Function):
    """Its adjoint: each output's gradient shared between the pixels it mixed."""

    @staticmethod
    def forward(ctx, grad, shape, align_corners, scales, names):
        ctx.size, ctx.align_corners, ctx.scales, ctx.names = grad.shape[2:], align_corners, \
            scales, names
        return wrap(backends.current.upsample_linear_backward(grad._data, shape, align_corners,
                                                              scales))

    @staticmethod
    def backward(ctx, gg):
        names = ctx.names[1:]
        return (named(UpsampleLinear, names[0]).apply(gg, ctx.size, ctx.align_corners,
                                                      ctx.scales, names), None, None, None, None)


def _names(stem):
    """torch's node names along a chain of derivatives: the op, its backward, the backward's
    backward (the op again), ..."""
    return tuple(f"{stem}{'BackwardBackward0' if i % 2 else 'Backward0'}" for i in range(8))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize ``input`` (N, C, *spatial) to ``size`` or by ``scale_factor``, as torch's."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dims = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != dims:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            out_size = list(size)
        else:
            out_size = [size] * dims
        for s in out_size:
            if isinstance(s, bool) or not isinstance(s, numbers.Integral):
                raise TypeError(f"interpolate(): size must be an int or a tuple of ints, got "
                                f"{size!r}")
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dims:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK)"
                    " format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dims
        out_size = [int(math.floor(n * s)) for n, s in zip(spatial, scales)]
        if recompute_scale_factor or mode == "area":
            scales = None  # the kernels then use the size ratio, as torch does
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by learntorch; "
                                  "resize without it, or smooth first (e.g. F.avg_pool2d)")
    if not 1 <= dims <= 3 or mode not in ("nearest", "nearest-exact", "area", *_LINEAR):
        if mode in ("bicubic", "lanczos") and 1 <= dims <= 3:
            raise NotImplementedError(f"interpolate(mode={mode!r}) is not supported by "
                                      "learntorch; use 'bilinear' or 'nearest'")
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {_MODES} (got {mode})")
    if mode in _LINEAR and input.ndim != _LINEAR[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode]}D input")
    if any(s <= 0 for s in out_size) or any(n <= 0 for n in spatial):
        names = ("D", "H", "W")[-dims:]
        shown = ", ".join(f"{a}: {n}" for a, n in zip(names, spatial))
        asked = ", ".join(f"{a}: {n}" for a, n in zip(names, out_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({shown}) output ({asked})")
    if not input.dtype.is_floating_point:
        kind = "nearest" if mode.startswith("nearest") else mode
        raise NotImplementedError(f"\"upsample_{kind}{dims}d\" not implemented for "
                                  f"'{input.dtype}': convert the input first, e.g. x.float()")
    out_size, scales = tuple(int(s) for s in out_size), tuple(scales or (None,) * dims)
    if mode == "area":
        pool = adaptive_avg_pool1d if dims == 1 else adaptive_avg_pool2d if dims == 2 else None
        if pool is None:
            raise NotImplementedError("interpolate(mode='area') of 5-D inputs needs "
                                      "adaptive_avg_pool3d, which learntorch lacks")
        return pool(input, out_size if dims > 1 else out_size[0])
    if mode in _LINEAR:
        names = _names(f"Upsample{mode.capitalize()}{dims}D")
        return named(UpsampleLinear, names[0]).apply(input, out_size, bool(align_corners),
                                                     scales, names)
    exact = mode == "nearest-exact"
    names = _names(f"UpsampleNearest{'Exact' if exact else ''}{dims}D")
    return named(UpsampleNearest, names[0]).apply(input, out_size, scales, exact, names)
