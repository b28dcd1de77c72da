"""RingAllReduce shows a real run: the trace 4 MPI ranks record with ``ring.all_reduce(trace=)``.

The ranks run the engine's ring over MPI and send back the buffer each held after
every step; the widget, handed those traces and the starting tensors, shows them
-- and they equal the engine's replay, which the widget draws without a trace.
"""
import numpy as np

from learntorch.distributed import is_mpi_available, run_ranks
from widgets import RingAllReduce


def start(rank, numel):
    return np.arange(numel, dtype=np.float32) * (rank + 1) + 0.25 * rank


def ring_on_this_rank(numel):
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group()
    t = torch.from_numpy(start(dist.get_rank(), numel))
    trace = []
    dist.ring.all_reduce(t, op=dist.ReduceOp.AVG, trace=trace)
    dist.destroy_process_group()
    return trace


def test_the_trace_of_a_real_run_is_shown_and_equals_the_replay():
    assert is_mpi_available(), "pip install 'learntorch[distributed]' (make test installs it)"
    n, numel = 4, 10
    traces = [r.value for r in run_ranks(ring_on_this_rank, nprocs=n, args=(numel,),
                                         timeout=120, show_output=False)]
    arrays = [start(r, numel) for r in range(n)]
    widget = RingAllReduce(arrays=arrays, op="avg", trace=traces)
    assert widget.source == "trace" and widget.matches_replay()
    for position in range(1, widget.n_steps + 1):
        widget.go_to(position)
        for rank in range(n):
            np.testing.assert_array_equal(widget.values()[rank], traces[rank][position - 1][1])
    np.testing.assert_allclose(widget.values()[0], np.mean(arrays, axis=0), rtol=1e-6)
