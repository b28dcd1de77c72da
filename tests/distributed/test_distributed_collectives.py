"""The collectives on 2 and 3 real MPI ranks, against numpy.

One job per world size runs every collective (``rank_programs.collectives``);
each test below checks one of its results against what numpy computes from the
ranks' inputs, which the parent can make too (``rank_input``).
"""
import numpy as np
import pytest

from rank_programs import DTYPES, SHAPE, rank_input

REDUCE = {"SUM": lambda xs: np.sum(xs, axis=0), "PRODUCT": lambda xs: np.prod(xs, axis=0),
          "MIN": lambda xs: np.min(xs, axis=0), "MAX": lambda xs: np.max(xs, axis=0),
          "BAND": lambda xs: np.bitwise_and.reduce(xs, axis=0),
          "BOR": lambda xs: np.bitwise_or.reduce(xs, axis=0),
          "BXOR": lambda xs: np.bitwise_xor.reduce(xs, axis=0)}


def expected_reduction(name, inputs):
    stacked = np.stack(inputs)
    if name == "AVG":
        return (np.sum(stacked, axis=0) / len(inputs)).astype(stacked.dtype)
    return REDUCE[name](stacked).astype(stacked.dtype)


def cases():
    for dtype in DTYPES:
        for name in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
            if (name == "AVG" and dtype == "int64") or (
                    name in ("BAND", "BOR", "BXOR") and dtype != "int64"):
                continue
            yield name, dtype


@pytest.fixture(scope="module", params=[2, 3], ids=["2 ranks", "3 ranks"])
def job(request, job_results):
    from rank_programs import collectives
    return request.param, job_results(collectives, request.param)


def assert_same(got, expected):
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)


def test_each_rank_knows_its_rank_the_world_size_and_the_backend(job):
    size, values = job
    assert [(v["rank"], v["size"], v["backend"]) for v in values] == [
        (r, size, "mpi") for r in range(size)]


@pytest.mark.parametrize("name, dtype", list(cases()))
def test_all_reduce_gives_every_rank_the_reduction_numpy_computes(job, name, dtype):
    size, values = job
    expected = expected_reduction(name, [rank_input(r, dtype) for r in range(size)])
    for kind in ("all_reduce", "all_reduce_async", "ring"):
        for v in values:
            assert_same(v[f"{kind}/{name}/{dtype}"], expected)


@pytest.mark.parametrize("name, dtype", list(cases()))
def test_reduce_gives_the_reduction_to_dst_only(job, name, dtype):
    size, values = job
    expected = expected_reduction(name, [rank_input(r, dtype) for r in range(size)])
    assert_same(values[size - 1][f"reduce/{name}/{dtype}"], expected)
    for r in range(size - 1):  # the other ranks' tensors are left as they were
        assert_same(values[r][f"reduce/{name}/{dtype}"], rank_input(r, dtype))


@pytest.mark.parametrize("name, dtype", list(cases()))
def test_reduce_scatter_gives_rank_r_the_reduction_of_everyones_part_r(job, name, dtype):
    size, values = job
    for r in range(size):
        expected = expected_reduction(name, [rank_input(src, dtype, salt=r)
                                             for src in range(size)])
        assert_same(values[r][f"reduce_scatter/{name}/{dtype}"], expected)
        assert_same(values[r][f"reduce_scatter_tensor/{name}/{dtype}"], expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_copies_the_source_ranks_tensor_everywhere(job, dtype):
    size, values = job
    for v in values:
        assert_same(v[f"broadcast/{dtype}"], rank_input(size - 1, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather_collects_every_ranks_tensor_in_rank_order(job, dtype):
    size, values = job
    everyone = np.stack([rank_input(r, dtype) for r in range(size)])
    for v in values:
        assert_same(v[f"all_gather/{dtype}"], everyone)
        assert_same(v[f"all_gather_into_tensor/{dtype}"], everyone.reshape(-1, SHAPE[1]))
    assert_same(values[0][f"gather/{dtype}"], everyone)
    assert all(f"gather/{dtype}" not in v for v in values[1:])


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_gives_rank_r_the_sources_piece_r(job, dtype):
    size, values = job
    for r, v in enumerate(values):
        assert_same(v[f"scatter/{dtype}"], rank_input(0, dtype, salt=r))


def test_send_and_recv_move_a_tensor_to_the_next_rank_and_name_the_sender(job):
    size, values = job
    for r, v in enumerate(values):
        got, sender = v["send_recv"]
        assert sender == (r - 1) % size
        assert_same(got, rank_input((r - 1) % size, "float64"))
        got, completed = v["isend_irecv"]
        assert completed
        assert_same(got, rank_input((r - 1) % size, "float64"))


def test_an_async_collective_keeps_its_buffer_alive_until_wait(job):
    # MPI writes into the buffer until the request completes; had Python freed it, the
    # arrays allocated meanwhile would be overwritten (or the process would crash)
    size, values = job
    assert all(v["temporary_buffer_survives"] == 0.0 for v in values)
