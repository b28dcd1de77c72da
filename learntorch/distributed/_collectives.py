"""The collectives: every rank calls the same function, and data moves between all of them.

Each is torch's function with torch's arguments, working **in place** on the
tensors given (the result lands in ``tensor`` / ``output``), run by MPI's own
collective on the tensor's memory: ``all_reduce`` is ``MPI_Allreduce``,
``broadcast`` is ``MPI_Bcast``, and so on.  With ``async_op=True`` MPI's
non-blocking twin starts instead (``MPI_Iallreduce``...) and a ``Work`` is
returned: the result is there after ``work.wait()``.

Before any data moves, ``_checks.agree`` makes sure every rank called the same
collective with the same shape and dtype: a mismatch is a RuntimeError on every
rank instead of a hang.  (learntorch's own ring all-reduce, written with
point-to-point messages so that its steps can be read and replayed, is in
``ring.py``.)
"""
import numpy as np

from . import _checks
from ._process_group import resolve
from ._reduce_op import ReduceOp, check as _check_op, mpi_op
from ._work import Work


def _flat(array):
    return array.reshape(-1)  # a view: the arrays here are contiguous


def _reduction(array, op):
    """The buffer and MPI op that reduce ``array`` with ``op`` (bool reduces as 0/1 bytes)."""
    if array.dtype == np.bool_:
        # MPI reduces C bools only with logical ops: use their bytes, where MAX is "any"
        # (torch's SUM of bools) and MIN is "all" (PRODUCT)
        op = {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN}.get(op, op)
        return _flat(array).view(np.uint8), mpi_op(op)
    return _flat(array), mpi_op(op)


def _averaging(array, op, size):
    """The step that turns a SUM into AVG once MPI is done (None for the other ops)."""
    if op != ReduceOp.AVG:
        return None

    def divide():
        np.divide(array, size, out=array)
    return divide


def _start(blocking, nonblocking, args, async_op, finish=None, result=()):
    """Run a collective: blocking (returns None, as torch) or started (returns a Work)."""
    if async_op:
        return Work([nonblocking(*args)], finish=finish, result=result, buffers=args)
    blocking(*args)
    if finish is not None:
        finish()
    return None


def all_reduce_array(pg, array, op, async_op):
    """All-reduce a contiguous numpy array in place, unchecked (DDP's buckets come here)."""
    from mpi4py import MPI
    buffer, mpi = _reduction(array, op)
    comm = pg._comm
    return _start(comm.Allreduce, comm.Iallreduce, (MPI.IN_PLACE, buffer, mpi), async_op,
                  finish=_averaging(array, op, pg.size()))


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Every rank's ``tensor`` becomes the reduction (sum, by default) of all of them."""
    array = _checks.array_of(tensor, "all_reduce")
    pg = resolve(group)
    _checks.writable(array, "tensor", "all_reduce")
    _check_op(op, array, "all_reduce")
    _checks.agree(pg, "all_reduce", array, op=op)
    work = all_reduce_array(pg, array, op, async_op)
    if work is not None:
        work._result = [tensor]
    return work


def _check_rank(pg, rank, what, opname):
    if rank is None or not isinstance(rank, (int, np.integer)) or not 0 <= rank < pg.size():
        raise ValueError(f"{opname}: {what}={rank!r} is not a rank of this group; the ranks "
                         f"are 0..{pg.size() - 1}")
    return int(rank)


