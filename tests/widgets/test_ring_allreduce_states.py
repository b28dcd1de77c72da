"""RingAllReduce's states are the engine's: ``ring.replay`` of ``ring.schedule``, or a real run's trace.

Oracles: the engine's replay (which tests/distributed holds equal, bit for bit, to
the real run over MPI), numpy's reductions for the end state, and counting by
hand for the bytes and for which ranks' numbers each cell holds.
"""
import numpy as np
import pytest

import learntorch as torch
from learntorch.distributed import ReduceOp, ring
from widgets import RingAllReduce


@pytest.mark.parametrize("world_size, numel, op", [(4, 8, "SUM"), (3, 7, "AVG"), (2, 5, "MAX"),
                                                   (5, 3, "SUM"), (8, 16, "MIN")])
def test_every_state_is_the_engines_replay_of_its_schedule(world_size, numel, op):
    rng = np.random.default_rng(world_size * 100 + numel)
    arrays = [rng.normal(size=numel).astype(np.float32) for _ in range(world_size)]
    widget = RingAllReduce(arrays=arrays, op=op)
    replayed = list(ring.replay(arrays, getattr(ReduceOp, op)))
    assert widget.n_steps == len(replayed) == 2 * (world_size - 1)
    assert [s.index for s in widget.steps] == [s.index for s, _ in replayed]
    for position in range(widget.n_steps + 1):
        widget.go_to(position)
        expected = arrays if position == 0 else replayed[position - 1][1]
        for shown, engine in zip(widget.values(), expected):
            np.testing.assert_array_equal(shown, engine)
    numpy_op = {"SUM": np.sum, "AVG": np.mean, "MAX": np.max, "MIN": np.min}[op]
    for shown in widget.values():
        np.testing.assert_allclose(shown, numpy_op(np.stack(arrays), axis=0), rtol=1e-5)


def test_by_default_rank_r_holds_ten_to_the_r_so_the_digits_name_the_ranks():
    widget = RingAllReduce(world_size=4, numel=8)
    assert [float(v[0]) for v in widget.values()] == [1.0, 10.0, 100.0, 1000.0]
    widget.go_to(2)
    for rank in range(4):
        for element in range(8):
            digits = f"{int(widget.values()[rank][element]):04d}"[::-1]
            assert widget.ranks_in(rank, element) == tuple(r for r in range(4) if digits[r] == "1")
    widget.run_to_end()
    assert all((v == 1111).all() for v in widget.values())
    # beyond five ranks 10**r would not fit a cell: r + 1
    assert [float(v[0]) for v in RingAllReduce(world_size=6, numel=6).values()] == [1, 2, 3, 4, 5, 6]


def test_a_chunk_gains_one_rank_per_reduce_scatter_step_then_rank_r_holds_chunk_r_plus_1():
    n = 4
    widget = RingAllReduce(world_size=n, numel=8)
    for s in range(1, n):
        widget.go_to(s)
        step = widget.current
        assert step.phase == "reduce-scatter"
        for t in step.transfers:   # what arrived holds the sender's ranks and the receiver's
            start = t.start
            assert len(widget.ranks_in(t.dst, start)) == s + 1
    assert [widget.complete_chunks(r) for r in range(n)] == [[1], [2], [3], [0]]
    widget.run_to_end()
    assert [widget.complete_chunks(r) for r in range(n)] == [[0, 1, 2, 3]] * n


@pytest.mark.parametrize("world_size, numel", [(2, 8), (4, 8), (4, 10), (8, 16)])
def test_each_rank_sends_2_n_minus_1_over_n_of_the_tensor(world_size, numel):
    widget = RingAllReduce(world_size=world_size, numel=numel)
    itemsize = 4   # float32 by default
    for rank in range(world_size):
        total = widget.bytes_sent(rank, upto=widget.n_steps)
        # one chunk per step, 2(N-1) steps; chunks differ by at most one element
        assert total == itemsize * sum(s.sent_by(rank).numel for s in widget.steps)
        assert abs(total - 2 * (world_size - 1) / world_size * numel * itemsize) <= \
            2 * (world_size - 1) * itemsize
    if numel % world_size == 0:
        assert widget.bytes_sent(0, upto=widget.n_steps) == \
            2 * (world_size - 1) * numel // world_size * itemsize
    widget.go_to(1)
    assert widget.bytes_sent(0) == widget.steps[0].sent_by(0).numel * itemsize
    assert widget.tensor_bytes == numel * itemsize


def test_tensors_are_taken_as_arrays_and_left_unchanged():
    tensors = [torch.arange(6.) * (r + 1) for r in range(3)]
    widget = RingAllReduce(arrays=tensors, op=ReduceOp.SUM)
    widget.run_to_end()
    np.testing.assert_array_equal(widget.values()[0], np.arange(6.) * 6)
    np.testing.assert_array_equal(tensors[1].numpy(), np.arange(6.) * 2)


def _trace_of_a_run(arrays, op):
    """What each rank's ``ring.all_reduce(t, trace=trace)`` records: (step, its buffer) per
    step -- the replay's states, which tests/distributed proves equal to the real run's."""
    replayed = list(ring.replay(arrays, op))
    return [[(step, buffers[rank]) for step, buffers in replayed] for rank in range(len(arrays))]


def test_a_recorded_trace_is_shown_and_compared_with_the_replay():
    arrays = [np.arange(5, dtype=np.float64) + 10 * r for r in range(3)]
    trace = _trace_of_a_run(arrays, ReduceOp.AVG)
    widget = RingAllReduce(arrays=arrays, op="avg", trace=trace)
    assert widget.source == "trace" and widget.matches_replay()
    widget.go_to(3)
    np.testing.assert_array_equal(widget.values()[2], trace[2][2][1])
    # steps recorded as their index (plain data from a rank) are taken too
    as_indices = [[(step.index, buffer) for step, buffer in records] for records in trace]
    assert RingAllReduce(arrays=arrays, op="avg", trace=as_indices).matches_replay()
    # a trace that differs from the replay is shown as it is, and says so
    trace[1][0] = (trace[1][0][0], trace[1][0][1] + 1)
    changed = RingAllReduce(arrays=arrays, op="avg", trace=trace)
    changed.go_to(1)
    assert not changed.matches_replay()
    np.testing.assert_array_equal(changed.values()[1], trace[1][0][1])


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(ValueError, match="between 2 and 8"):
        RingAllReduce(world_size=1)
    with pytest.raises(ValueError, match="one cell per element"):
        RingAllReduce(world_size=2, numel=33)
    with pytest.raises(ValueError, match="pass arrays="):
        RingAllReduce(trace=[[], []])
    arrays = [np.zeros(4)] * 2
    with pytest.raises(ValueError, match="one trace list per rank"):
        RingAllReduce(arrays=arrays, trace=[[]])
    with pytest.raises(ValueError, match="takes the steps"):
        RingAllReduce(arrays=arrays, trace=[[], []])
    with pytest.raises(ValueError, match="unknown reduction 'mean'"):
        RingAllReduce(op="mean")


def test_stepping_moves_within_the_steps():
    widget = RingAllReduce(world_size=2, numel=4)
    assert widget.previous() is None and widget.position == 0
    assert widget.step().phase == "reduce-scatter"
    assert widget.step().phase == "all-gather"
    assert widget.step() is None and widget.position == 2
    widget.reset()
    assert widget.position == 0
    with pytest.raises(IndexError, match="steps 0 to 2"):
        widget.go_to(3)
