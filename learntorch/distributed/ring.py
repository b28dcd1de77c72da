"""The ring all-reduce, step by step: learntorch-only, for reading and for replaying.

``dist.all_reduce`` lets MPI choose its algorithm.  This module writes out the
one that made data-parallel training scale (the ring Baidu brought to deep
learning, which NCCL uses for large tensors), with point-to-point messages you
can follow:

The N ranks stand in a ring (rank r sends to r+1 and receives from r-1) and
each cuts its tensor into N chunks.

* **reduce-scatter**, N-1 steps: at step s, rank r sends chunk (r - s) mod N to
  its right neighbour and adds the chunk (r - s - 1) mod N that arrives from its
  left into its own.  A chunk travels once round the ring collecting every
  rank's contribution, so after N-1 steps rank r holds chunk (r + 1) mod N fully
  reduced.
* **all-gather**, N-1 steps: each rank passes its finished chunk on, and every
  received chunk *replaces* the rank's own, until all ranks hold all chunks.

Each rank sends one chunk (numel / N elements) per step, 2(N-1) steps: 2(N-1)/N
of the tensor in all, nearly twice the tensor however many ranks there are --
the reason the ring scales where "everyone sends everything to rank 0" does not.

Three entry points share one ``schedule`` (the list of who sends which chunk to
whom at each step) and one ``combine`` (``reduce_op.combine``):

* ``all_reduce(tensor, op)`` runs the schedule over MPI between the real ranks,
  optionally recording this rank's buffer after each step (``trace=``);
* ``replay(arrays, op)`` runs the same schedule in one process on N arrays and
  yields the state after each step -- what a widget draws, bit for bit what
  the engine computes (a test holds the two equal);
* ``schedule(world_size, numel)`` on its own, for counting the bytes.
"""
from dataclasses import dataclass

import numpy as np

from . import _checks
from ._process_group import resolve
from ._reduce_op import ReduceOp, check as _check_op, combine

REDUCE_SCATTER = "reduce-scatter"
ALL_GATHER = "all-gather"


def chunk_bounds(numel, world_size):
    """[(start, stop)] of the world_size chunks of a tensor of numel elements: as equal as
    can be, the first ``numel % world_size`` chunks one element longer (numpy's array_split)."""
    base, extra = divmod(numel, world_size)
    bounds, start = [], 0
    for chunk in range(world_size):
        stop = start + base + (1 if chunk < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


@dataclass(frozen=True)
class Transfer:
    """Rank ``src`` sends its chunk ``chunk`` (elements ``start:stop``) to rank ``dst``."""
    src: int
    dst: int
    chunk: int
    start: int
    stop: int

    @property
    def numel(self):
        return self.stop - self.start


@dataclass(frozen=True)
class RingStep:
    """One step of the ring: every rank sends one chunk to its right neighbour at once.

    ``transfers[r]`` is what rank r sends.  In the reduce-scatter phase the
    receiver combines the chunk into its own (``reduces``); in the all-gather phase
    the chunk replaces the receiver's.
    """
    index: int
    phase: str
    transfers: tuple

    @property
    def reduces(self):
        return self.phase == REDUCE_SCATTER

    def sent_by(self, rank):
        return self.transfers[rank]

    def received_by(self, rank):
        return self.transfers[(rank - 1) % len(self.transfers)]


def schedule(world_size, numel):
    """The 2(world_size - 1) steps of a ring all-reduce of ``numel`` elements."""
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    bounds = chunk_bounds(numel, world_size)
    n = world_size
    steps = []
    for phase, first_chunk in ((REDUCE_SCATTER, 0), (ALL_GATHER, 1)):
        for s in range(n - 1):
            transfers = []
            for r in range(n):
                chunk = (r + first_chunk - s) % n
                transfers.append(Transfer(r, (r + 1) % n, chunk, *bounds[chunk]))
            steps.append(RingStep(len(steps), phase, tuple(transfers)))
    return steps


def elements_sent(steps, rank):
    """How many elements ``rank`` sends over the whole ring: 2(N-1)/N of the tensor."""
    return sum(step.sent_by(rank).numel for step in steps)


def _apply(op, buffer, step, received, rank):
    """What ``rank`` does with the chunk it received at ``step``: combine it, or take it."""
    incoming = step.received_by(rank)
    mine = buffer[incoming.start:incoming.stop]
    if step.reduces:
        combine(op, mine, received)
    else:
        mine[...] = received


def _finish(op, buffer, world_size):
    if op == ReduceOp.AVG:
        np.divide(buffer, world_size, out=buffer)


def replay(arrays, op=ReduceOp.SUM):
    """Run the ring on N arrays (one per rank) in this process.

    Yields ``(step, buffers)`` after each step, ``buffers`` being the N ranks' flat
    arrays at that moment (copies: keep them).  The last state is the all-reduced
    result on every rank, as ``all_reduce`` computes it.  The input arrays are not
    changed.
    """
    buffers = [np.array(a, copy=True).reshape(-1) for a in arrays]
    n = len(buffers)
    if n == 0 or any(b.shape != buffers[0].shape or b.dtype != buffers[0].dtype
                     for b in buffers):
        raise ValueError("replay needs one array per rank, all of the same shape and dtype")
    _check_op(op, buffers[0], "ring.replay")
    steps = schedule(n, buffers[0].size)
    for step in steps:
        # every rank sends before any rank receives: take the chunks first
        sent = [buffers[t.src][t.start:t.stop].copy() for t in step.transfers]
        for rank in range(n):
            _apply(op, buffers[rank], step, sent[(rank - 1) % n], rank)
        if step is steps[-1]:
            for b in buffers:
                _finish(op, b, n)
        yield step, [b.copy() for b in buffers]


def all_reduce(tensor, op=ReduceOp.SUM, group=None, trace=None):
    """All-reduce ``tensor`` in place by the ring of ``schedule`` (point-to-point messages).

    Same result as ``dist.all_reduce`` up to the order of the additions.  ``trace``:
    a list to which this rank appends ``(step, copy of its flat buffer)`` after each
    step (the division of AVG included in the last), what ``replay`` yields for it.
    """
    array = _checks.array_of(tensor, "ring.all_reduce")
    pg = resolve(group)
    _checks.writable(array, "tensor", "ring.all_reduce")
    _check_op(op, array, "ring.all_reduce")
    _checks.agree(pg, "all_reduce", array, op=op)
    rank, n, comm = pg.rank(), pg.size(), pg._comm
    buffer = array.reshape(-1)
    steps = schedule(n, buffer.size)
    received = np.empty(max((b - a for a, b in chunk_bounds(buffer.size, n)), default=0),
                        dtype=buffer.dtype)
    for step in steps:
        out, incoming = step.sent_by(rank), step.received_by(rank)
        chunk = received[:incoming.numel]
        # send right and receive from the left in one call: no rank waits for another to
        # finish sending first, which with blocking sends round a ring could deadlock
        comm.Sendrecv(buffer[out.start:out.stop], dest=out.dst, sendtag=step.index,
                      recvbuf=chunk, source=incoming.src, recvtag=step.index)
        _apply(op, buffer, step, chunk, rank)
        if step is steps[-1]:
            _finish(op, buffer, n)
        if trace is not None:
            trace.append((step, buffer.copy()))
    return None
