"""Elements moved around or repeated: roll, tile, repeat_interleave.

    roll(x, 1)                      [1, 2, 3] -> [3, 1, 2]      elements shift, wrapping round
    tile(x, (2,))                   [1, 2]    -> [1, 2, 1, 2]   the whole tensor repeated
    repeat_interleave(x, 2)         [1, 2]    -> [1, 1, 2, 2]   each element repeated in place

Their backwards: roll back the other way; for the repeats, each element receives the
sum of its copies' gradients (``tile`` is ``Tensor.repeat``; ``repeat_interleave`` is an
``index_select`` of each index repeated, whose backward adds the copies up).
"""
import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import require_tensors, wrap


class Roll(Function):
    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return wrap(backends.current.roll(x._data, shifts, dims))

    @staticmethod
    def backward(ctx, grad):
        back = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, tuple) else -ctx.shifts
        return roll(grad, back, ctx.dims), None, None


def roll(input, shifts, dims=None):
    """Shift the elements along ``dims`` by ``shifts`` (both ints or equal-length tuples),
    wrapping around; without ``dims`` the flattened tensor is rolled, shape kept."""
    require_tensors("roll", ("input", input))
    if dims is None:
        if isinstance(shifts, (tuple, list)):
            if len(shifts) != 1:
                raise RuntimeError(f"`shifts` required to be of length 1 when `dims` is not "
                                   f"given (got {list(shifts)})")
            shifts = shifts[0]
        return Roll.apply(input, int(shifts), None)
    shifts_t = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims_t = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts_t) != len(dims_t):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts_t)}, dims:"
                           f"{len(dims_t)}")
    dims_t = tuple(input._wrap_dim(d) for d in dims_t)
    return Roll.apply(input, tuple(int(s) for s in shifts_t), dims_t)


def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; with fewer ``dims`` than the
    tensor has, the leading ones count as 1 (``Tensor.repeat`` needs them all)."""
    require_tensors("tile", ("input", input))
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    dims = (1,) * (input.ndim - len(dims)) + dims
    return input.repeat(dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (each slice along ``dim``; of the flattened tensor when ``dim`` is None)
    repeated ``repeats`` times in a row; ``repeats`` is an int or a 1-D tensor with one
    count per element.  ``repeat_interleave(counts)`` alone gives the indices 0, 0, ..., 1,
    1, ... each repeated by its count."""
    if repeats is None:  # torch.repeat_interleave(repeats): arange repeated
        counts = input
        require_tensors("repeat_interleave", ("repeats", counts))
        return _repeated_indices(counts, counts.shape[0] if counts.ndim else 1)
    require_tensors("repeat_interleave", ("input", input))
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = input._wrap_dim(dim)
    size = input.shape[d] if input.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
        if repeats.ndim == 1 and repeats.shape[0] not in (1, size):
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = "
                               f"{size}")
        if repeats.ndim == 0 or repeats.shape[0] == 1:
            repeats = int(repeats.reshape(-1)[0])
    if isinstance(repeats, Tensor):
        counts = repeats
    else:  # one count for every element
        if int(repeats) < 0:
            raise RuntimeError("repeats can not be negative")
        counts = Tensor._wrap(backends.current.full((size,), int(repeats), np.int64,
                                                    like=input._data))
    if input.ndim == 0:
        input, d = input.reshape(1), 0
    return input.index_select(d, _repeated_indices(counts, size))


def _repeated_indices(counts, size):
    """0 repeated counts[0] times, then 1 repeated counts[1] times, ... (an int64 tensor)."""
    if counts._dtype.is_floating_point or counts._dtype.name == "bool":
        raise RuntimeError(f"repeat_interleave only accept 1D vector as repeat, and integer "
                           f"counts (got {counts._dtype})")
    if counts.numel() and int(counts.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    from ..factories import arange
    positions = arange(size, device=counts.device)._data  # 0, 1, ..., size - 1
    b = backends.current
    return wrap(b.repeat_interleave(positions, b.cast(counts._data.reshape(-1), np.int64), 0))
