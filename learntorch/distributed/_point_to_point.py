"""Point-to-point messages: one rank sends a tensor, one rank receives it into its own.

``send``/``recv`` block; ``isend``/``irecv`` start the transfer and return a
``Work`` to ``wait()`` on.  The bytes of the tensor travel as they are: the
receiving tensor must have the sender's shape and dtype.  A message larger than
the receiving tensor is refused with a RuntimeError naming both sizes (``recv``
looks at the message's size before taking it).
"""
from . import _checks
from ._process_group import resolve
from ._work import Work


def _peer(pg, rank, what, opname, any_allowed=False):
    if rank is None and any_allowed:
        return None
    if not isinstance(rank, int) or not 0 <= rank < pg.size():
        raise ValueError(f"{opname}: {what}={rank!r} is not a rank of this group; the ranks "
                         f"are 0..{pg.size() - 1}")
    if rank == pg.rank():
        raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank: should "
                         f"not be the same as rank of the current process ({opname} to itself; "
                         "a process already has its own tensor)")
    return rank


def _bytes(array):
    return array.reshape(-1).view("u1")


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` (blocks until it may be reused)."""
    array = _checks.array_of(tensor, "send")
    pg = resolve(group)
    dst = _peer(pg, dst if dst is not None else group_dst, "dst", "send")
    pg._comm.Send(_bytes(array), dest=dst, tag=tag)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to ``dst``; do not change it before ``wait()``."""
    array = _checks.array_of(tensor, "isend")
    pg = resolve(group)
    dst = _peer(pg, dst if dst is not None else group_dst, "dst", "isend")
    return Work([pg._comm.Isend(_bytes(array), dest=dst, tag=tag)], result=[tensor],
                buffers=[array])


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (from any rank when None); returns the
    sender's rank."""
    array = _checks.array_of(tensor, "recv")
    pg = resolve(group)
    from mpi4py import MPI  # (after resolve: MPI is started by init_process_group only)
    src = _peer(pg, src if src is not None else group_src, "src", "recv", any_allowed=True)
    _checks.writable(array, "tensor", "recv")
    status = MPI.Status()
    source = MPI.ANY_SOURCE if src is None else src
    pg._comm.Probe(source=source, tag=tag, status=status)
    arrived = status.Get_count(MPI.BYTE)
    if arrived != array.nbytes:
        raise RuntimeError(
            f"recv: rank {status.Get_source()} sent {arrived} bytes, but the tensor given to "
            f"recv holds {array.nbytes} bytes (shape {array.shape}, dtype {array.dtype}).  "
            "send and recv must use tensors of the same shape and dtype")
    pg._comm.Recv(_bytes(array), source=status.Get_source(), tag=tag)
    return status.Get_source()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from ``src`` (any rank when None); after ``wait()``,
    ``work.source_rank()`` says who sent."""
    array = _checks.array_of(tensor, "irecv")
    pg = resolve(group)
    from mpi4py import MPI  # (after resolve: MPI is started by init_process_group only)
    src = _peer(pg, src if src is not None else group_src, "src", "irecv", any_allowed=True)
    _checks.writable(array, "tensor", "irecv")
    source = MPI.ANY_SOURCE if src is None else src
    status = MPI.Status()
    return Work([pg._comm.Irecv(_bytes(array), source=source, tag=tag)], result=[tensor],
                status=status, buffers=[array])
