"""The CUDA backend's convolution methods (forward, input / weight gradients, im2col /
col2im, with their kernels) match the CPU's.

Oracle: the CPU ``F.conv2d`` with autograd (tested against torch in
``tests/nn``), for the output and all three gradients, over every window
option alone and all together.  Sizes are tiny: in the simulator every GPU
thread is a Python thread.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from learntorch.backends import NumpyBackend
from learntorch.backends.cuda import conv as cuda_conv
from learntorch.backends.cuda.array import CudaArray
from learntorch.backends.cuda.backend import cuda_backend
from learntorch.nn._functional.conv import _geometry
from cuda_compare import check, same

im2col, col2im = NumpyBackend().im2col, NumpyBackend().col2im  # the cpu reference

# (stride, padding, dilation, groups): each option alone, then all of them together
CASES = {
    "plain": (1, 0, 1, 1),
    "padding": (1, 1, 1, 1),
    "stride2": (2, 0, 1, 1),
    "dilation2": (1, 0, 2, 1),
    "groups2": (1, 0, 1, 2),
    "same_even_kernel": (1, "same", 1, 1),   # total padding 1: the extra pixel goes after
    "all_together": (2, 1, 2, 2),
}


def _rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _geometry_for(x, w, stride, padding, dilation):
    padding = padding if isinstance(padding, str) else (padding, padding)
    return _geometry(x, w, (stride, stride), padding, (dilation, dilation))


def test_gradient_kernels_are_the_adjoints_of_the_forward_kernel():
    # the convolution is linear in x and in w: <conv(x, w), y> = <x, dx(y)> = <w, dw(y)>
    # for every y -- the defining property of the gradient kernels, independent of the cpu
    x, w = _rand(2, 4, 7, 6, dtype=np.float64), _rand(4, 2, 3, 2, seed=1, dtype=np.float64)
    g = _geometry_for(x, w, 2, 1, 2)
    xc, wc = CudaArray.from_host(x), CudaArray.from_host(w)
    out = cuda_backend.conv2d(xc, wc, None, g, 2).copy_to_host()
    y = _rand(*out.shape, seed=2, dtype=np.float64)
    gx = cuda_backend.conv2d_backward_input(CudaArray.from_host(y), wc, g, 2)
    gw = cuda_backend.conv2d_backward_weight(CudaArray.from_host(y), xc, g, 2)
    left = np.vdot(out, y)
    assert abs(left - np.vdot(x, gx.copy_to_host())) < 1e-12 * abs(left)
    assert abs(left - np.vdot(w, gw.copy_to_host())) < 1e-12 * abs(left)


def _cpu_convolution(x, w, b, upstream, stride, padding, dilation, groups):
    xt, wt, bt = (learntorch.tensor(a, requires_grad=True) for a in (x, w, b))
    out = F.conv2d(xt, wt, bt, stride, padding, dilation, groups)
    out.backward(learntorch.tensor(upstream))
    return out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()


@pytest.mark.parametrize("case", sorted(CASES))
def test_convolution_forward_and_gradients_match_the_cpu(case):
    stride, padding, dilation, groups = CASES[case]
    kernel = (2, 2) if case == "same_even_kernel" else (3, 3)
    x, w, b = _rand(2, 4, 7, 6), _rand(4, 4 // groups, *kernel, seed=1), _rand(4, seed=2)
    xc, wc, bc = (CudaArray.from_host(a) for a in (x, w, b))
    g = _geometry_for(x, w, stride, padding, dilation)
    out = cuda_backend.conv2d(xc, wc, bc, g, groups)
    upstream = _rand(*out.shape, seed=3)
    want = _cpu_convolution(x, w, b, upstream, stride, padding, dilation, groups)
    uc = CudaArray.from_host(upstream)
    grads = (cuda_backend.conv2d_backward_input(uc, wc, g, groups),
             cuda_backend.conv2d_backward_weight(uc, xc, g, groups))
    for got, expected in zip((out,) + grads, want):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got.copy_to_host(), expected, rtol=1e-5, atol=1e-5)


def test_float64_without_bias_matches_the_cpu():
    x, w = _rand(1, 2, 5, 5, dtype=np.float64), _rand(3, 2, 3, 3, seed=1, dtype=np.float64)
    xc, wc = CudaArray.from_host(x), CudaArray.from_host(w)
    g = _geometry_for(x, w, 1, 1, 1)
    out = cuda_backend.conv2d(xc, wc, None, g, 1)
    xt, wt = learntorch.tensor(x, requires_grad=True), learntorch.tensor(w)
    expected = F.conv2d(xt, wt, padding=1)
    np.testing.assert_allclose(out.copy_to_host(), expected.detach().numpy(), rtol=1e-12)
    upstream = _rand(*out.shape, seed=3, dtype=np.float64)
    expected.backward(learntorch.tensor(upstream))
    gx = cuda_backend.conv2d_backward_input(CudaArray.from_host(upstream), wc, g, 1)
    np.testing.assert_allclose(gx.copy_to_host(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_F_conv2d_on_cuda_tensors_checks_its_arguments_as_on_the_cpu():
    x = learntorch.tensor(_rand(1, 4, 5, 5), device="cuda")
    with pytest.raises(RuntimeError, match=r"groups=2.*\[2, 3, 3, 3\].*6 channels"):
        F.conv2d(x, learntorch.tensor(_rand(2, 3, 3, 3), device="cuda"), groups=2)
    with pytest.raises(RuntimeError, match="Input type.*weight type.*should be the same"):
        F.conv2d(x, learntorch.tensor(_rand(2, 4, 3, 3, dtype=np.float64), device="cuda"))
    with pytest.raises(RuntimeError, match="same device"):
        F.conv2d(x, learntorch.tensor(_rand(2, 4, 3, 3)))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
        F.conv2d(x, learntorch.tensor(_rand(2, 4, 6, 6), device="cuda"))


@pytest.mark.parametrize("case", ["all_together", "same_even_kernel"])
def test_F_conv2d_on_cuda_tensors_runs_these_kernels_and_matches_the_cpu(case, monkeypatch):
    stride, padding, dilation, groups = CASES[case]
    kernel = (2, 2) if case == "same_even_kernel" else (3, 3)
    launched = []
    monkeypatch.setattr(cuda_conv, "kernels", _recording(cuda_conv.kernels, launched))
    check(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups),
          _rand(2, 4, 7, 6), _rand(4, 4 // groups, *kernel, seed=1), _rand(4, seed=2),
          rtol=1e-5, atol=1e-5)
    assert launched  # the cuda path went through backends/cuda/conv.py, not a host fallback


def test_conv1d_and_conv2d_layers_train_on_cuda_like_on_the_cpu():
    check(lambda x, w: F.conv1d(x, w, padding=1, stride=2), _rand(2, 3, 9), _rand(4, 3, 3),
          rtol=1e-5, atol=1e-5)
    layer = learntorch.nn.Conv2d(2, 3, 3, padding=1, bias=False)
    x = _rand(1, 2, 5, 5)
    cpu_out = layer(learntorch.tensor(x))
    cuda_out = layer.to("cuda")(learntorch.tensor(x, device="cuda"))
    same(cuda_out, cpu_out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["plain", "same_even_kernel", "all_together"])
def test_im2col_and_col2im_kernels_match_the_cpu(case):
    # the pair that create_graph=True builds the convolution's gradient from; padding taps
    # are zero in im2col, and col2im adds overlapping windows back into their pixels
    stride, padding, dilation, _ = CASES[case]
    kernel = (2, 2) if case == "same_even_kernel" else (3, 3)
    x = _rand(2, 3, 7, 6, dtype=np.float64)
    g = _geometry_for(x, _rand(1, 3, *kernel), stride, padding, dilation)
    cols = cuda_backend.im2col(CudaArray.from_host(x), g)
    assert cols.shape == (2, 3) + g.kernel + g.out
    np.testing.assert_array_equal(cols.copy_to_host(), im2col(x, g))
    y = _rand(*cols.shape, seed=4, dtype=np.float64)
    back = cuda_backend.col2im(CudaArray.from_host(y), g)
    assert back.shape == x.shape
    np.testing.assert_allclose(back.copy_to_host(), col2im(y, g), rtol=1e-13, atol=1e-13)
    # adjoints: <im2col(x), y> = <x, col2im(y)>
    assert np.isclose(np.vdot(cols.copy_to_host(), y), np.vdot(x, back.copy_to_host()),
                      rtol=1e-12)


def _recording(factory, launched):
    def recorded(dtype):
        launched.append(dtype)
        return factory(dtype)
    return recorded
