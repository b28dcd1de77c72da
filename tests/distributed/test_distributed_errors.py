"""Misuse gives torch's exception type, with a message that names what is wrong and the fix.

The first tests need no MPI job (they fail before any message is sent); the rest
run ``rank_programs.misuse`` on 2 ranks, where every rank must raise -- a
mismatch between ranks is an error on all of them, not a hang.
"""
import os
import subprocess
import sys

import pytest

import learntorch as torch
import learntorch.distributed as dist
from oracle import require_torch


def test_importing_learntorch_does_not_import_mpi():
    code = "import sys, learntorch, learntorch.distributed; print('mpi4py' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == "False", result.stderr


def test_a_collective_before_init_process_group_is_torchs_value_error():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(torch.ones(2))):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


@pytest.mark.parametrize("backend, error, fix", [
    ("gloo", RuntimeError, "Gloo built in"), ("nccl", RuntimeError, "NCCL built in"),
    ("cpu:gloo,cuda:nccl", RuntimeError, 'backend="mpi"'),
    ("mpu", ValueError, "Invalid backend")])
def test_a_backend_other_than_mpi_is_refused_before_anything_starts(backend, error, fix):
    with pytest.raises(error, match=fix):
        dist.init_process_group(backend=backend)
    assert not dist.is_initialized()


def test_reduce_op_members_are_torchs():
    real_torch = require_torch()
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        assert int(getattr(dist.ReduceOp, name)) == int(getattr(real_torch.distributed.ReduceOp,
                                                                name))


@pytest.fixture(scope="module")
def misuse(job_results):
    from rank_programs import misuse
    return job_results(misuse, 2)


def expect(caught, error_type, *phrases):
    assert caught is not None, f"expected a {error_type}, nothing was raised"
    name, message = caught
    assert name == error_type, f"{name}: {message}"
    for phrase in phrases:
        assert phrase in message, f"{phrase!r} not in: {message}"


def test_world_size_that_disagrees_with_the_launcher_says_how_to_start_n_ranks(misuse):
    for out in misuse:
        expect(out["wrong_world_size"], "ValueError", "init_process_group(world_size=5) says",
               "MPI started this process with world_size=2", "--nproc-per-node N")
        expect(out["wrong_env_world_size"], "ValueError",
               "the environment variable WORLD_SIZE says world_size=7")


def test_init_twice_is_torchs_value_error(misuse):
    for out in misuse:
        expect(out["twice"], "ValueError", "trying to initialize the default process group twice")


def test_ranks_passing_different_shapes_all_get_an_error_naming_each_ranks_shape(misuse):
    for out in misuse:
        expect(out["shape"], "RuntimeError", "rank 0: shape (3,) float32",
               "rank 1: shape (4,) float32", "same shape and dtype")


def test_ranks_passing_different_dtypes_all_get_an_error_naming_each_dtype(misuse):
    for out in misuse:
        expect(out["dtype"], "RuntimeError", "float32", "float64")


def test_ranks_calling_different_collectives_all_get_an_error_naming_them(misuse):
    for out in misuse:
        expect(out["different_collectives"], "RuntimeError", "rank 0 called all_reduce",
               "rank 1 called broadcast", "same order")


def test_tensor_arguments_are_checked_on_each_rank(misuse):
    for out in misuse:
        expect(out["non_contiguous"], "RuntimeError", "contiguous", "(4, 3)", ".contiguous()")
        expect(out["avg_of_ints"], "RuntimeError", "ReduceOp.AVG", "int64", "ReduceOp.SUM")
        expect(out["not_a_tensor"], "TypeError", "Expected parameter `tensor`")
        expect(out["bad_src"], "ValueError", "src=7", "0..1")
        expect(out["gather_list_length"], "ValueError", "1 tensors", "2 ranks")


def test_send_to_oneself_and_a_receive_of_the_wrong_size_are_refused(misuse):
    for rank, out in enumerate(misuse):
        expect(out["send_to_self"], "ValueError", "Invalid destination rank")
    expect(misuse[1]["recv_too_small"], "RuntimeError", "sent 24 bytes", "holds 16 bytes",
           "same shape and dtype")


def test_destroy_process_group_ends_the_group(misuse):
    for out in misuse:
        expect(out["after_destroy"], "ValueError", "has not been initialized")


def test_tensor_arguments_are_checked_before_the_group_as_torch_does():
    with pytest.raises(TypeError, match="Expected parameter `tensor`"):
        dist.all_reduce([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"contiguous.*\.contiguous\(\)"):
        dist.broadcast(torch.zeros(3, 4).t(), src=0)


def test_a_gpu_tensor_is_refused_with_the_move_to_make():
    # a CUDA tensor needs the CUDA simulator on a machine without a GPU: a fresh process
    code = ("import learntorch, learntorch.distributed as dist\n"
            "try:\n"
            "    dist.all_reduce(learntorch.ones(2, device='cuda'))\n"
            "except RuntimeError as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert "is on cuda:0" in result.stdout and ".cpu()" in result.stdout, result.stderr
