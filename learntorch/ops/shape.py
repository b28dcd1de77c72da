"""Shape operations.  Most are *views*: a new tensor over the same memory.

``view``, ``transpose``, ``permute``, ``squeeze``, ``unsqueeze``, ``expand``,
``narrow`` only change shape and strides, so they cost nothing and share
storage with their input (an in-place change through one is seen by both).
``reshape`` is a view when the strides allow it and a copy otherwise;
``view`` refuses instead of copying, exactly like torch.

Backward of a view maps the gradient's shape back: reshape it, permute it
back, or (for ``expand``) sum it over the expanded dims -- which the engine
does on its own, since that is broadcasting's backward.
"""
import numpy as np

from ..autograd.function import Function
from ._helpers import normalize_dims, wrap


def _infer_shape(shape, numel, original):
    shape = list(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel} "
                               f"(input shape {list(original)})")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel} "
                           f"(input shape {list(original)})")
    return tuple(shape)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(int(s) for s in shape)


def _try_view(a, shape):
    """A numpy view of ``a`` with ``shape``, or None when the strides do not allow one."""
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        return None
    return v


class View(Function):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        v = _try_view(x._data, shape)
        if v is None:
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride (at least one "
                f"dimension spans across two contiguous subspaces): input shape "
                f"{list(x.shape)} with stride {list(x.stride())}, requested {list(shape)}. "
                "Use .reshape(...) instead (or call .contiguous() before .view).")
        return x._view_of(v)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class Reshape(Function):
    node_name = "ReshapeAliasBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        v = _try_view(x._data, shape)
        if v is not None:
            return x._view_of(v)
        return wrap(np.reshape(x._data, shape).copy())  # strides forbid a view: copy

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class Permute(Function):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return x._view_of(np.transpose(x._data, dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(tuple(np.argsort(ctx.dims))), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, x, d0, d1):
        ctx.d0, ctx.d1 = d0, d1
        return x._view_of(np.swapaxes(x._data, d0, d1))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(ctx.d0, ctx.d1), None, None


class Expand(Function):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        # stride 0 along expanded dims: every index reads the same memory (read-only view)
        return x._view_of(np.broadcast_to(x._data, shape))

    @staticmethod
    def backward(ctx, grad):
        return grad, None  # the engine sums it over the expanded dims


class Squeeze(Function):
    node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.input_shape = x.shape
        return x._view_of(np.squeeze(x._data, axis=dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return x._view_of(np.expand_dims(x._data, dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


class Narrow(Function):
    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, x, dim, start, length):
        ctx.input_shape, ctx.dim, ctx.start = x.shape, dim, start
        index = [slice(None)] * x.ndim
        index[dim] = slice(start, start + length)
        return x._view_of(x._data[tuple(index)])

    @staticmethod
    def backward(ctx, grad):
        widths = [(0, 0)] * grad.ndim
        widths[ctx.dim] = (ctx.start, ctx.input_shape[ctx.dim] - ctx.start - grad.shape[ctx.dim])
        from .padding import constant_pad
        return constant_pad(grad, widths), None, None, None


class Contiguous(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return wrap(np.array(x._data, order="C", copy=True))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Clone(Contiguous):
    node_name = "CloneBackward0"


class Flip(Function):
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return wrap(np.flip(x._data, axis=dims).copy())

    @staticmethod
    def backward(ctx, grad):
        return grad.flip(ctx.dims), None


class Repeat(Function):
    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, x, repeats):
        ctx.input_shape, ctx.repeats = x.shape, repeats
        return wrap(np.tile(x._data, repeats))

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
        return wrap(x._data.astype(dtype.np))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.input_dtype), None


# ---------------------------------------------------------------- public functions
def view(input, *shape):
    from .. import _dtypes
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        dtype = _dtypes.to_dtype(shape[0])
        if dtype.itemsize != input._dtype.itemsize:
            raise RuntimeError("view(dtype) with a different element size is not supported")
        return wrap(input._data.view(dtype.np))
    shape = _infer_shape(_shape_args(shape), input._data.size, input.shape)
    return View.apply(input, shape)


def reshape(input, *shape):
    shape = _infer_shape(_shape_args(shape), input._data.size, input.shape)
    if shape == input._data.shape:
        return View.apply(input, shape)
    return Reshape.apply(input, shape)


def permute(input, *dims):
    dims = _shape_args(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}")
    norm = tuple(input._wrap_dim(d) for d in dims)
    if len(set(norm)) != len(norm):
        raise RuntimeError(f"permute(): duplicate dims are not allowed: {list(dims)}")
    return Permute.apply(input, norm)


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return View.apply(input, ())
    return Transpose.apply(input, input._wrap_dim(dim0), input._wrap_dim(dim1))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D; "
                           "use transpose(dim0, dim1) or .mT for batches")
    return transpose(input, 0, 1) if input.ndim == 2 else View.apply(input, input.shape)


def squeeze(input, dim=None):
    if dim is None:
        dims = tuple(i for i, s in enumerate(input.shape) if s == 1)
    else:
        dims = tuple(d for d in normalize_dims(dim, input.ndim, input.shape)
                     if input.ndim and input.shape[d] == 1)
    return Squeeze.apply(input, dims)


def unsqueeze(input, dim):
    d = input._wrap_dim(dim, input.ndim + 1)
    return Unsqueeze.apply(input, d)


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = input._wrap_dim(start_dim), input._wrap_dim(end_dim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = input._wrap_dim(dim)
    sizes = list(sizes)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = input.shape[d] // known if known else 0
    if int(np.prod(sizes)) != input.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({input.shape[d]}) in the input tensor")
    return view_or_reshape(input, tuple(input.shape[:d]) + tuple(sizes) + tuple(input.shape[d + 1:]))


def view_or_reshape(input, shape):
    return reshape(input, shape)


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s == -1:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing "
                                   f"dimension {i}")
            target.append(s)
            continue
        cur = input.shape[i - lead]
        if s == -1:
            target.append(cur)
        elif cur == s or cur == 1:
            target.append(s)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(input.shape)}")
    return Expand.apply(input, tuple(target))


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def narrow(input, dim, start, length):
    d = input._wrap_dim(dim)
    size = input.shape[d]
    if start < 0:
        start += size
    if start < 0 or start + length > size or length < 0:
        raise IndexError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return Narrow.apply(input, d, start, length)


def contiguous(input, memory_format=None):
    if input._data.flags["C_CONTIGUOUS"]:
        return input
    return Contiguous.apply(input)


def clone(input, memory_format=None):
    return Clone.apply(input)


def flip(input, dims):
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    return Flip.apply(input, normalize_dims(dims, input.ndim, input.shape))


def repeat(input, *repeats):
    repeats = _shape_args(repeats)
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           f"of dimensions of tensor ({len(repeats)} < {input.ndim})")
    return Repeat.apply(input, repeats)


def to_dtype(input, dtype):
    if dtype is input._dtype:
        return input
    return ToDtype.apply(input, dtype)


def movedim(input, source, destination):
    src = [input._wrap_dim(s) for s in ((source,) if isinstance(source, int) else source)]
    dst = [input._wrap_dim(d) for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))