def broadcast_array(pg, array, src, async_op=False):
    """Broadcast a contiguous numpy array from rank ``src``, unchecked (DDP's, whose ranks
    were checked to hold the same model)."""
    comm = pg._comm
    return _start(comm.Bcast, comm.Ibcast, (_flat(array), src), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Every rank's ``tensor`` becomes rank ``src``'s."""
    array = _checks.array_of(tensor, "broadcast")
    pg = resolve(group)
    src = _check_rank(pg, src if src is not None else group_src, "src", "broadcast")
    if pg.rank() != src:
        _checks.writable(array, "tensor", "broadcast")
    _checks.agree(pg, "broadcast", array, root=src)
    work = broadcast_array(pg, array, src, async_op)
    if work is not None:
        work._result = [tensor]
    return work


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Rank ``dst``'s ``tensor`` becomes the reduction of all of them (the others' are left
    as they were)."""
    array = _checks.array_of(tensor, "reduce")
    pg = resolve(group)
    from mpi4py import MPI  # (after resolve: MPI is started by init_process_group only)
    dst = _check_rank(pg, dst if dst is not None else group_dst, "dst", "reduce")
    _check_op(op, array, "reduce")
    _checks.agree(pg, "reduce", array, root=dst, op=op)
    buffer, mpi = _reduction(array, op)
    comm = pg._comm
    if pg.rank() == dst:
        _checks.writable(array, "tensor", "reduce")
        args, finish = (MPI.IN_PLACE, buffer, mpi, dst), _averaging(array, op, pg.size())
    else:
        args, finish = (buffer, None, mpi, dst), None
    return _start(comm.Reduce, comm.Ireduce, args, async_op, finish=finish, result=[tensor])


def _list_arrays(tensors, argname, opname, pg, like, like_name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"Invalid function argument: {argname} should be a list of tensors, "
                        f"got {type(tensors)} ({opname})")
    if len(tensors) != pg.size():
        raise ValueError(f"{opname}: {argname} has {len(tensors)} tensors, but the group has "
                         f"{pg.size()} ranks: pass one tensor per rank")
    arrays = [_checks.array_of(t, opname, f"{argname}[{i}]") for i, t in enumerate(tensors)]
    _checks.same_dtype_and_shape(arrays, [f"{argname}[{i}]" for i in range(len(arrays))],
                                 opname, like, like_name)
    return arrays


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` becomes rank r's ``tensor``, on every rank."""
    array = _checks.array_of(tensor, "all_gather")
    pg = resolve(group)
    outputs = _list_arrays(tensor_list, "tensor_list", "all_gather", pg, array, "tensor")
    for out, name in zip(outputs, range(len(outputs))):
        _checks.writable(out, f"tensor_list[{name}]", "all_gather")
    _checks.agree(pg, "all_gather", array)
    # MPI gathers into one block; the copies into the list run when it is done
    received = np.empty((pg.size(), array.size), dtype=array.dtype)

    def scatter_into_list():
        for out, row in zip(outputs, received):
            _flat(out)[...] = row
    comm = pg._comm
    return _start(comm.Allgather, comm.Iallgather, (_flat(array), received), async_op,
                  finish=scatter_into_list, result=list(tensor_list))


def _output_holds(output, input, factor, opname, out_name, in_name):
    if output.dtype != input.dtype or output.size != input.size * factor:
        raise RuntimeError(
            f"{opname}: `{out_name}` must hold world_size ({factor}) times as many elements "
            f"as `{in_name}`, of the same dtype: got {out_name} {output.shape} {output.dtype} "
            f"and {in_name} {input.shape} {input.dtype}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` becomes the ranks' ``input_tensor`` one after the other (rank 0
    first): shape (world_size * n, ...) or (world_size, n, ...)."""
    array = _checks.array_of(input_tensor, "all_gather_into_tensor", "input_tensor")
    output = _checks.array_of(output_tensor, "all_gather_into_tensor", "output_tensor")
    pg = resolve(group)
    _checks.writable(output, "output_tensor", "all_gather_into_tensor")
    _output_holds(output, array, pg.size(), "all_gather_into_tensor", "output_tensor",
                  "input_tensor")
    _checks.agree(pg, "all_gather_into_tensor", array)
    comm = pg._comm
    return _start(comm.Allgather, comm.Iallgather, (_flat(array), _flat(output)), async_op,
                  result=[output_tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` on rank r becomes the reduction over all ranks of their ``input_list[r]``."""
    out = _checks.array_of(output, "reduce_scatter", "output")
    pg = resolve(group)
    _checks.writable(out, "output", "reduce_scatter")
    inputs = _list_arrays(input_list, "input_list", "reduce_scatter", pg, out, "output")
    _check_op(op, out, "reduce_scatter")
    _checks.agree(pg, "reduce_scatter", out, op=op)
    return _reduce_scatter_block(pg, np.concatenate([_flat(a) for a in inputs]), out, op,
                                 async_op, output)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` on rank r becomes the reduction over all ranks of the r-th block of their
    ``input`` (which holds world_size blocks of ``output``'s size)."""
    out = _checks.array_of(output, "reduce_scatter_tensor", "output")
    array = _checks.array_of(input, "reduce_scatter_tensor", "input")
    pg = resolve(group)
    _checks.writable(out, "output", "reduce_scatter_tensor")
    _output_holds(array, out, pg.size(), "reduce_scatter_tensor", "input", "output")
    _check_op(op, out, "reduce_scatter_tensor")
    _checks.agree(pg, "reduce_scatter_tensor", array, op=op)
    return _reduce_scatter_block(pg, array, out, op, async_op, output)


def _reduce_scatter_block(pg, send, out, op, async_op, output):
    send_buffer, mpi = _reduction(send, op)
    recv_buffer, _ = _reduction(out, op)
    comm = pg._comm
    return _start(comm.Reduce_scatter_block, comm.Ireduce_scatter_block,
                  (send_buffer, recv_buffer, mpi), async_op,
                  finish=_averaging(out, op, pg.size()), result=[output])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """On rank ``dst``, ``gather_list[r]`` becomes rank r's ``tensor`` (other ranks pass
    ``gather_list=None``)."""
    array = _checks.array_of(tensor, "gather")
    pg = resolve(group)
    dst = _check_rank(pg, dst if dst is not None else group_dst, "dst", "gather")
    if pg.rank() == dst:
        outputs = _list_arrays(gather_list, "gather_list", "gather", pg, array, "tensor")
    elif gather_list:
        raise ValueError("gather: gather_list should be given only on the destination rank "
                         f"({dst}); pass gather_list=None on the others")
    _checks.agree(pg, "gather", array, root=dst)
    received = np.empty((pg.size(), array.size), dtype=array.dtype) if pg.rank() == dst else None

    def scatter_into_list():
        if received is not None:
            for out, row in zip(outputs, received):
                _flat(out)[...] = row
    comm = pg._comm
    return _start(comm.Gather, comm.Igather, (_flat(array), received, dst), async_op,
                  finish=scatter_into_list, result=list(gather_list or []))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's ``tensor`` becomes ``scatter_list[r]`` of rank ``src`` (other ranks pass
    ``scatter_list=None``)."""
    array = _checks.array_of(tensor, "scatter")
    pg = resolve(group)
    src = _check_rank(pg, src if src is not None else group_src, "src", "scatter")
    _checks.writable(array, "tensor", "scatter")
    send = None
    if pg.rank() == src:
        inputs = _list_arrays(scatter_list, "scatter_list", "scatter", pg, array, "tensor")
        send = np.concatenate([_flat(a) for a in inputs])
    elif scatter_list:
        raise ValueError("scatter: scatter_list should be given only on the source rank "
                         f"({src}); pass scatter_list=None on the others")
    _checks.agree(pg, "scatter", array, root=src)
    comm = pg._comm
    return _start(comm.Scatter, comm.Iscatter, (send, _flat(array), src), async_op,
                  result=[tensor])


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank has reached this line (``timeout`` is accepted for torch's
    signature: MPI's barrier does not time out)."""
    pg = resolve(group)
    _checks.agree(pg, "barrier")
    comm = pg._comm
    return _start(comm.Barrier, comm.Ibarrier, (), async_op)
