"""Diagonals and triangles of matrices: diagonal, diag, diag_embed, trace, tril, triu.

``diagonal`` is a view, like slicing: element i of the diagonal ``offset`` of the plane
(dim1, dim2) sits at [i, i + offset], so one stride (stride1 + stride2) walks it.  Its
backward writes the gradient back onto that diagonal of a zero tensor; ``diag_embed``
does the same forward, and the two are each other's backward.  ``tril``/``triu`` keep
one triangle of the last two dims and zero the rest: their backward keeps the same
triangle of the gradient.
"""
from .. import _dtypes, backends
from ..autograd.function import Function
from ._helpers import require_tensors, wrap
from ._views import view_of
from .strides import strided_array


def _diagonal_geometry(shape, strides, offset, dim1, dim2):
    """(shape, strides, storage offset) of the diagonal view: the other dims in order,
    then the diagonal (torch's layout)."""
    n1, n2 = shape[dim1], shape[dim2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = 0
    if length:
        start = offset * strides[dim2] if offset >= 0 else -offset * strides[dim1]
    keep = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    return ([shape[d] for d in keep] + [length],
            [strides[d] for d in keep] + [strides[dim1] + strides[dim2]], start)


def _element_strides(a):
    return [s // a.itemsize for s in a.strides]


class Diagonal(Function):
    node_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.shape, ctx.args = x.shape, (offset, dim1, dim2)
        shape, strides, start = _diagonal_geometry(x.shape, _element_strides(x._data), offset,
                                                   dim1, dim2)
        return view_of(ctx, x, strided_array(x._data, shape, strides, start))

    @staticmethod
    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, ctx.shape, *ctx.args), None, None, None


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: its diagonal as a new vector (torch's diagonal_copy)."""

    node_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.shape, ctx.args = x.shape, (offset, dim1, dim2)
        shape, strides, start = _diagonal_geometry(x.shape, _element_strides(x._data), offset,
                                                   dim1, dim2)
        return wrap(backends.current.copy(strided_array(x._data, shape, strides, start)))


class DiagonalScatter(Function):
    """zeros of ``shape`` with ``grad`` on the diagonal: diagonal's backward."""

    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        b = backends.current
        out = b.full(shape, 0, grad._data.dtype, like=grad._data)
        view_shape, strides, start = _diagonal_geometry(shape, _element_strides(out), offset,
                                                        dim1, dim2)
        b.copy_into(strided_array(out, view_shape, strides, start), grad._data)
        return wrap(out)

    @staticmethod
    def backward(ctx, gg):
        return diagonal(gg, *ctx.args), None, None, None, None


class DiagEmbed(Function):
    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        return wrap(backends.current.diag_embed(x._data, offset, dim1, dim2))

    @staticmethod
    def backward(ctx, grad):
        return diagonal(grad, *ctx.args), None, None, None


class _Triangle(Function):
    method = None

    @classmethod
    def forward(cls, ctx, x, k):
        ctx.k = k
        return wrap(getattr(backends.current, cls.method)(x._data, k))

    @classmethod
    def backward(cls, ctx, grad):
        return getattr(grad, cls.method)(ctx.k), None


class Tril(_Triangle):
    node_name, method = "TrilBackward0", "tril"


class Triu(_Triangle):
    node_name, method = "TriuBackward0", "triu"


class Trace(Function):
    """The sum of a matrix's main diagonal; every diagonal element gets the gradient."""

    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        shape, strides, start = _diagonal_geometry(x.shape, _element_strides(x._data), 0, 0, 1)
        diag = strided_array(x._data, shape, strides, start)
        total = backends.current.sum(diag, (0,), False)
        if x._dtype is _dtypes.bfloat16:  # the backend's bfloat16 sum is float32: round it
            total = total.astype(x._data.dtype)
        return wrap(total)

    @staticmethod
    def backward(ctx, grad):
        n = min(ctx.shape)
        return DiagonalScatter.apply(grad.expand(n), ctx.shape, 0, 0, 1)


# ---------------------------------------------------------------- public functions
def _two_dims(input, dim1, dim2, name, ndim=None):
    ndim = input.ndim if ndim is None else ndim
    d1, d2 = input._wrap_dim(dim1, ndim), input._wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"{name}: dim1 and dim2 cannot be identical, but got dim1 = {dim1} "
                           f"and dim2 = {dim2}")
    return d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` (0: main, > 0 above, < 0 below) of the planes (dim1, dim2):
    a view, with the diagonal as the last dim."""
    require_tensors("diagonal", ("input", input))
    d1, d2 = _two_dims(input, dim1, dim2, "diagonal")  # (a vector has no dim 1: IndexError)
    return Diagonal.apply(input, int(offset), d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) planes hold the last dim of ``input`` on the diagonal
    ``offset``, zeros elsewhere."""
    require_tensors("diag_embed", ("input", input))
    d1, d2 = _two_dims(input, dim1, dim2, "diag_embed", input.ndim + 1)
    return DiagEmbed.apply(input, int(offset), d1, d2)


def diag(input, diagonal=0):
    """A vector becomes a square matrix with it on the ``diagonal``-th diagonal; a matrix
    gives that diagonal as a new vector."""
    require_tensors("diag", ("input", input))
    if input.ndim == 1:
        return DiagEmbed.apply(input, int(diagonal), 0, 1)
    if input.ndim == 2:
        return DiagonalCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D (shape "
                       f"{list(input.shape)}); use diagonal() or diag_embed() for batches")


def _triangle(cls, name, input, diagonal):
    require_tensors(name, ("input", input))
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions (got shape "
                           f"{list(input.shape)})")
    return cls.apply(input, int(diagonal))


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (j - i <= diagonal); zeros above it."""
    return _triangle(Tril, "tril", input, diagonal)


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (j - i >= diagonal); zeros below it."""
    return _triangle(Triu, "triu", input, diagonal)


def trace(input):
    """The sum of the main diagonal of a matrix."""
    require_tensors("trace", ("input", input))
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} "
                           f"(shape {list(input.shape)})")
    return Trace.apply(input)

