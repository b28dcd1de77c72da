"""``learntorch.distributed``: processes that train together, over MPI (``torch.distributed``).

Data-parallel training runs the same script on N processes, the **ranks**
0..N-1 of a **world** of size N.  Each computes gradients on its own shard of the
batch; **collectives** -- operations every rank calls together -- combine them:
``all_reduce`` sums (or averages, ...) a tensor over all ranks in place,
``broadcast`` copies rank ``src``'s tensor to all, ``all_gather`` collects one
tensor from each, ``reduce_scatter`` sums and hands each rank one part, and
``send``/``recv`` move a tensor between two ranks.

    # train.py, started with:  python -m learntorch.distributed.run --nproc-per-node 2 train.py
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group(backend="mpi")
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t)                    # every rank now holds 0 + 1 = 1
    dist.destroy_process_group()

The engine underneath is MPI (through mpi4py, with MPICH's wheel), as torch's
own ``mpi`` backend: the same calls run on real PyTorch built with MPI, and with
``backend="gloo"`` on any PyTorch.  mpi4py is imported only when a process group
is made, never by ``import learntorch``.

learntorch-only (not in torch): ``run_ranks`` starts N ranks from Python (a
notebook cell) and returns what each did; ``ring`` writes out the ring
all-reduce step by step, to run, count and replay.
"""
from ._reduce_op import ReduceOp
from ._process_group import (ProcessGroup, GroupMember, group, is_available, is_mpi_available,
                             is_gloo_available, is_nccl_available, is_initialized,
                             is_torchelastic_launched, init_process_group,
                             destroy_process_group, get_rank, get_world_size, get_backend)
from ._work import Work
from ._collectives import (all_reduce, broadcast, reduce, all_gather, all_gather_into_tensor,
                           reduce_scatter, reduce_scatter_tensor, gather, scatter, barrier)
from ._point_to_point import send, recv, isend, irecv
from . import ring
from ._run_ranks import run_ranks, RankResult
from ._launching import ChildFailedError


class Backend(str):
    """Backend names, as ``torch.distributed.Backend``: learntorch has ``Backend.MPI`` only."""
    MPI = "mpi"

    def __new__(cls, name):
        from ._process_group import _check_backend
        _check_backend(name)
        return str.__new__(cls, name.lower())
