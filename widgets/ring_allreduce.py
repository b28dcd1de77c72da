"""RingAllReduce: the ring all-reduce step by step -- N ranks, their chunks, and what each sends.

An all-reduce leaves every rank holding the sum (or mean, max...) of every
rank's tensor.  The ring does it without a centre: the N ranks stand in a ring,
each cuts its tensor into N chunks, and at every step each rank sends one chunk
to its right neighbour --

* **reduce-scatter** (N-1 steps): the receiver adds the chunk into its own, so
  a chunk collects one more rank's numbers at every step; afterwards rank r
  holds chunk (r+1) mod N complete;
* **all-gather** (N-1 steps): the complete chunks travel on round the ring,
  replacing what the receivers held, until every rank holds every chunk.

Each rank sends one chunk (numel / N elements) per step, 2(N-1) steps: 2(N-1)/N
of the tensor, under twice its size however many ranks there are.

The states shown are the engine's own: ``learntorch.distributed.ring.replay``
runs the schedule the real ``ring.all_reduce`` runs (``ring.schedule``), and a
trace recorded by a real run (``ring.all_reduce(t, trace=trace)`` on each rank)
can be shown instead.  Which ranks' numbers a cell holds is worked out the
same way: the replay of one-bit-per-rank integers (rank r holds 2**r, so a sum
is the set of ranks in it).

    >>> from widgets import RingAllReduce
    >>> ring = RingAllReduce(world_size=4, numel=8)
    >>> ring
    RingAllReduce(4 ranks, 8 elements: step 0 of 6, before the first step)
    >>> ring.values()[1]                  # rank r starts with 10**r in every element
    array([10., 10., 10., 10., 10., 10., 10., 10.], dtype=float32)
    >>> ring.step().phase
    'reduce-scatter'
    >>> ring.values()[1][:2]               # rank 0 sent chunk 0 to rank 1, which added it
    array([11., 11.], dtype=float32)
    >>> ring.ranks_in(1, 0)                # which ranks' numbers rank 1's element 0 holds
    (0, 1)
    >>> ring.run_to_end()
    >>> ring.values()[2]
    array([1111., 1111., 1111., 1111., 1111., 1111., 1111., 1111.], dtype=float32)
    >>> ring.bytes_sent(rank=0), ring.tensor_bytes     # 2(N-1)/N = 1.5 times the tensor
    (48, 32)
"""
import numpy as np

from learntorch.distributed import ReduceOp, ring as engine_ring

from ._base import Widget
from . import _svg_grid as svg

MAX_RANKS, MAX_ELEMENTS = 8, 32   # what fits on a notebook's width, one cell per element
DIGIT_RANKS = 5                   # up to here rank r starts with 10**r: digits name the ranks

COMPLETE = "#98df8a"              # a cell holding every rank's numbers
PARTIAL = ("#ffffff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5")
SENT = "#d62728"                  # outline of the chunks sent at the step shown
LEGEND = ("white: one rank's numbers · blue, darker: more ranks' added in · green: every "
          "rank's · red: the chunks sent at this step")


def _op(op):
    if isinstance(op, str):
        try:
            return getattr(ReduceOp, op.upper())
        except AttributeError:
            raise ValueError(f"unknown reduction {op!r}; use one of SUM, AVG, PRODUCT, MIN, "
                             "MAX (or dist.ReduceOp.SUM, ...)") from None
    return op


def default_arrays(world_size, numel):
    """Rank r's tensor by default: 10**r in every element (r + 1 beyond 5 ranks), float32."""
    return [np.full(numel, 10.0 ** r if world_size <= DIGIT_RANKS else r + 1.0, dtype=np.float32)
            for r in range(world_size)]


