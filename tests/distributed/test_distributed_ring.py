"""The ring all-reduce: its schedule, its in-process replay, and the real run matching both.

The schedule is what a widget draws; ``replay`` runs it on N arrays in one
process; ``ring.all_reduce`` runs it between real ranks.  The last test holds
the replay equal, step by step and bit for bit, to what the ranks really held.
"""
import numpy as np
import pytest

from learntorch.distributed import ReduceOp, ring, run_ranks
from rank_programs import rank_input


@pytest.mark.parametrize("world_size, numel", [(2, 10), (3, 10), (4, 7), (5, 3), (3, 0), (1, 4)])
def test_the_chunks_cover_the_tensor_once_and_differ_in_size_by_at_most_one(world_size, numel):
    bounds = ring.chunk_bounds(numel, world_size)
    assert len(bounds) == world_size
    assert [a for a, _ in bounds] == [0] + [b for _, b in bounds[:-1]]
    assert bounds[0][0] == 0 and bounds[-1][1] == numel
    sizes = [b - a for a, b in bounds]
    assert max(sizes) - min(sizes) <= 1
    assert [len(c) for c in np.array_split(np.arange(numel), world_size)] == sizes


@pytest.mark.parametrize("world_size", [2, 3, 4, 8])
def test_each_rank_sends_2_n_minus_1_over_n_of_the_data_in_2_n_minus_1_steps(world_size):
    numel = 24 * world_size
    steps = ring.schedule(world_size, numel)
    assert len(steps) == 2 * (world_size - 1)
    assert [s.phase for s in steps] == (["reduce-scatter"] * (world_size - 1)
                                        + ["all-gather"] * (world_size - 1))
    for rank in range(world_size):
        assert ring.elements_sent(steps, rank) == 2 * (world_size - 1) * numel // world_size


def test_every_step_sends_each_rank_one_chunk_to_its_right_neighbour():
    for step in ring.schedule(4, 12):
        assert [(t.src, t.dst) for t in step.transfers] == [(0, 1), (1, 2), (2, 3), (3, 0)]
        assert sorted(t.chunk for t in step.transfers) == [0, 1, 2, 3]  # all chunks move
        for rank in range(4):
            assert step.received_by(rank).dst == rank


def test_after_the_reduce_scatter_rank_r_holds_chunk_r_plus_1_fully_reduced():
    n = 4
    arrays = [rank_input(r, "float64", shape=(8,)) for r in range(n)]
    states = list(ring.replay(arrays))
    _, after_reduce_scatter = states[n - 2]
    total = np.sum(arrays, axis=0)
    for rank in range(n):
        start, stop = ring.chunk_bounds(8, n)[(rank + 1) % n]
        np.testing.assert_array_equal(after_reduce_scatter[rank][start:stop], total[start:stop])


@pytest.mark.parametrize("op", ["SUM", "AVG", "PRODUCT", "MIN", "MAX"])
@pytest.mark.parametrize("world_size", [2, 3, 5])
def test_replay_ends_with_every_rank_holding_the_reduction(world_size, op):
    arrays = [rank_input(r, "float64", shape=(11,)) for r in range(world_size)]
    *_, (step, final) = ring.replay(arrays, getattr(ReduceOp, op))
    numpy_op = {"SUM": np.sum, "AVG": np.mean, "PRODUCT": np.prod, "MIN": np.min,
                "MAX": np.max}[op]
    for buffer in final:
        np.testing.assert_allclose(buffer, numpy_op(np.stack(arrays), axis=0), rtol=1e-12)
    # the inputs are not changed
    np.testing.assert_array_equal(arrays[0], rank_input(0, "float64", shape=(11,)))


@pytest.mark.parametrize("world_size, numel", [(2, 9), (3, 10)])
def test_the_real_ring_holds_at_each_step_exactly_what_the_replay_shows(mpi, world_size, numel):
    from rank_programs import ring_trace
    results = run_ranks(ring_trace, nprocs=world_size, args=(numel, "AVG", "float32"),
                        show_output=False, timeout=120)
    arrays = [rank_input(r, "float32", shape=(numel,)) for r in range(world_size)]
    replayed = list(ring.replay(arrays, ReduceOp.AVG))
    for rank, result in enumerate(results):
        trace, final = result.value
        assert [index for index, _ in trace] == [step.index for step, _ in replayed]
        for (index, buffer), (step, buffers) in zip(trace, replayed):
            np.testing.assert_array_equal(buffer, buffers[rank], err_msg=f"step {index}")
        np.testing.assert_array_equal(final, replayed[-1][1][rank])
