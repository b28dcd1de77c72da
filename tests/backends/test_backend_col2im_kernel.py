"""The Numba col2im kernel against numpy's col2im, over every kind of window geometry.

col2im is the backward of the convolution's window copy: the kernel must give
numpy's values for any stride, dilation, padding before/after and ceil-mode-style
windows hanging over the edge (bit for bit: it adds the taps in numpy's order), and
the convolution's input gradient must still match torch's when it runs.
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

col2im = NumpyBackend().col2im   # the reference

torch = pytest.importorskip("torch")


def geometries():
    """Larger windows and images than the im2col specs: the kernel's loops have more edges."""
    return window_geometries(max_kernel=4, max_after=3, max_extra=6, max_batch=3)


def kernel_col2im(cols, g):
    n, c = cols.shape[:2]
    dx = np.full((n * c,) + g.size, np.nan, dtype=cols.dtype)  # every pixel must be written
    kernels("col2im_kernels").col2im(cols.reshape((n * c,) + cols.shape[2:]), *g.kernel,
                                     *g.stride, *g.pad, *g.dilation, dx)
    return dx.reshape((n, c) + g.size)


@settings(max_examples=150, deadline=None)
@given(geometries(), st.sampled_from([np.float32, np.float64]))
def test_kernel_adds_every_window_entry_back_where_numpys_col2im_does(case, dtype):
    g, planes = case
    cols = np.random.default_rng(0).standard_normal(planes + g.kernel + g.out).astype(dtype)
    expected = col2im(cols, g)
    got = kernel_col2im(cols, g)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expected)   # the same additions in the same order


def test_col2im_runs_the_kernel_for_large_float_arrays_only(monkeypatch):
    g = Geometry((14, 14), (3, 3), (1, 1), (1, 1), (1, 1), (14, 14))
    big = np.ones((4, 8, 3, 3, 14, 14), np.float32)
    backend = NumbaBackend()
    serves = backend._layer_kernel_serves
    assert big.size >= backend.layer_min_sizes["col2im"] and serves("col2im", big)
    assert not serves("col2im", big[:1, :1, :1, :1])      # small: numpy
    assert not serves("col2im", big.astype(np.float16))   # float16: numpy
    calls = spy_on_kernel(monkeypatch, conv_backend, "col2im_kernels", "col2im")
    dx = backend.col2im(big, g)
    assert calls == [(32, 3, 3, 14, 14)]
    backend.col2im(big[:1, :1, :1, :1], g)
    assert len(calls) == 1
    # interior pixels are covered by all nine taps, corners by four
    assert dx[0, 0, 5, 5] == 9 and dx[0, 0, 0, 0] == 4 and dx.flags["C_CONTIGUOUS"]


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 1, 1, 1), (2, 0, 1, 1), (1, 2, 2, 2), ((2, 1), (0, 1), (1, 2), 4)])
def test_convolution_input_gradient_with_the_kernel_matches_torch(stride, padding, dilation,
                                                                  groups):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8, 15, 13)).astype(np.float32)
    w = rng.standard_normal((12, 8 // groups, 3, 3)).astype(np.float32)
    ours = learntorch.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = learntorch.nn.functional.conv2d(ours, learntorch.tensor(w), None, stride, padding,
                                          dilation, groups)
    ref = torch.nn.functional.conv2d(theirs, torch.tensor(w), None, stride, padding, dilation,
                                     groups)
    g = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    assert 6 * 8 * 9 * int(np.prod(ref.shape[2:])) >= NumbaBackend.layer_min_sizes["col2im"]
    out.backward(learntorch.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)
