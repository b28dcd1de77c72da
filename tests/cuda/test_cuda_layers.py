"""The layers beyond conv and pooling on cuda tensors: the same backend methods, run by the
device array's numpy functions (or its own kernels), match the cpu -- values and gradients.

Sizes are tiny: in the simulator every GPU thread is a Python thread.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from cuda_compare import check, rand


def _f64(*shape, seed=0):
    return rand(*shape, dtype=np.float64, seed=seed)


def test_conv_transpose2d_matches_the_cpu():
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                             groups=2),
          rand(1, 4, 3, 3), rand(4, 1, 3, 3, seed=1), rand(2, seed=2), rtol=1e-5, atol=1e-5)


def test_unfold_and_fold_match_the_cpu():
    check(lambda x: F.unfold(x, (2, 3), padding=1, stride=(2, 1)), rand(1, 2, 4, 5))
    check(lambda c: F.fold(c, (4, 5), 2), rand(1, 8, 12))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_the_cpu_and_updates_the_running_statistics(training):
    for device in ("cpu", "cuda"):
        mean = learntorch.zeros(3, device=device)
        var = learntorch.ones(3, device=device)
        x = learntorch.tensor(rand(4, 3, 2), device=device)
        F.batch_norm(x, mean, var, training=training)
        if device == "cpu":
            want = (mean.numpy(), var.numpy())
    np.testing.assert_allclose(mean.cpu().numpy(), want[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(var.cpu().numpy(), want[1], rtol=1e-6, atol=1e-6)
    m, v = rand(3, seed=3), np.abs(rand(3, seed=4)) + 0.5

    def norm(x, w, b):
        return F.batch_norm(x, learntorch.tensor(m, device=x.device),
                            learntorch.tensor(v, device=x.device), w, b, training)
    check(norm, rand(4, 3, 2), rand(3, seed=1), rand(3, seed=2), rtol=1e-5, atol=1e-5)


def test_layer_and_group_norm_match_the_cpu():
    check(lambda x, w, b: F.layer_norm(x, (4,), w, b), rand(3, 4), rand(4, seed=1),
          rand(4, seed=2), rtol=1e-5, atol=1e-5)
    check(lambda x, w, b: F.group_norm(x, 2, w, b), rand(2, 4, 3), rand(4, seed=1),
          rand(4, seed=2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [dict(scale_factor=2), dict(size=(3, 5), mode="bilinear"),
                                    dict(size=(5, 2), mode="bilinear", align_corners=True)])
def test_interpolate_matches_the_cpu(kwargs):
    check(lambda x: F.interpolate(x, **kwargs), rand(1, 2, 3, 4), rtol=1e-5, atol=1e-5)


def test_adaptive_poolings_match_the_cpu():
    check(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), rand(1, 2, 5, 4), rtol=1e-5, atol=1e-5)
    check(lambda x: F.adaptive_max_pool2d(x, (2, 3)), rand(1, 2, 5, 4))
    check(lambda x: F.adaptive_max_pool2d(x, 2, return_indices=True)[1], rand(2, 3, 3),
          grad=False)


def test_dropout_masks_are_drawn_on_the_device_and_route_the_gradient():
    x = learntorch.ones(4, 6, 2, 2, device="cuda", requires_grad=True)
    for y in (F.dropout(x, 0.5), F.dropout2d(x, 0.5)):
        assert y.device.type == "cuda"
        values = set(np.unique(y.detach().cpu().numpy()))
        assert values <= {0.0, 2.0} and len(values) == 2
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.cpu().numpy(), y.detach().cpu().numpy())
        x.grad = None


def test_embedding_and_one_hot_match_the_cpu():
    table = rand(5, 3)
    for device in ("cpu", "cuda"):
        idx = learntorch.tensor([[0, 2, 2], [4, 1, 0]], device=device)
        w = learntorch.tensor(table, device=device, requires_grad=True)
        out = F.embedding(idx, w, padding_idx=1)
        out.backward(learntorch.tensor(rand(2, 3, 3, seed=1), device=device))
        one_hot = F.one_hot(idx, 6)
        if device == "cpu":
            want = (out.detach().numpy(), w.grad.numpy(), one_hot.numpy())
    np.testing.assert_array_equal(out.detach().cpu().numpy(), want[0])
    np.testing.assert_allclose(w.grad.cpu().numpy(), want[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(one_hot.cpu().numpy(), want[2])
