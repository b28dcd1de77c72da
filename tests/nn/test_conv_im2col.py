"""The backend's im2col / col2im, the windows under convolution and pooling, against plain
loops; and their pair of Functions (``F.unfold`` / ``F.fold``) differentiated twice."""
import numpy as np
import pytest
from hypothesis import given

import learntorch
from learntorch.autograd import gradcheck, gradgradcheck
from learntorch.backends.geometry import Geometry, output_size
from learntorch.backends.numpy_families.conv import padded, windows
from learntorch.nn._functional.fold import Col2im, Im2col
from window_geometries import window_geometries

_reference = learntorch.backends.NumpyBackend()
im2col, col2im = _reference.im2col, _reference.col2im


def geometries():
    """(Geometry, (N, C, H, W) input shape) for the window ops."""
    return window_geometries().map(lambda case: (case[0], case[1] + case[0].size))


def im2col_by_loops(x, g):
    """The definition, one pixel at a time: cols[n, c, i, j, oh, ow] = x_padded[n, c, h, w]."""
    n, c = x.shape[:2]
    (kh, kw), (ho, wo) = g.kernel, g.out
    cols = np.zeros((n, c, kh, kw, ho, wo))
    for ci in range(c):
        for i in range(kh):
            for j in range(kw):
                for ni in range(n):
                    for oh in range(ho):
                        for ow in range(wo):
                            h = oh * g.stride[0] + i * g.dilation[0] - g.pad[0]
                            w = ow * g.stride[1] + j * g.dilation[1] - g.pad[1]
                            if 0 <= h < x.shape[2] and 0 <= w < x.shape[3]:
                                cols[ni, ci, i, j, oh, ow] = x[ni, ci, h, w]
    return cols


@given(geometries())
def test_im2col_copies_every_window_pixel_where_the_definition_says(case):
    g, shape = case
    x = np.random.default_rng(0).standard_normal(shape)
    np.testing.assert_array_equal(im2col(x, g), im2col_by_loops(x, g))


@given(geometries())
def test_col2im_is_the_adjoint_of_im2col(case):
    """<im2col(x), c> == <x, col2im(c)> for all x, c: what makes col2im im2col's backward."""
    g, shape = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    c = rng.standard_normal(shape[:2] + g.kernel + g.out)
    back = col2im(c, g)
    assert back.shape == x.shape and back.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.vdot(im2col(x, g), c), np.vdot(x, back), rtol=1e-12)


def test_windows_are_a_view_not_a_copy():
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float64).reshape(2, 3, 5, 5)
    g = Geometry((5, 5), (3, 3), (2, 2), (1, 1), (0, 0), (2, 2))
    view = windows(padded(x, g), g)
    assert np.shares_memory(view, x) and not view.flags["WRITEABLE"]
    assert view[1, 2, 2, 1, 1, 0] == x[1, 2, 2 + 2, 1 + 0]


def test_output_size_follows_torchs_formula():
    # floor((size + pads - dilation*(kernel-1) - 1) / stride) + 1
    assert output_size(28, 3, 1, 1, 1, 1) == 28
    assert output_size(7, 3, 2, 1, 0, 0) == 3
    assert output_size(10, 3, 1, 2, 0, 0) == 6
    # ceil_mode keeps a partial last window, unless it would start in the right padding
    assert output_size(5, 2, 2, 1, 0, 0, ceil_mode=True) == 3
    assert output_size(6, 2, 2, 1, 1, 1, ceil_mode=True) == 4
    assert output_size(5, 2, 2, 1, 1, 1, ceil_mode=True) == 3


@pytest.mark.parametrize("fn", ["im2col", "col2im"])
def test_the_pair_is_differentiable_twice(fn):
    g = Geometry((4, 3), (2, 2), (1, 2), (2, 1), (1, 1), (3, 2))
    rng = np.random.default_rng(0)
    if fn == "im2col":
        t = learntorch.tensor(rng.standard_normal((2, 2, 4, 3)), requires_grad=True)
        f = lambda t: Im2col.apply(t, g) ** 2  # noqa: E731 -- squared: second derivative != 0
    else:
        cols_shape = (2, 2 * 2 * 2, 3 * 2)  # (N, C*kh*kw, Ho*Wo)
        t = learntorch.tensor(rng.standard_normal(cols_shape), requires_grad=True)
        f = lambda t: Col2im.apply(t, g) ** 2  # noqa: E731
    assert gradcheck(f, (t,))
    assert gradgradcheck(f, (t,))
