"""Ops built from other ops, each a few lines: grids of coordinates (``meshgrid``,
``cartesian_prod``), ``broadcast_tensors``, ``take`` (an index into the flattened tensor)
and ``dist`` (the norm of a difference).

Nothing here has a Function of its own: each result is views (``expand``), an index or a
norm of the tensors given, so autograd flows through those ops (torch records some of them
under a node of their own name, ``TakeBackward0``, ``DistBackward0``; the gradients are
the same).
"""
import warnings

from .. import _dtypes
from .._tensor import Tensor
from .broadcast import _broadcast_tuple
from .joining import stack
from .reductions import norm


def broadcast_tensors(*tensors):
    """The tensors expanded (views, no copy) to the one shape they broadcast to."""
    if len(tensors) == 1:
        return (tensors[0],)
    shape = _broadcast_tuple(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: for 1-d ``x`` (n) and ``y`` (m), ``X[i, j] = x[i]`` and
    ``Y[i, j] = y[j]`` (``indexing="ij"``, shape (n, m)); ``indexing="xy"`` swaps the
    first two dims, as numpy's and matplotlib's (m, n).  Views of the inputs (expand)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype (got "
                           + ", ".join(str(t.dtype) for t in tensors) + "): convert them first")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: a tensor of shape {list(t.shape)}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for k, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[k] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:  # (torch's way to "xy": the first two inputs trade places, then the outputs)
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-d tensor, as rows: (n1 * n2 * ..., k)
    (``itertools.product`` of their elements); one tensor comes back as it is."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def take(input, index):
    """``input`` read as one flat row (row-major) at ``index`` (an int64 tensor; negative
    counts from the end): the result has index's shape."""
    if not isinstance(index, Tensor) or index.dtype is not _dtypes.int64:
        got = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    if index.numel():
        if n == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        low, high = int(index.min()), int(index.max())
        if high >= n or low < -n:
            bad = high if high >= n else low
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
    return input.reshape(-1)[index]


def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast): ``torch.norm(input - other, p)``."""
    for t in (input, other):
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                               f"Got {_long_name(t.dtype)} instead.")
    return norm(input - other, p)


def _long_name(dtype):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)
