"""Shape operations.  Most are *views*: a new tensor over the same memory.

A tensor's elements live in a flat *storage*; ``shape``, ``stride`` and
``storage_offset`` say where element ``[i, j, ...]`` is: at
``offset + i*stride[0] + j*stride[1] + ...``.  A view op only computes a new
(shape, strides) over the same storage, so it copies nothing, and a write
through the view is seen by its base (they also share one version counter).

* ``permute``/``transpose`` reorder the strides;
* ``unsqueeze`` inserts a size-1 dim, ``squeeze`` removes them;
* ``expand`` gives a stretched dim stride 0 (every index reads the same memory);
* ``narrow``/``select``/slicing move the offset and scale strides by the step;
* ``view`` merges/splits dims, which is possible only when the strides allow it
  (``view_strides`` below is torch's rule); ``reshape`` is a view when possible
  and a copy otherwise, while ``view`` refuses instead of copying.

The stride of a size-1 dim never changes which element is read, but torch
still reports a definite value, so the view ops below compute torch's exact
strides (``strided_array`` builds a numpy view with them).

Backward of a view maps the gradient's shape back: reshape it, permute it
back, or (for ``expand``) sum it over the expanded dims -- which the engine
does on its own, since that is broadcasting's backward.
"""
import numpy as np

from ..autograd.function import Function
from ._helpers import normalize_dims, wrap


