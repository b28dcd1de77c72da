"""What a collective checks before it sends a byte, so that misuse is an error, not a hang.

Two kinds of check:

* on this rank (``array_of``): the argument is a tensor, on the CPU, contiguous
  -- MPI reads and writes the tensor's memory directly, so it must be one
  contiguous block;
* across the ranks (``agree``): every rank called the same collective with the
  same shape, dtype, root and op.  MPI itself would not notice a mismatch: it
  would hang, or quietly combine the wrong numbers.  One small ``Allgather`` of
  a fixed-size signature (a few integers per rank) finds it, and every rank
  raises the same RuntimeError naming what each rank passed.
"""
import numpy as np

from .. import Tensor

# a signature: [collective, dtype, root, op, numel, ndim, shape (padded)]
_MAX_DIMS = 8
_SIGNATURE_LENGTH = 6 + _MAX_DIMS
_DTYPES = [np.dtype(code) for code in ("?", "u1", "i1", "i2", "i4", "i8", "f2", "f4", "f8",
                                       "c8", "c16")]
_COLLECTIVES = ["all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
                "reduce_scatter", "reduce_scatter_tensor", "reduce", "gather", "scatter",
                "barrier"]


def array_of(tensor, opname, argname="tensor"):
    """The numpy array that holds ``tensor``'s data (the same memory: writes go to the tensor)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{argname}` of type "
                        f"torch.Tensor but got {type(tensor)} instead ({opname})")
    if tensor.device.type != "cpu":
        raise RuntimeError(f"{opname}: `{argname}` is on {tensor.device}, but the mpi backend "
                           f"works on CPU tensors.  Move it with {argname}.cpu() (and the result "
                           "back with .to(device)); on real PyTorch, GPU tensors use "
                           "backend=\"nccl\"")
    if not tensor.is_contiguous():
        raise RuntimeError(f"{opname}: Tensors must be contiguous: `{argname}` has shape "
                           f"{tuple(tensor.shape)} and strides {tensor.stride()} (a view such as "
                           f"a transpose or a slice).  Pass {argname}.contiguous(), and copy the "
                           "result back if the collective writes into it")
    array = tensor.detach().numpy()
    if not array.flags.c_contiguous:  # a contiguous view whose numpy array is not (rare)
        raise RuntimeError(f"{opname}: `{argname}`'s memory is not one contiguous block; "
                           f"pass {argname}.contiguous()")
    return array


def writable(array, tensor_name, opname):
    if not array.flags.writeable:
        raise RuntimeError(f"{opname}: `{tensor_name}` is read-only (an expanded or "
                           f"broadcast view) and cannot receive data; pass a .clone()")


def same_dtype_and_shape(arrays, names, opname, like, like_name):
    """Local check: each tensor of a list has the shape and dtype of ``like``."""
    for array, name in zip(arrays, names):
        if array.dtype != like.dtype or array.shape != like.shape:
            raise RuntimeError(
                f"{opname}: `{name}` has shape {array.shape} and dtype {array.dtype}, but "
                f"`{like_name}` has shape {like.shape} and dtype {like.dtype}; they must match")


def agree(pg, opname, array=None, root=-1, op=-1):
    """Check, together with every other rank, that all called ``opname`` alike.

    Every rank must call this at the same point (it is a collective itself).
    """
    signature = np.full(_SIGNATURE_LENGTH, -1, dtype=np.int64)
    signature[0] = _COLLECTIVES.index(opname)
    signature[2], signature[3] = root, int(op)
    if array is not None:
        signature[1] = _dtype_code(array.dtype)
        signature[4], signature[5] = array.size, array.ndim
        dims = array.shape[:_MAX_DIMS]
        signature[6:6 + len(dims)] = dims
    size = pg.size()
    if size == 1:
        return
    everyone = np.empty((size, _SIGNATURE_LENGTH), dtype=np.int64)
    pg._comm.Allgather(signature, everyone)
    if (everyone == everyone[0]).all():
        return
    raise RuntimeError(_describe_mismatch(opname, everyone, array))


def _describe_mismatch(opname, everyone, array):
    calls = [_COLLECTIVES[row[0]] for row in everyone]
    if len(set(calls)) > 1:
        listing = ", ".join(f"rank {r} called {c}" for r, c in enumerate(calls))
        return (f"the ranks called different collectives at the same time: {listing}.  Every "
                "rank must call the same collectives, in the same order")
    lines = []
    for r, row in enumerate(everyone):
        parts = []
        if row[1] >= 0:
            shape = tuple(int(d) for d in row[6:6 + row[5]]) if row[5] <= _MAX_DIMS else "..."
            parts.append(f"shape {shape} {_dtype_name(row[1])}")
        if row[2] >= 0:
            parts.append(f"root {row[2]}")
        if row[3] >= 0:
            from ._reduce_op import ReduceOp
            parts.append(f"op ReduceOp.{ReduceOp.RedOpType(row[3]).name}")
        lines.append(f"rank {r}: " + ", ".join(parts))
    return (f"{opname}: the ranks passed different arguments ({'; '.join(lines)}).  Every rank "
            f"must pass tensors of the same shape and dtype (and the same src/dst and op) to "
            f"a collective: check what each rank computes before calling {opname}")


def _dtype_code(dtype):
    return _DTYPES.index(dtype) if dtype in _DTYPES else len(_DTYPES)


def _dtype_name(code):
    # numpy's names are torch's for these dtypes (float32, int64, bool, ...)
    return _DTYPES[code].name if code < len(_DTYPES) else "(another dtype)"
