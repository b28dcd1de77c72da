"""Shape operations.  Most are *views*: a new tensor over the same memory.

A view op copies nothing: it only computes new shape and strides over the
same storage (``strides.py`` holds those rules), so a write through the
view is seen by its base, and the two share one version counter.

* ``permute``/``transpose`` reorder the strides;
* ``unsqueeze`` inserts a size-1 dim, ``squeeze`` removes them;
* ``expand`` gives a stretched dim stride 0 (every index reads the same memory);
* ``narrow``/``select``/slicing move the offset and scale strides by the step;
* ``view`` merges/splits dims, which is possible only when the strides allow it
  (``strides.view_strides`` is torch's rule); ``reshape`` is a view when
  possible and a copy otherwise, while ``view`` refuses instead of copying.

Backward of a view maps the gradient's shape back: reshape it, permute it
back, or (for ``expand``) sum it over the expanded dims -- which the engine
does on its own, since that is broadcasting's backward.
"""
import math

import numpy as np

from .. import backends
from ..autograd.function import Function
from ._helpers import wrap
from ._views import view_of
from .strides import (clone_strides, contiguous_strides, slice_array, strided_array,
                      unsqueeze_array, view_strides)


# ---------------------------------------------------------------- argument parsing
def _infer_shape(shape, numel):
    """``shape`` with its one ``-1`` replaced by what makes the element count ``numel``."""
    shape = list(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError(f"only one dimension can be inferred (shape {shape} has "
                           f"{len(unknown)} entries equal to -1)")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if unknown:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of {numel} elements into shape {shape} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        if numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel} (no "
                               f"whole number of elements fits the -1)")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}: the new "
                           "shape must hold exactly as many elements as the input")
    return tuple(shape)


def _shape_args(shape):
    """Accept both ``f(2, 3)`` and ``f((2, 3))``, as torch does."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if not hasattr(s, "__index__"):  # ints, numpy ints and integer tensors, never floats
            raise TypeError(f"expected a sequence of integers for the shape, but got an element "
                            f"of type {type(s).__name__} ({s!r})")
        out.append(s.__index__())
    return tuple(out)


# ---------------------------------------------------------------- views
class View(Function):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        strides = view_strides(x.shape, x.stride(), shape)
        if strides is None:
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride (at least one "
                f"dimension spans across two contiguous subspaces): input shape "
                f"{list(x.shape)} with stride {list(x.stride())}, requested {list(shape)}. "
                "Use .reshape(...) instead (or call .contiguous() before .view).")
        return view_of(ctx, x, strided_array(x._data, shape, strides))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class UnsafeView(Function):
    """``reshape`` when no view is possible: a contiguous copy, then a view of that copy."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        # a row-major copy (as torch reads), reshaped: on either device, a cuda array included
        out = backends.current.copy(x._data).reshape(shape)
        return wrap(strided_array(out, shape, contiguous_strides(shape)))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class Permute(Function):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return view_of(ctx, x, x._data.transpose(dims))

    @staticmethod
    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)  # the permutation that puts every dim back
        for position, d in enumerate(ctx.dims):
            inverse[d] = position
        return grad.permute(tuple(inverse)), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, x, d0, d1):
        ctx.d0, ctx.d1 = d0, d1
        return view_of(ctx, x, x._data.swapaxes(d0, d1))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(ctx.d0, ctx.d1), None, None


class T(Function):
    """``x.t()``: transpose a matrix; a vector or a scalar comes back as a view of itself."""

    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, x):
        return view_of(ctx, x, x._data.T)

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


class Expand(Function):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, x, shape, strides):
        # stride 0 along stretched dims: every index there reads the same memory
        return view_of(ctx, x, strided_array(x._data, shape, strides))

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None  # the engine sums it over the expanded dims


