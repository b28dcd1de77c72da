"""A learner's backend is called by the layers in forward AND backward: convolution,
pooling, normalisation, padding, resizing, dropout and lookups all compute through
``backends.current`` (in the fast tier too: it steps aside for a backend it does not know)."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from learntorch.backends import NumpyBackend


class Spy(NumpyBackend):
    """The numpy reference, noting the name of every primitive called."""

    def __init__(self):
        self.calls = []

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if callable(value) and not name.startswith("_") and name in dir(NumpyBackend):
            super().__getattribute__("calls").append(name)
        return value


def model():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect"), nn.BatchNorm2d(4), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout2d(0.2), nn.ConvTranspose2d(4, 4, 2, stride=2),
        nn.GroupNorm(2, 4), nn.AvgPool2d(2), nn.Upsample(scale_factor=2, mode="bilinear"),
        nn.AdaptiveAvgPool2d(3), nn.AdaptiveMaxPool2d(2), nn.Flatten(), nn.LayerNorm(16),
        nn.Linear(16, 3))


LAYER_PRIMITIVES = {
    "forward": ["conv2d", "pad", "norm_statistics", "inverse_std", "normalize",
                "running_average", "max_pool2d", "dropout_mask", "avg_pool2d",
                "upsample_linear", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                "conv2d_backward_input"],
    "backward": ["conv2d_backward_input", "conv2d_backward_weight", "pad_backward",
                 "normalize_backward", "normalize_affine_backward", "max_pool2d_backward",
                 "avg_pool2d_backward", "upsample_linear_backward",
                 "adaptive_avg_pool2d_backward", "adaptive_max_pool2d_backward", "conv2d",
                 "im2col", "col2im"],
}


@pytest.mark.parametrize("tier", ["fast", "reference"])
def test_a_learners_backend_computes_every_layer_forward_and_backward(tier):
    learntorch.manual_seed(0)
    net = model()
    x = learntorch.randn(2, 1, 8, 8, requires_grad=True)  # (an input gradient to compute too)
    spy = Spy()
    with learntorch.tiers.use(tier), learntorch.backends.use(spy):
        out = net(x)
        forward, spy.calls = spy.calls, []
        F.cross_entropy(out, learntorch.tensor([0, 2])).backward()
        backward = spy.calls
    for name in LAYER_PRIMITIVES["forward"]:
        assert name in forward, f"{name} not called in forward"
    for name in LAYER_PRIMITIVES["backward"]:
        assert name in backward, f"{name} not called in backward"
    assert all(p.grad is not None and np.isfinite(p.grad.numpy()).all()
               for p in net.parameters())


def test_a_learners_conv2d_replaces_the_convolution_everywhere():
    class LoopConv(NumpyBackend):
        """conv2d as the six loops of its definition: slow, obviously right."""

        def conv2d(self, x, weight, bias, g, groups):
            n, c = x.shape[:2]
            o, cg, kh, kw = weight.shape
            (sh, sw), (dh, dw), (ph, pw), (ho, wo) = g.stride, g.dilation, g.pad, g.out
            out = np.zeros((n, o, ho, wo), x.dtype)
            for b in range(n):
                for k in range(o):
                    c0 = k // (o // groups) * cg
                    for i in range(ho):
                        for j in range(wo):
                            for cc in range(cg):
                                for u in range(kh):
                                    for v in range(kw):
                                        h, w = i * sh - ph + u * dh, j * sw - pw + v * dw
                                        if 0 <= h < x.shape[2] and 0 <= w < x.shape[3]:
                                            out[b, k, i, j] += (weight[k, cc, u, v]
                                                                * x[b, c0 + cc, h, w])
            return out if bias is None else out + bias.reshape(-1, 1, 1)

    x = learntorch.randn(2, 4, 5, 6, dtype=learntorch.float64)
    w = learntorch.randn(6, 2, 3, 2, dtype=learntorch.float64)
    expected = F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    with learntorch.backends.use(LoopConv()):
        got = F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