# ---------------------------------------------------------------- strides
def contiguous_strides(shape):
    """Row-major strides (in elements) of a fresh tensor of ``shape``, as torch computes them."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def view_strides(shape, strides, new_shape):
    """Strides that let ``new_shape`` view memory laid out as (shape, strides), or None.

    This is torch's rule (``computeStride``).  Walking from the last dim, the
    old dims are cut into *chunks* that are contiguous within themselves (each
    dim's stride is the next one's stride times its size).  A view can split
    or merge dims only inside a chunk: the new dims must cover each chunk
    exactly.  ``x.t().view(-1)`` fails because the two dims of ``x.t()`` are
    two separate chunks that -1 would have to merge.
    """
    shape, new_shape = tuple(shape), tuple(new_shape)
    if not shape:
        return (1,) * len(new_shape)
    if 0 in shape:
        if shape == new_shape:
            return tuple(strides)
        return contiguous_strides(new_shape)
    result = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_stride = strides[-1]  # stride of the innermost dim of the current chunk
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        chunk_ends = d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_stride)
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
            result[view_d] = view_numel * chunk_stride
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if d > 0:
            chunk_stride = strides[d - 1]
            tensor_numel = view_numel = 1
    return tuple(result) if view_d == -1 else None


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def strided_array(a, shape, strides, offset=0):
    """A numpy view of ``a``'s memory: ``shape`` and ``strides`` (in elements), starting
    ``offset`` elements after ``a``'s first element -- torch's ``as_strided``.

    Built over the array that owns the memory, so ``storage_offset`` and
    sharing keep working.  A read-only ``a`` gives a read-only view.
    """
    item = a.itemsize
    byte_strides = tuple(int(s) * item for s in strides)
    if offset == 0 and a.shape == tuple(shape) and a.strides == byte_strides:
        return a
    root = _root(a)
    start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0] + offset * item
    if 0 in shape:  # no element to address: only keep the start inside the memory
        start = min(start, root.nbytes)
    try:
        out = np.ndarray(shape, a.dtype, buffer=root, offset=start, strides=byte_strides)
    except (TypeError, ValueError, BufferError):
        # memory that numpy cannot re-address through a buffer (an exotic root):
        # as_strided still shares it, though the view then no longer knows its root
        at = np.lib.stride_tricks.as_strided(a, (offset + 1,), (item,))[offset:]
        out = np.lib.stride_tricks.as_strided(at, shape, byte_strides)
    if not a.flags.writeable and out.flags.writeable:
        out.flags.writeable = False
    return out


def _element_strides(a):
    return [s // a.itemsize for s in a.strides]


def slice_array(a, dim, index):
    """``a`` sliced along ``dim`` by the slice ``index`` (step > 0), as torch: a view whose
    offset moves by start*stride and whose stride is multiplied by the step."""
    start, stop, step = index.indices(a.shape[dim])  # clamped into [0, size], as torch
    stop = max(stop, start)
    strides = _element_strides(a)
    shape = list(a.shape)
    shape[dim] = len(range(start, stop, step))
    offset = start * strides[dim]
    strides[dim] *= step
    return strided_array(a, tuple(shape), strides, offset)


def select_array(a, dim, index):
    """``a`` with ``dim`` removed at position ``index``: the offset moves by index*stride."""
    strides = _element_strides(a)
    index = index + a.shape[dim] if index < 0 else index
    return strided_array(a, a.shape[:dim] + a.shape[dim + 1:], strides[:dim] + strides[dim + 1:],
                         index * strides[dim])


def empty_strided(shape, strides, dtype):
    """A fresh numpy array with exactly these strides (in elements)."""
    span = 0 if 0 in shape else 1 + sum((n - 1) * st for n, st in zip(shape, strides))
    return strided_array(np.empty(span, dtype=dtype), tuple(shape), strides)


def is_non_overlapping_and_dense(shape, strides):
    """True when the elements fill a block of memory exactly once, in some order of dims."""
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def clone_strides(shape, strides):
    """The strides of ``clone()`` (torch's preserve_format): the same strides when the input
    is dense, otherwise dense strides that keep the input's order of dims in memory."""
    if is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first; torch's insertion sort
    for i in range(1, ndim):
        j = i
        for k in range(i - 1, -1, -1):
            a, b = perm[k], perm[j]
            if strides[a] == 0 or strides[b] == 0:
                continue  # an expanded dim keeps its place
            if strides[a] < strides[b] or (strides[a] == strides[b] and shape[a] <= shape[b]):
                break
            perm[k], perm[j] = perm[j], perm[k]
            j = k
    out, step = [0] * ndim, 1
    for d in perm:
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return tuple(out)


def has_internal_overlap(a):
    """True when two elements of ``a`` share memory (an expanded dim: stride 0, size > 1)."""
    return any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape))


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
        return x._view_of(strided_array(x._data, shape, strides))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class UnsafeView(Function):
    """``reshape`` when no view is possible: a contiguous copy, then a view of that copy."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x.shape
        out = np.empty(shape, dtype=x._data.dtype)
        out[...] = np.reshape(x._data, shape)  # numpy reads in row-major order, as torch
        return wrap(strided_array(out, shape, contiguous_strides(shape)))

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
        return grad.permute(tuple(int(d) for d in np.argsort(ctx.dims))), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, x, d0, d1):
        ctx.d0, ctx.d1 = d0, d1
        return x._view_of(np.swapaxes(x._data, d0, d1))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(ctx.d0, ctx.d1), None, None


class T(Function):
    """``x.t()``: transpose a matrix; a vector or a scalar comes back as a view of itself."""

    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, x):
        return x._view_of(x._data.T)

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


class Expand(Function):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, x, shape, strides):
        # stride 0 along stretched dims: every index there reads the same memory
        return x._view_of(strided_array(x._data, shape, strides))

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None  # the engine sums it over the expanded dims


class Squeeze(Function):
    node_name = "SqueezeBackward0"  # squeeze(): every size-1 dim

    @staticmethod
    def forward(ctx, x, dims):
        ctx.input_shape = x.shape
        return x._view_of(np.squeeze(x._data, axis=dims))

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
        return x._view_of(unsqueeze_array(x._data, dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


def unsqueeze_array(a, dim):
    """numpy view of ``a`` with a size-1 dim inserted at ``dim``, with torch's stride for it."""
    strides = [s // a.itemsize for s in a.strides]
    # torch: the new dim steps over the whole dim it is inserted before (1 at the end)
    new = a.shape[dim] * strides[dim] if dim < a.ndim else 1
    return strided_array(a, a.shape[:dim] + (1,) + a.shape[dim:],
                         strides[:dim] + [new] + strides[dim:])


class Narrow(Function):
    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, x, dim, start, length):
        ctx.input_shape, ctx.dim, ctx.start = x.shape, dim, start
        return x._view_of(slice_array(x._data, dim, slice(start, start + length)))

    @staticmethod
    def backward(ctx, grad):
        widths = [(0, 0)] * grad.ndim
        widths[ctx.dim] = (ctx.start, ctx.input_shape[ctx.dim] - ctx.start - grad.shape[ctx.dim])
        from .padding import constant_pad
        return constant_pad(grad, widths), None, None, None


# ---------------------------------------------------------------- copies
def copy_array(a, strides):
    """A copy of numpy array ``a`` laid out with ``strides``."""
    out = empty_strided(a.shape, strides, a.dtype)
    np.copyto(out, a)
    return out


class Contiguous(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return wrap(copy_array(x._data, contiguous_strides(x.shape)))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Clone(Function):
    """A copy; like torch's ``preserve_format`` it keeps the input's layout in memory."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return wrap(copy_array(x._data, clone_strides(x.shape, x.stride())))

    @staticmethod
    def backward(ctx, grad):
        return grad


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
    dims = tuple(d for d in normalize_dims(dim, input.ndim, input.shape)
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
    return reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = input._wrap_dim(dim)
    sizes = _shape_args((sizes,))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError(f"unflatten: only one dimension can be inferred, got sizes "
                           f"{list(sizes)}")
    size = input.shape[d]
    known = int(np.prod([s for s in sizes if s != -1]))
    inferred = [size // known if s == -1 and known and size % known == 0 else s for s in sizes]
    if -1 in inferred or int(np.prod(inferred)) != size:
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
    return Flip.apply(input, normalize_dims(dims, input.ndim, input.shape))


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
