"""DistributedDataParallel: N ranks on shards of a batch train exactly like one process on it.

The proof: the mean of the shards' mean gradients is the batch's mean gradient,
so after DDP averages the gradients, every rank takes the step one process
would take on the whole batch.  ``rank_programs.ddp_proof`` trains the digits
MLP (float64) on 2 and 3 ranks, with SGD (momentum) and Adam; each test
compares with the same loop run here on the whole batch.
"""
import numpy as np
import pytest

import learntorch as torch
from learntorch.nn.parallel import _buckets
from rank_programs import BATCH, digits_batch, digits_mlp, numpy_state, train


@pytest.fixture(scope="module", params=[2, 3], ids=["2 ranks", "3 ranks"])
def proof(request, job_results):
    from rank_programs import ddp_proof
    return job_results(ddp_proof, request.param)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_ddp_on_shards_reaches_the_parameters_of_one_process_on_the_whole_batch(proof,
                                                                                  optimizer):
    x, y = digits_batch()
    one_process = numpy_state(train(digits_mlp(seed=0), x, y, optimizer))
    for rank, state in enumerate(proof):
        assert state[optimizer].keys() == one_process.keys()
        for name, value in one_process.items():
            np.testing.assert_allclose(state[optimizer][name], value, rtol=0, atol=1e-6,
                                       err_msg=f"rank {rank}, {optimizer}, {name}")
        # and the training did move the parameters
        assert not np.allclose(one_process["0.weight"], numpy_state(digits_mlp())["0.weight"])


@pytest.fixture(scope="module")
def behaviour(job_results):
    from rank_programs import ddp_behaviour
    return job_results(ddp_behaviour, 2)


def test_buckets_are_reduced_in_reverse_parameter_order_while_backward_runs(behaviour):
    for out in behaviour:
        assert out["buckets"] == [["2.bias"], ["2.weight"], ["0.bias"], ["0.weight"]]
        events = out["events"]
        first_launch = events.index(("launch", 0))
        last_ready = max(i for i, e in enumerate(events) if e[0] == "ready")
        assert first_launch < last_ready, f"no overlap: {events}"
        assert [e[1] for e in events if e[0] == "launch"] == [0, 1, 2, 3]
        assert [e[1] for e in events if e[0] == "done"] == [0, 1, 2, 3]
        assert events[-1] == ("done", 3)  # all written back before backward returned


def test_state_dict_keys_carry_the_module_prefix_as_torchs(behaviour):
    assert behaviour[0]["state_dict_keys"] == ["module.0.weight", "module.0.bias",
                                               "module.2.weight", "module.2.bias"]


def grad_of(model, x, y):
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    return model[0].weight.grad.numpy().copy()


def test_no_sync_accumulates_locally_and_the_next_backward_averages_the_sum(behaviour):
    x, y = digits_batch()
    model = digits_mlp()
    for rank, out in enumerate(behaviour):
        a, b = slice(10 * rank, 10 * rank + 5), slice(10 * rank + 5, 10 * rank + 10)
        np.testing.assert_allclose(out["no_sync_local_grad"], grad_of(model, x[a], y[a]),
                                   atol=1e-12)
    summed = [grad_of(model, x[10 * r:10 * r + 5], y[10 * r:10 * r + 5])
              + grad_of(model, x[10 * r + 5:10 * r + 10], y[10 * r + 5:10 * r + 10])
              for r in range(2)]
    for out in behaviour:
        np.testing.assert_allclose(out["no_sync_then_sync_grad"], np.mean(summed, axis=0),
                                   atol=1e-12)


def test_find_unused_parameters_averages_with_zeros_and_leaves_unused_grads_none(behaviour):
    from rank_programs import TwoBranches
    net = TwoBranches.build()
    net(torch.ones(4, 3, dtype=torch.float64) * 2, use_b=True).sum().backward()
    # only rank 1 used b: the average is its gradient over 2
    for out in behaviour:
        np.testing.assert_allclose(out["partly_used_grad"], net.b.weight.grad.numpy() / 2)
        assert out["unused_grad_is_none"]
    # a.weight's gradient is x summed over the batch, averaged over the ranks
    expected = np.full((2, 3), (4 * 1 + 4 * 2) / 2)
    for out in behaviour:
        np.testing.assert_allclose(out["used_grad"], expected)


def test_a_parameter_without_gradient_is_reported_at_the_next_forward_by_name(behaviour):
    for out in behaviour:
        message = out["unfinished_error"]
        assert "Expected to have finished reduction in the prior iteration" in message
        assert "find_unused_parameters=True" in message
        assert "b.weight" in message and "b.bias" in message and "a.weight" not in message


def test_rank_0s_buffers_reach_every_rank_at_construction_and_at_each_forward(behaviour):
    for out in behaviour:
        np.testing.assert_array_equal(out["buffer_after_init"], [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(out["buffer_after_forward"], [10.0, 10.0, 10.0])


def test_misuse_is_refused_with_the_fix(behaviour):
    for out in behaviour:
        assert "device_ids" in out["device_ids_error"] and "leave both None" in \
            out["device_ids_error"]
        assert "DDP expects same model across all ranks" in out["different_model_error"]


# ---------------------------------------------------------------- buckets, in one process
def test_a_small_model_fits_one_bucket_in_reverse_parameter_order():
    params = list(digits_mlp().parameters())
    assert _buckets.assign(params, 25 * 1024 * 1024) == [[3, 2, 1, 0]]


def test_buckets_close_at_their_size_limit_and_hold_one_dtype_each():
    params = [torch.zeros(256, dtype=torch.float32), torch.zeros(256, dtype=torch.float64),
              torch.zeros(256, dtype=torch.float32), torch.zeros(256, dtype=torch.float32)]
    # 1 KiB of float32 per tensor: the first bucket closes at 1 KiB (its limit), the others
    # at 2 KiB; the float64 tensor has its own
    assert _buckets.assign(params, bucket_cap_bytes=2048, first_bucket_bytes=1024) == [
        [3], [2, 0], [1]]