class RingAllReduce(Widget):
    """The ring all-reduce of N small tensors, one step at a time.

    * ``world_size``, ``numel`` -- how many ranks, how many elements each tensor has
      (2..8 ranks, up to 32 elements: one cell per element);
    * ``arrays`` -- each rank's tensor (N arrays or tensors of ``numel`` elements);
      by default rank r holds 10**r everywhere, so the digits of a sum name its ranks;
    * ``op`` -- the reduction, ``ReduceOp.SUM`` by default (or a name: ``"avg"``);
    * ``trace`` -- what a real run recorded: for each rank, the list ``ring.all_reduce
      (t, trace=trace)`` filled, ``(step, buffer)`` after each step (pass ``arrays``,
      the tensors the ranks started with, too);
    * ``steps`` -- the schedule (``ring.schedule``), ``position`` the step shown
      (0 = before the first); ``step()`` / ``previous()`` / ``go_to(k)`` /
      ``run_to_end()`` / ``reset()``;
    * ``values()`` / ``ranks_in(rank, element)`` -- what the ranks hold now;
    * ``bytes_sent(rank, upto=None)`` -- what a rank has sent by the step shown.

    >>> ring = RingAllReduce(world_size=3, numel=6, op="avg")
    >>> ring.go_to(2)
    >>> ring
    RingAllReduce(3 ranks, 6 elements: step 2 of 4, reduce-scatter)
    >>> ring.complete_chunks(0)          # after reduce-scatter rank r holds chunk r + 1
    [1]
    """

    def __init__(self, world_size=4, numel=8, arrays=None, op=ReduceOp.SUM, trace=None):
        if arrays is not None:
            arrays = [np.array(_numpy(a), copy=True).reshape(-1) for a in arrays]
            world_size, numel = len(arrays), (arrays[0].size if arrays else 0)
        elif trace is not None:
            raise ValueError("a trace shows what the ranks held after each step; pass arrays= "
                             "too, the tensors they started with")
        if not 2 <= world_size <= MAX_RANKS:
            raise ValueError(f"world_size must be between 2 and {MAX_RANKS} to draw the ring, "
                             f"got {world_size}")
        if not 1 <= numel <= MAX_ELEMENTS:
            raise ValueError(f"numel must be between 1 and {MAX_ELEMENTS} (one cell per "
                             f"element), got {numel}")
        self.world_size, self.numel, self.op = world_size, numel, _op(op)
        self.arrays = default_arrays(world_size, numel) if arrays is None else arrays
        self.bounds = engine_ring.chunk_bounds(numel, world_size)
        self.steps = engine_ring.schedule(world_size, numel)
        # the engine's replay, and the same schedule on one-bit-per-rank integers: a cell's
        # sum of 2**r says which ranks' numbers it holds (the bits never carry)
        replayed = list(engine_ring.replay(self.arrays, self.op))
        self.replayed = [[a.copy() for a in self.arrays]] + [buffers for _, buffers in replayed]
        bits = [np.full(numel, 1 << r, dtype=np.int64) for r in range(world_size)]
        self._masks = [bits] + [buffers for _, buffers in engine_ring.replay(bits, ReduceOp.SUM)]
        self.source = "replay" if trace is None else "trace"
        self.states = self.replayed if trace is None else self._from_trace(trace)
        self.tensor_bytes = numel * self.arrays[0].itemsize
        self.position = 0
        self._pictures = {}

    def _from_trace(self, trace):
        n = self.world_size
        if len(trace) != n:
            raise ValueError(f"the trace has {len(trace)} ranks' records but arrays has {n} "
                             "tensors: pass one trace list per rank, in rank order")
        states = [[a.copy() for a in self.arrays]]
        for rank, records in enumerate(trace):
            indices = [getattr(step, "index", step) for step, _ in records]
            if indices != [s.index for s in self.steps]:
                raise ValueError(f"rank {rank}'s trace has the steps {indices}, but a ring of "
                                 f"{n} ranks takes the steps {[s.index for s in self.steps]}: "
                                 "record it with ring.all_reduce(t, trace=trace) on every rank")
        for k in range(len(self.steps)):
            states.append([np.asarray(_numpy(trace[r][k][1])).reshape(-1) for r in range(n)])
        return states

    # ---- state --------------------------------------------------------------------

    @property
    def n_steps(self):
        return len(self.steps)

    @property
    def current(self):
        """The ``RingStep`` shown (None before the first step)."""
        return self.steps[self.position - 1] if self.position else None

    def go_to(self, position):
        if not 0 <= position <= self.n_steps:
            raise IndexError(f"step {position} is out of range: the ring of {self.world_size} "
                             f"ranks has steps 0 to {self.n_steps} (0 = before the first)")
        self.position = int(position)

    def step(self):
        """Show the next step; returns its ``RingStep`` (None when the ring is done)."""
        if self.position == self.n_steps:
            return None
        self.position += 1
        return self.current

    def previous(self):
        if self.position > 0:
            self.position -= 1
        return self.current

    def run_to_end(self):
        self.position = self.n_steps

    def reset(self):
        self.position = 0

    def values(self):
        """What each rank holds at the step shown: a list of N arrays (copies)."""
        return [b.copy() for b in self.states[self.position]]

    def ranks_in(self, rank, element):
        """The ranks whose numbers ``rank``'s ``element`` holds at the step shown."""
        mask = int(self._masks[self.position][rank][element])
        return tuple(r for r in range(self.world_size) if mask >> r & 1)

    def chunk_of(self, element):
        return next(c for c, (a, b) in enumerate(self.bounds) if a <= element < b)

    def complete_chunks(self, rank):
        """The chunks ``rank`` holds fully reduced (every rank's numbers in every element)."""
        full = (1 << self.world_size) - 1
        mask = self._masks[self.position][rank]
        return [c for c, (a, b) in enumerate(self.bounds) if b > a and (mask[a:b] == full).all()]

    def bytes_sent(self, rank, upto=None):
        """Bytes ``rank`` has sent after ``upto`` steps (default: the step shown)."""
        upto = self.position if upto is None else upto
        elements = sum(step.sent_by(rank).numel for step in self.steps[:upto])
        return elements * self.arrays[0].itemsize

    def matches_replay(self):
        """True when the states shown (a real run's trace) equal the engine's replay, bit for bit."""
        return all(np.array_equal(a, b) for shown, replayed in zip(self.states, self.replayed)
                   for a, b in zip(shown, replayed))

    def title_lines(self):
        """Two lines for the step shown: which step, then what happens in it."""
        step = self.current
        if step is None:
            return (f"step 0 of {self.n_steps} · before the first step",
                    f"each rank holds its own tensor of {self.numel} elements, cut into "
                    f"{self.world_size} chunks")
        verb = "adds it into its own" if step.reduces else "replaces its own with it"
        return (f"step {step.index + 1} of {self.n_steps} · {step.phase}",
                f"each rank sends one chunk to its right neighbour, which {verb}")

    def headline(self):
        return ": ".join(self.title_lines())

    def describe(self):
        """The step shown in words: who sends which chunk, who holds what complete, the bytes."""
        lines = [self.headline()]
        step = self.current
        itemsize = self.arrays[0].itemsize
        if step is not None:
            lines.append("  " + ", ".join(f"rank {t.src} -> rank {t.dst}: chunk {t.chunk} "
                                          f"({t.numel * itemsize} B)" for t in step.transfers))
        done = [f"rank {r}: {self.complete_chunks(r)}" for r in range(self.world_size)]
        lines.append("complete chunks: " + ", ".join(done))
        total = self.bytes_sent(0, self.n_steps)
        lines.append(f"sent by rank 0 so far: {self.bytes_sent(0)} B of {total} B in all = "
                     f"{total / self.tensor_bytes:.3g} x the tensor ({self.tensor_bytes} B); "
                     f"2(N-1)/N = {2 * (self.world_size - 1) / self.world_size:.3g}")
        return "\n".join(lines)

    def __repr__(self):
        step = self.current
        what = "before the first step" if step is None else step.phase
        if self.position == self.n_steps:
            what += ", done"
        return (f"RingAllReduce({self.world_size} ranks, {self.numel} elements: step "
                f"{self.position} of {self.n_steps}, {what})")

    # ---- picture ------------------------------------------------------------------

    def static_svg(self):
        """The ranks as rows of cells grouped in chunks; the chunks sent at this step outlined
        in red, with an arrow to the neighbour that receives each.  Colour: how many ranks'
        numbers a cell holds (white = its own only, darker = more, green = all)."""
        if self.position not in self._pictures:
            self._pictures[self.position] = self._draw()
        return self._pictures[self.position]

    def _draw(self):
        n, cell, gap = self.world_size, svg.CELL, 10
        x0, y0, row_gap = 78, 96, 34
        xs = [x0 + e * cell + self.chunk_of(e) * gap for e in range(self.numel)]
        right = xs[-1] + cell
        ys = [y0 + r * (cell + row_gap) for r in range(n)]
        step = self.current
        sent = {t.src: t for t in step.transfers} if step is not None else {}
        title, what = self.title_lines()
        lines = [(title, 13), (what, 12)]
        body = [svg.text(12, 20, title, size=13, weight="bold"), svg.text(12, 40, what, size=12)]
        for c, (a, b) in enumerate(self.bounds):
            if b > a:  # above the lane where the chunk from the last rank comes round
                body.append(svg.text((xs[a] + xs[b - 1] + cell) / 2, y0 - 30, f"chunk {c}",
                                     size=10, anchor="middle", fill="#555"))
        full = (1 << n) - 1
        values, masks = self.states[self.position], self._masks[self.position]
        for r in range(n):
            body.append(svg.text(12, ys[r] + cell / 2 + 4, f"rank {r}", size=12, weight="bold"))
            for e in range(self.numel):
                mask = int(masks[r][e])
                count = bin(mask).count("1")
                fill = COMPLETE if mask == full else PARTIAL[min(count - 1, len(PARTIAL) - 1)]
                ranks = ", ".join(str(k) for k in range(n) if mask >> k & 1)
                body.append(svg.cell(xs[e], ys[r], svg.number(values[r][e].item()), fill=fill,
                                     title=f"rank {r}, element {e} (chunk {self.chunk_of(e)}): "
                                           f"holds the numbers of ranks {ranks}"))
            out = sent.get(r)
            if out is not None and out.numel:
                # the chunk that leaves, and where it lands: one row down, or round to rank 0
                left, width = xs[out.start], xs[out.stop - 1] + cell - xs[out.start]
                body.append(f"<rect x='{left - 2}' y='{ys[r] - 2}' width='{width + 4}' "
                            f"height='{cell + 4}' fill='none' stroke='{SENT}' stroke-width='2'/>")
                middle = left + width / 2
                if out.dst == r + 1:
                    body.append(svg.arrow(middle, ys[r] + cell + 3, middle, ys[r + 1] - 4))
                else:
                    lane = right + 22
                    body.append(
                        f"<path d='M{middle:g},{ys[r] + cell + 3} v10 H{lane:g} V{ys[0] - 16:g} "
                        f"H{middle:g} V{ys[0] - 5:g}' fill='none' stroke='{SENT}' "
                        f"stroke-width='2' marker-end='url(#head)'/>")
        height = ys[-1] + cell + 56
        itemsize = self.arrays[0].itemsize
        sent_now = "" if step is None else f"this step: {step.sent_by(0).numel * itemsize} B from rank 0; "
        lines += [(f"{sent_now}sent by rank 0 so far: {self.bytes_sent(0)} of "
                   f"{self.bytes_sent(0, self.n_steps)} B (the tensor is {self.tensor_bytes} B)", 11),
                  (LEGEND, 10)]
        body.append(svg.text(12, height - 28, lines[-2][0], size=11))
        body.append(svg.text(12, height - 10, LEGEND, size=10, fill="#555"))
        # a monospace character is about 0.6 of the font size wide
        width = max(right + 44, *(24 + 0.62 * size * len(line) for line, size in lines))
        return svg.document(round(width), height, body)

    # ---- live view ----------------------------------------------------------------

    def _build_view(self):
        from ._ring_view import RingView

        return RingView(self).box


def _numpy(value):
    """A tensor (learntorch's or torch's) or array as a numpy array."""
    if hasattr(value, "detach"):
        return value.detach().numpy()
    return np.asarray(value)
