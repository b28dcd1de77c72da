"""The Numba col2im kernel against numpy's col2im, over every kind of window geometry.

col2im is the backward of the convolution's window copy: the kernel must give
numpy's values (up to the order of float additions) for any stride, dilation,
padding before/after and ceil-mode-style windows hanging over the edge, and the
convolution's input gradient must still match torch's when it runs.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import learntorch
from learntorch.backends.numba_cpu.loader import kernels, layer_kernel_serves
from learntorch.nn._functional import im2col as im2col_module
from learntorch.nn._functional.im2col import Geometry, col2im
from window_geometries import window_geometries

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
    with learntorch.backends.use("numpy"):  # numpy's col2im: the reference
        expected = col2im(cols, g)
    got = kernel_col2im(cols, g)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == np.float32 else 1e-13,
                               atol=1e-6 if dtype == np.float32 else 1e-13)


def test_col2im_runs_the_kernel_for_large_float_arrays_only(monkeypatch):
    g = Geometry((14, 14), (3, 3), (1, 1), (1, 1), (1, 1), (14, 14))
    big = np.ones((4, 8, 3, 3, 14, 14), np.float32)
    assert layer_kernel_serves(big, im2col_module.COL2IM_KERNEL_MIN_SIZE)
    assert not layer_kernel_serves(big[:1, :1, :1, :1], im2col_module.COL2IM_KERNEL_MIN_SIZE)
    assert not layer_kernel_serves(big.astype(np.float16), 0)
    with learntorch.backends.use("numpy"):
        assert not layer_kernel_serves(big, 0)
    calls = []
    real = kernels("col2im_kernels")

    class Spy:
        @staticmethod
        def col2im(*args):
            calls.append(args[0].shape)
            return real.col2im(*args)
    monkeypatch.setattr(im2col_module, "kernels", lambda family: Spy)
    dx = col2im(big, g)
    assert calls == [(32, 3, 3, 14, 14)]
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
    assert 6 * 8 * 9 * int(np.prod(ref.shape[2:])) >= im2col_module.COL2IM_KERNEL_MIN_SIZE
    out.backward(learntorch.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)
