"""The Numba im2col kernel against numpy's window copy, over every kind of window geometry.

The kernel writes the windows of the whole batch channel-major, (C, kh, kw, N, Ho, Wo),
the layout of the Numba backend's one product per group; read in numpy's order
(N, C, kh, kw, Ho, Wo) it must be numpy's ``im2col`` exactly (a copy: every value the
same bits, every padding position 0).  The convolution it feeds must still match torch's
forward and weight gradient.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import learntorch
from learntorch.backends import NumbaBackend, NumpyBackend
from learntorch.backends.geometry import Geometry
from learntorch.backends.numba_cpu import conv_backend
from learntorch.backends.numba_cpu.loader import kernels
from kernel_spy import spy_on_kernel
from window_geometries import window_geometries

im2col = NumpyBackend().im2col   # the reference: (N, C, kh, kw, Ho, Wo)

torch = pytest.importorskip("torch")


def kernel_im2col(x, g):
    """The kernel's columns, read in the reference's order."""
    n, c = x.shape[:2]
    cols = np.full((c,) + g.kernel + (n,) + g.out, np.nan, dtype=x.dtype)  # all must be written
    kernels("im2col_kernels").im2col(x, *g.kernel, *g.stride, *g.pad, *g.dilation, cols)
    return cols.transpose(3, 0, 1, 2, 4, 5)


@settings(max_examples=150, deadline=None)
@given(window_geometries(max_kernel=4, max_after=3, max_extra=6, max_batch=3),
       st.sampled_from([np.float32, np.float64]))
def test_kernel_copies_every_window_as_numpys_im2col_does(case, dtype):
    g, planes = case
    x = np.random.default_rng(0).standard_normal(planes + g.size).astype(dtype)
    expected = im2col(x, g)
    got = kernel_im2col(x, g)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expected)


def test_padding_reads_as_zero_and_values_keep_their_bits():
    g = Geometry((3, 4), (3, 3), (1, 1), (1, 1), (1, 1), (3, 4))
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 1e-45, 3.0, -2.5, 7.0, 0.5, 1.0, 2.0, 4.0],
                 np.float32).reshape(1, 1, 3, 4)
    got = kernel_im2col(x, g)
    expected = im2col(x, g)
    assert got.tobytes() == expected.tobytes()             # NaN, -0.0 and subnormals included
    assert got[0, 0, 0, 0, 0, 0] == 0 and got[0, 0, 1, 1, 0, 0] == x[0, 0, 0, 0]


def test_conv_runs_the_kernel_for_large_float_arrays_only(monkeypatch):
    backend = NumbaBackend()
    g = Geometry((14, 14), (3, 3), (1, 1), (1, 1), (1, 1), (14, 14))
    x = np.random.default_rng(1).standard_normal((4, 8, 14, 14)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((16, 8, 3, 3)).astype(np.float32)
    calls = spy_on_kernel(monkeypatch, conv_backend, "im2col_kernels", "im2col")
    out = backend.conv2d(x, w, None, g, 1)
    assert calls == [(4, 8, 14, 14)]
    np.testing.assert_allclose(out, NumpyBackend().conv2d(x, w, None, g, 1), rtol=1e-5, atol=1e-5)
    backend.conv2d(x[:1, :1, :3, :3], w[:, :1], None,
                   Geometry((3, 3), (3, 3), (1, 1), (1, 1), (1, 1), (3, 3)), 1)  # small: numpy
    backend.conv2d(x.astype(np.float16), w.astype(np.float16), None, g, 1)          # float16: numpy
    assert len(calls) == 1


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 1, 1, 1), (2, 0, 1, 1), (1, 2, 2, 2), ((2, 1), (0, 1), (1, 2), 4)])
def test_convolution_with_the_kernel_matches_torch_forward_and_weight_gradient(
        stride, padding, dilation, groups):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8, 15, 13)).astype(np.float32)
    w = rng.standard_normal((12, 8 // groups, 3, 3)).astype(np.float32)
    ours = learntorch.tensor(w, requires_grad=True)
    theirs = torch.tensor(w, requires_grad=True)
    out = learntorch.nn.functional.conv2d(learntorch.tensor(x), ours, None, stride, padding,
                                          dilation, groups)
    ref = torch.nn.functional.conv2d(torch.tensor(x), theirs, None, stride, padding, dilation,
                                     groups)
    assert 6 * 8 * 9 * int(np.prod(ref.shape[2:])) >= NumbaBackend.layer_min_sizes["im2col"]
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    out.backward(learntorch.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-3)
