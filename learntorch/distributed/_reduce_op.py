"""``ReduceOp``: how a collective combines the ranks' tensors (``torch.distributed.ReduceOp``).

Each op is written here once, twice over: as the MPI operation that MPI's own
collectives use (``mpi_op``), and as the numpy function that learntorch's ring
all-reduce and its in-process replay apply chunk by chunk (``combine``).  AVG is
not an MPI operation: it is SUM followed by a division by the world size.
"""
import enum

import numpy as np


class ReduceOp:
    """The reduction of ``all_reduce``, ``reduce`` and ``reduce_scatter``: ``ReduceOp.SUM``, ...

    As in torch, the members are values of the nested enum ``ReduceOp.RedOpType``.
    ``PREMUL_SUM`` exists for torch's numbering but is NCCL-only and refused here.
    """

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_BITWISE = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)

# the numpy function that combines a received chunk into this rank's chunk
_COMBINE = {
    ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.PRODUCT: np.multiply,
    ReduceOp.MIN: np.minimum, ReduceOp.MAX: np.maximum, ReduceOp.BAND: np.bitwise_and,
    ReduceOp.BOR: np.bitwise_or, ReduceOp.BXOR: np.bitwise_xor,
}


def check(op, array, opname):
    """Refuse, with the fix, an op that is not a ReduceOp or that cannot reduce this dtype."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"{opname}: op must be a ReduceOp (e.g. dist.ReduceOp.SUM), "
                        f"but got {op!r}")
    if op == ReduceOp.PREMUL_SUM:
        raise RuntimeError(f"{opname}: ReduceOp.PREMUL_SUM is NCCL-only in torch and is not "
                           "supported by the mpi backend; multiply first, then use ReduceOp.SUM")
    kind = array.dtype.kind
    if op == ReduceOp.AVG and kind not in "fc":
        raise RuntimeError(f"{opname}: ReduceOp.AVG averages floating-point tensors, but this "
                           f"one is {_name(array)}; convert it with .float() or .double(), or "
                           "use ReduceOp.SUM and divide by the world size yourself")
    if op in _BITWISE and kind not in "iub":
        raise RuntimeError(f"{opname}: ReduceOp.{op.name} is bitwise and needs an integer or "
                           f"bool tensor, but this one is {_name(array)}")


def combine(op, mine, received):
    """``mine = op(mine, received)`` in place: one step of a reduction, on numpy arrays."""
    if mine.dtype == np.bool_ and op in (ReduceOp.SUM, ReduceOp.AVG):
        np.logical_or(mine, received, out=mine)  # a sum of bools is "any", as in torch
    elif mine.dtype == np.bool_ and op == ReduceOp.PRODUCT:
        np.logical_and(mine, received, out=mine)
    else:
        _COMBINE[op](mine, received, out=mine)


def mpi_op(op):
    """The MPI operation that MPI's own collectives use for ``op`` (AVG: MPI.SUM, then divide)."""
    from mpi4py import MPI
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _name(array):
    return array.dtype.name  # numpy's names are torch's for these dtypes (int64, bool, ...)
