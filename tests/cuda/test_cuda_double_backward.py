"""Gradients of gradients (backward with create_graph=True) through conv and pooling on cuda.

With ``create_graph=True`` the convolution builds its gradient from
differentiable ops (einsums and the ``Im2col`` / ``Col2im`` pair) and the
pooling layers from a scatter-add (max) or ``Col2im`` (avg), so that the
gradient can be differentiated again.  The check is a gradient penalty, as a
WGAN-GP critic or an input-gradient regulariser computes it:

    dx      = d(sum(out ** 2)) / dx            (create_graph=True)
    penalty = sum(dx ** 2)
    grads   = d(penalty) / d(weight, bias, x)

Oracle: the same program on the cpu (whose create_graph paths are checked
against torch in ``tests/nn``).  float64, so that only the order of
additions differs between the two.  Sizes are tiny and most batches hold one
image: in the simulator the tiled matmul behind the einsums costs about two
seconds per launch and image; the first test keeps a batch of two, which the
weight gradient sums over.
"""
import numpy as np

import learntorch
import learntorch.nn.functional as F
from cuda_compare import rand, same


def penalty_gradients(fn, *arrays):
    """d(penalty)/d(every input) as above, where ``fn(x, *params)`` is the model; ``x`` first."""
    results = {}
    for device in ("cpu", "cuda"):
        x, *params = [learntorch.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = fn(x, *params)
        dx, = learntorch.autograd.grad((out * out).sum(), x, create_graph=True)
        assert dx.requires_grad  # the gradient is itself part of a graph
        penalty = (dx * dx).sum()
        results[device] = (penalty, learntorch.autograd.grad(penalty, [x] + params))
    (penalty, grads), (cpu_penalty, cpu_grads) = results["cuda"], results["cpu"]
    same(penalty, cpu_penalty, rtol=1e-10, atol=1e-10)
    for got, expected in zip(grads, cpu_grads):
        same(got, expected, rtol=1e-10, atol=1e-10)


def _f64(*shape, seed=0):
    return rand(*shape, dtype=np.float64, seed=seed)


def test_conv2d_gradient_penalty_with_padding_stride_2_and_groups_2():
    penalty_gradients(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
                      _f64(2, 4, 5, 5), _f64(4, 2, 3, 3, seed=1), _f64(4, seed=2))


def test_conv2d_penalty_on_the_weight_gradient_goes_through_im2col():
    # d(sum(out^2))/dw = g @ im2col(x)^T: its own gradient runs Im2col's backward (Col2im)
    def model(x, w):
        out = F.conv2d(x, w, padding=1, dilation=2)
        dw, = learntorch.autograd.grad((out * out).sum(), w, create_graph=True)
        return out.sum() + (dw * dw).sum()
    penalty_gradients(model, _f64(1, 2, 6, 5), _f64(3, 2, 3, 2, seed=1))


def test_conv1d_gradient_penalty():
    penalty_gradients(lambda x, w: F.conv1d(x, w, padding=1, stride=2), _f64(1, 2, 9),
                      _f64(3, 2, 3, seed=1))


def test_max_pool2d_after_a_conv_gradient_penalty_on_the_weight():
    # overlapping, padded windows: a pixel that wins several windows collects several gradients
    penalty_gradients(lambda x, w: F.max_pool2d(F.conv2d(x, w, padding=1), 3, stride=2,
                                                padding=1),
                      _f64(1, 2, 6, 6), _f64(3, 2, 3, 3, seed=1))


def test_max_pool2d_alone_gradient_of_the_input_gradient():
    # a 3-D (C, H, W) input; x * x makes the second derivative non-zero
    penalty_gradients(lambda x: F.max_pool2d(x * x, 3, stride=1, padding=1), _f64(2, 5, 4))


def test_avg_pool2d_after_a_conv_gradient_penalty_on_the_weight():
    penalty_gradients(
        lambda x, w: F.avg_pool2d(F.conv2d(x, w), 3, stride=2, padding=1,
                                  count_include_pad=False, ceil_mode=True),
        _f64(1, 2, 7, 6), _f64(3, 2, 2, 2, seed=1))


def test_float32_conv2d_gradient_penalty_matches_within_float32_rounding():
    # float32 sums in a different order on the two devices: equal to a few ulps
    arrays = [rand(1, 4, 5, 5), rand(4, 2, 3, 3, seed=1)]
    results = {}
    for device in ("cpu", "cuda"):
        x, w = [learntorch.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = F.conv2d(x, w, stride=2, padding=1, groups=2)
        dx, = learntorch.autograd.grad((out * out).sum(), x, create_graph=True)
        results[device] = learntorch.autograd.grad((dx * dx).sum(), w)[0]
    same(results["cuda"], results["cpu"], rtol=1e-4, atol=1e-3)