class Squeeze(Function):
    node_name = "SqueezeBackward0"  # squeeze(): every size-1 dim

    @staticmethod
    def forward(ctx, x, dims):
        ctx.input_shape = x.shape
        return view_of(ctx, x, x._data.squeeze(axis=dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class SqueezeDim(Squeeze):
    node_name = "SqueezeBackward1"  # squeeze(dim)


class SqueezeDims(Squeeze):
    node_name = "SqueezeBackward2"  # squeeze((d0, d1, ...))


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return view_of(ctx, x, unsqueeze_array(x._data, dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


class Narrow(Function):
    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, x, dim, start, length):
        ctx.input_shape, ctx.dim, ctx.start = x.shape, dim, start
        return view_of(ctx, x, slice_array(x._data, dim, slice(start, start + length)))

    @staticmethod
    def backward(ctx, grad):
        widths = [(0, 0)] * grad.ndim
        widths[ctx.dim] = (ctx.start, ctx.input_shape[ctx.dim] - ctx.start - grad.shape[ctx.dim])
        from .padding import constant_pad
        return constant_pad(grad, widths), None, None, None


# ---------------------------------------------------------------- copies
class Contiguous(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return wrap(backends.current.copy(x._data, contiguous_strides(x.shape)))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Clone(Function):
    """A copy; like torch's ``preserve_format`` it keeps the input's layout in memory."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return wrap(backends.current.copy(x._data, clone_strides(x.shape, x.stride())))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Flip(Function):
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return wrap(backends.current.flip(x._data, dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.flip(ctx.dims), None


class Repeat(Function):
    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, x, repeats):
        ctx.input_shape, ctx.repeats = x.shape, repeats
        return wrap(backends.current.tile(x._data, repeats))

    @staticmethod
    def backward(ctx, grad):
        # view each repeated dim as (repeats, size) and sum the copies
        shape = (1,) * (len(ctx.repeats) - len(ctx.input_shape)) + tuple(ctx.input_shape)
        split = []
        for r, s in zip(ctx.repeats, shape):
            split += [r, s]
        g = grad.reshape(split).sum(dim=tuple(range(0, len(split), 2)))
        return g.reshape(ctx.input_shape), None


class ToDtype(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.input_dtype = x._dtype
        return wrap(backends.current.cast(x._data, dtype.np))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.input_dtype), None


# ---------------------------------------------------------------- public functions
def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        return _view_as_dtype(input, shape[0])
    shape = _infer_shape(_shape_args(shape), input._data.size)
    return View.apply(input, shape)


def _view_as_dtype(input, dtype):
    """``x.view(torch.int32)``: the same bytes read as another dtype (not differentiable)."""
    from .. import _dtypes
    dtype = _dtypes.to_dtype(dtype)
    if dtype.itemsize != input._dtype.itemsize:
        raise RuntimeError(f"view(dtype) between element sizes {input._dtype.itemsize} and "
                           f"{dtype.itemsize} bytes ({input._dtype} -> {dtype}) is not "
                           "supported by learntorch; use .to(dtype) to convert the values")
    return input._view_of(input._data.view(dtype.np))


def reshape(input, *shape_args, shape=None):
    shape = _infer_shape(_shape_args(shape_args if shape is None else (shape,)), input._data.size)
    if view_strides(input.shape, input.stride(), shape) is not None:
        return View.apply(input, shape)
    return UnsafeView.apply(input, shape)  # the strides forbid a view: copy


def permute(input, *dims_args, dims=None):
    dims = _shape_args(dims_args if dims is None else (dims,))
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}")
    norm = tuple(input._wrap_dim(d) for d in dims)
    if len(set(norm)) != len(norm):
        raise RuntimeError(f"permute(): duplicate dims are not allowed: {list(dims)}")
    return Permute.apply(input, norm)


def transpose(input, dim0, dim1):
    d0, d1 = input._wrap_dim(dim0), input._wrap_dim(dim1)
    if input.ndim == 0:
        return View.apply(input, ())
    return Transpose.apply(input, d0, d1)


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D; "
                           "use transpose(dim0, dim1) or .mT for batches")
    return T.apply(input)


def squeeze(input, dim=None):
    if dim is None:
        dims = tuple(i for i, s in enumerate(input.shape) if s == 1)
        return Squeeze.apply(input, dims)
    cls = SqueezeDim if isinstance(dim, (int, np.integer)) else SqueezeDims
    # dims whose size is not 1 are left alone, as in torch
    dims = tuple(d for d in input._wrap_dims(dim)
                 if input.ndim and input.shape[d] == 1)
    return cls.apply(input, dims)


def unsqueeze(input, dim):
    d = input._wrap_dim(dim, input.ndim + 1)
    return Unsqueeze.apply(input, d)


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = input._wrap_dim(start_dim), input._wrap_dim(end_dim)
    if s > e:
        raise RuntimeError(f"flatten() has invalid args: start_dim cannot come after end_dim "
                           f"(start_dim={start_dim}, end_dim={end_dim} for a {input.ndim}-D "
                           "tensor)")
    if s == e:
        return input  # nothing to merge: torch returns the input itself
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = input._wrap_dim(dim)
    sizes = _shape_args((sizes,))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError(f"unflatten: only one dimension can be inferred, got sizes "
                           f"{list(sizes)}")
    size = input.shape[d]
    known = math.prod([s for s in sizes if s != -1])
    inferred = [size // known if s == -1 and known and size % known == 0 else s for s in sizes]
    if -1 in inferred or math.prod(inferred) != size:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({size}) in the input tensor")
    return view(input, tuple(input.shape[:d]) + tuple(inferred) + tuple(input.shape[d + 1:]))


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({input.ndim}); tensor shape {list(input.shape)}")
    if input.ndim == 0:  # a scalar: every element of the result is that one element
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"The expanded size of the tensor ({min(sizes)}) isn't allowed in "
                               f"a leading, non-existing dimension: target sizes {list(sizes)}")
        return Expand.apply(input, sizes, (0,) * len(sizes))
    # torch's inferExpandGeometry, from the last dim backwards
    shape, strides = list(sizes), [0] * len(sizes)
    lead = len(sizes) - input.ndim
    for i in range(len(sizes) - 1, -1, -1):
        target = sizes[i]
        if i < lead:  # a new leading dim
            if target < 0:
                raise RuntimeError(f"The expanded size of the tensor ({target}) isn't allowed in "
                                   f"a leading, non-existing dimension {i}")
            size = 1
            stride = shape[i + 1] * strides[i + 1] if i + 1 < len(sizes) else 1
        else:
            size, stride = input.shape[i - lead], input.stride(i - lead)
            if target == -1:
                target = size
        if size != target:
            if size != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(input.shape)}")
            stride = 0  # a size-1 dim stretched: all its indices read the same element
        shape[i], strides[i] = target, stride
    return Expand.apply(input, tuple(shape), tuple(strides))


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def narrow(input, dim, start, length):
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = input._wrap_dim(dim)
    size = input.shape[d]
    start, length = int(start), int(length)
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return Narrow.apply(input, d, start, length)


def contiguous(input, memory_format=None):
    if input._data.flags["C_CONTIGUOUS"]:
        return input
    return Contiguous.apply(input)


def clone(input, memory_format=None):
    return Clone.apply(input)


def flip(input, *dims_args, dims=None):
    dims = _shape_args(dims_args if dims is None else (dims,))
    dims = input._wrap_dims(dims)
    return Flip.apply(input, dims if input.ndim else ())  # (a number flips to itself)


def repeat(input, *repeats):
    repeats = _shape_args(repeats)
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           f"of dimensions of tensor ({len(repeats)} repeats for shape "
                           f"{list(input.shape)})")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension: repeats "
                           f"{list(repeats)}")
    return Repeat.apply(input, repeats)


def to_dtype(input, dtype):
    if dtype is input._dtype:
        return input
    return ToDtype.apply(input, dtype)


def movedim(input, source, destination):
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src = [input._wrap_dim(s) for s in src]
    dst = [input._wrap_dim(d) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))


moveaxis = movedim


def ravel(input):
    """The elements as one dim (a view when the layout allows, else a copy)."""
    return reshape(input, -1)


def fliplr(input):
    """Reverse the columns (dim 1) of a tensor with at least 2 dims."""
    if input.ndim < 2:
        raise RuntimeError(f"Input must be >= 2-d (got shape {list(input.shape)})")
    return flip(input, 1)


def flipud(input):
    """Reverse the rows (dim 0) of a tensor with at least 1 dim."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d (got a 0-d tensor)")
    return flip(input, 0)


def _atleast(ndim):
    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
            return tuple(atleast(t) for t in tensors[0])
        if len(tensors) > 1:
            return tuple(atleast(t) for t in tensors)
        t = tensors[0]
        if t.ndim >= ndim:
            return t
        if ndim == 1 or t.ndim == 0:
            return reshape(t, (1,) * ndim)
        if ndim == 2:  # a vector becomes a row
            return unsqueeze(t, 0)
        return unsqueeze(unsqueeze(t, 0), -1) if t.ndim == 1 else unsqueeze(t, -1)
    atleast.__name__ = f"atleast_{ndim}d"
    atleast.__doc__ = (f"Tensors with fewer than {ndim} dims get size-1 dims added (views); "
                       "the others come back as they are.")
    return atleast


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)
