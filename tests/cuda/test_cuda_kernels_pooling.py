"""The CUDA backend's max/avg pooling methods (their kernels) match the CPU's: values,
argmax indices, gradients.

Oracle: the CPU ``F.max_pool2d(return_indices=True)`` / ``F.avg_pool2d`` with
autograd (tested against torch in ``tests/nn``).  The cases cover each window
option, overlapping windows (a pixel that wins, or lies in, several windows
collects several gradients), ties, NaN and -inf, and 3-D inputs.
"""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from learntorch.backends.cuda import pooling
from learntorch.backends.cuda.array import CudaArray
from learntorch.backends.cuda.backend import cuda_backend
from learntorch.backends.geometry import avg_divisor
from learntorch.nn._functional import pooling as layer
from cuda_compare import check


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(values, indices, geometry) of the backend method, with F.max_pool2d's arguments."""
    kernel, stride, padding = layer._window_arguments("max_pool2d", kernel_size, stride,
                                                      padding)
    dilation = layer._pair("max_pool2d", "dilation", dilation, "")
    g = layer._pool_geometry(x, kernel, stride, padding, dilation, ceil_mode)
    return cuda_backend.max_pool2d(x, g) + (g,)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """(values, geometry, divisor) of the backend method, with F.avg_pool2d's arguments."""
    kernel, stride, padding = layer._window_arguments("avg_pool2d", kernel_size, stride,
                                                      padding)
    g = layer._pool_geometry(x, kernel, stride, padding, (1, 1), ceil_mode)
    divisor = avg_divisor(g, count_include_pad, divisor_override)
    return cuda_backend.avg_pool2d(x, g, divisor), g, divisor


def _rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _cpu(fn, x, upstream_seed=3, **kwargs):
    """The cpu result(s) of ``fn`` on ``x``, and x's gradient for a random upstream gradient."""
    xt = learntorch.tensor(x, requires_grad=True)
    result = fn(xt, **kwargs)
    out = result[0] if isinstance(result, tuple) else result
    upstream = _rand(*out.shape, seed=upstream_seed, dtype=x.dtype)
    out.backward(learntorch.tensor(upstream))
    extra = result[1].numpy() if isinstance(result, tuple) else None
    return out.detach().numpy(), extra, xt.grad.numpy(), upstream


MAX_CASES = {
    "2x2": dict(kernel_size=2),
    "overlapping_3x3_stride1": dict(kernel_size=3, stride=1),
    "stride2_padding1": dict(kernel_size=3, stride=2, padding=1),
    "dilation2": dict(kernel_size=2, stride=1, dilation=2),
    "ceil_mode": dict(kernel_size=3, stride=2, ceil_mode=True),
    "everything": dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2),
                       ceil_mode=True),
}


@pytest.mark.parametrize("case", sorted(MAX_CASES))
def test_max_pool_values_indices_and_gradient_match_the_cpu(case):
    options = MAX_CASES[case]
    x = _rand(2, 3, 7, 6)
    want_out, want_idx, want_grad, upstream = _cpu(F.max_pool2d, x, return_indices=True,
                                                   **options)
    out, idx, g = max_pool2d(CudaArray.from_host(x), **options)
    np.testing.assert_array_equal(out.copy_to_host(), want_out)
    np.testing.assert_array_equal(idx.copy_to_host(), want_idx)
    assert idx.dtype == np.int64
    grad = cuda_backend.max_pool2d_backward(CudaArray.from_host(upstream), idx, g)
    np.testing.assert_allclose(grad.copy_to_host(), want_grad, rtol=1e-6, atol=1e-6)


def test_max_pool_ties_keep_the_first_pixel_and_overlapping_winners_collect_every_window():
    # few distinct values: most windows have ties; stride 1 makes one pixel win many windows
    x = np.random.default_rng(1).integers(0, 3, (1, 2, 6, 6)).astype(np.float64)
    want_out, want_idx, want_grad, upstream = _cpu(F.max_pool2d, x, return_indices=True,
                                                   kernel_size=3, stride=1, padding=1)
    out, idx, g = max_pool2d(CudaArray.from_host(x), 3, 1, 1)
    np.testing.assert_array_equal(idx.copy_to_host(), want_idx)
    np.testing.assert_array_equal(out.copy_to_host(), want_out)
    grad = cuda_backend.max_pool2d_backward(CudaArray.from_host(upstream), idx, g).copy_to_host()
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-12)
    assert (np.bincount(idx.copy_to_host().ravel()) > 1).any()  # some pixel won several windows


def test_max_pool_nan_always_wins_the_last_nan_of_a_window_and_minus_inf_is_a_value():
    x = _rand(1, 1, 6, 6)
    x[0, 0, 0, 1] = x[0, 0, 1, 0] = np.nan           # two NaNs in the first window
    x[0, 0, 4, 4] = np.nan
    x[0, 0, 2:4, 2:4] = -np.inf                      # a window of -inf only: its first pixel
    want_out, want_idx, *_ = _cpu(F.max_pool2d, x, return_indices=True, kernel_size=2)
    out, idx, _ = max_pool2d(CudaArray.from_host(x), 2)
    np.testing.assert_array_equal(out.copy_to_host(), want_out)   # NaNs compare equal here
    np.testing.assert_array_equal(idx.copy_to_host(), want_idx)
    assert idx.copy_to_host()[0, 0, 0, 0] == 6 and idx.copy_to_host()[0, 0, 1, 1] == 14


def test_max_pool_on_a_3d_input_and_an_integer_dtype():
    x = np.random.default_rng(2).integers(-50, 50, (3, 5, 5)).astype(np.int64)
    want = F.max_pool2d(learntorch.tensor(x), 2, 1, return_indices=True)
    out, idx, _ = max_pool2d(CudaArray.from_host(x), 2, 1)
    assert out.dtype == np.int64 and out.shape == (3, 4, 4)
    np.testing.assert_array_equal(out.copy_to_host(), want[0].numpy())
    np.testing.assert_array_equal(idx.copy_to_host(), want[1].numpy())


AVG_CASES = {
    "2x2": dict(kernel_size=2),
    "overlapping_3x3_stride1": dict(kernel_size=3, stride=1),
    "padding_counted": dict(kernel_size=3, stride=2, padding=1),
    "padding_not_counted": dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    "ceil_mode": dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                      count_include_pad=False),
    "divisor_override": dict(kernel_size=(2, 3), stride=1, divisor_override=5),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(AVG_CASES))
def test_avg_pool_values_and_gradient_match_the_cpu(case, dtype):
    options = AVG_CASES[case]
    x = _rand(2, 2, 7, 6, dtype=dtype)
    want_out, _, want_grad, upstream = _cpu(F.avg_pool2d, x, **options)
    out, g, divisor = avg_pool2d(CudaArray.from_host(x), **options)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    assert out.dtype == dtype
    np.testing.assert_allclose(out.copy_to_host(), want_out, rtol=tol, atol=tol)
    grad = cuda_backend.avg_pool2d_backward(CudaArray.from_host(upstream), g, divisor)
    np.testing.assert_allclose(grad.copy_to_host(), want_grad, rtol=tol, atol=tol)


def test_bad_arguments_raise_as_the_cpu_does():
    x = learntorch.tensor(_rand(1, 1, 4, 4), device="cuda")
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(NotImplementedError, match="int64 on cuda.*input.float()"):
        F.avg_pool2d(learntorch.ones(1, 4, 4, dtype=learntorch.int64, device="cuda"), 2)


@pytest.mark.parametrize("options", [dict(kernel_size=3, stride=1, padding=1),
                                     dict(kernel_size=2, stride=2, dilation=2, ceil_mode=True)])
def test_F_max_pool2d_on_cuda_tensors_matches_the_cpu(options):
    check(lambda x: F.max_pool2d(x, **options), _rand(2, 3, 7, 6), rtol=1e-6, atol=1e-6)
    check(lambda x: F.max_pool2d(x, return_indices=True, **options)[1], _rand(3, 7, 6),
          grad=False)


@pytest.mark.parametrize("options", [dict(kernel_size=3, stride=1, padding=1),
                                     dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                          count_include_pad=False)])
def test_F_avg_pool2d_on_cuda_tensors_matches_the_cpu(options):
    check(lambda x: F.avg_pool2d(x, **options), _rand(2, 3, 7, 6), rtol=1e-6, atol=1e-6)


def test_pooling_layers_run_their_cuda_kernels(monkeypatch):
    launched = []
    original = pooling.kernels
    monkeypatch.setattr(pooling, "kernels", lambda dtype: launched.append(dtype) or original(dtype))
    x = learntorch.tensor(_rand(1, 2, 4, 4), device="cuda", requires_grad=True)
    (learntorch.nn.MaxPool2d(2)(x).sum() + learntorch.nn.AvgPool2d(2)(x).sum()).backward()
    assert len(launched) == 4 and x.grad.device.type == "cuda"
