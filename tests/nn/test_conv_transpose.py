"""F.conv_transpose2d and F.conv_transpose1d against torch: values, the gradients of input,
weight and bias, second derivatives, node names and torch's errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from oracle import both_raise, check_against_torch, require_torch
from second_order import check_second_order_against_torch
from test_layers_oracle import strided

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-10)}


def random(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pair(dims, **kwargs):
    torch = require_torch()
    ours = F.conv_transpose2d if dims == 2 else F.conv_transpose1d
    theirs = (torch.nn.functional.conv_transpose2d if dims == 2
              else torch.nn.functional.conv_transpose1d)
    return (lambda *a: ours(*a, **kwargs)), (lambda *a: theirs(*a, **kwargs))


# (input shape, weight shape (C_in, C_out/groups, k...), keywords)
CASES = [
    ((2, 3, 5, 4), (3, 4, 3, 3), {}),
    ((2, 3, 5, 4), (3, 2, 2, 3), dict(stride=2)),
    ((1, 4, 4, 5), (4, 3, 3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2))),
    ((2, 4, 3, 3), (4, 2, 3, 3), dict(groups=2, dilation=2, padding=1)),
    ((2, 4, 3, 4), (4, 1, 2, 2), dict(groups=4, stride=2)),                 # depthwise
    ((2, 3, 4, 4), (3, 2, 3, 3), dict(stride=2, padding=1, dilation=2, output_padding=1)),
    ((3, 4, 4), (3, 2, 3, 3), dict(stride=2)),                                # unbatched
    ((2, 3, 1, 1), (3, 5, 4, 4), {}),                                         # 1x1 -> 4x4
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CASES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose2d_values_and_gradients_equal_torch(x_shape, w_shape, kwargs, bias,
                                                           dtype):
    ours, theirs = pair(2, **kwargs)
    arrays = [random(x_shape, dtype), random(w_shape, dtype, seed=1)]
    if bias:
        arrays.append(random((w_shape[1] * kwargs.get("groups", 1),), dtype, seed=2))
    check_against_torch(ours, theirs, *arrays, **TOL[dtype])


@pytest.mark.parametrize("x_shape, w_shape, kwargs", [
    ((2, 3, 7), (3, 4, 3), {}),
    ((2, 4, 6), (4, 3, 3), dict(stride=3, padding=1, output_padding=2, groups=2)),
    ((4, 5), (4, 2, 2), dict(stride=2, dilation=3)),                          # unbatched
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose1d_values_and_gradients_equal_torch(x_shape, w_shape, kwargs, dtype):
    ours, theirs = pair(1, **kwargs)
    arrays = [random(x_shape, dtype), random(w_shape, dtype, seed=1),
              random((w_shape[1] * kwargs.get("groups", 1),), dtype, seed=2)]
    check_against_torch(ours, theirs, *arrays, **TOL[dtype])


@st.composite
def transposed_geometries(draw):
    groups = draw(st.sampled_from([1, 2]))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    size = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    # padding may not make the output empty
    padding = tuple(draw(st.integers(0, max(0, ((n - 1) * s + d * (k - 1) + op) // 2)))
                    for n, s, d, k, op in zip(size, stride, dilation, kernel, output_padding))
    return dict(x=(draw(st.integers(1, 2)), 2 * groups) + size,
                w=(2 * groups, draw(st.integers(1, 2))) + kernel,
                kw=dict(stride=stride, padding=padding, output_padding=output_padding,
                        groups=groups, dilation=dilation),
                layout=draw(st.sampled_from(["contiguous", "transposed"])))


@given(transposed_geometries())
def test_conv_transpose2d_equals_torch_on_random_geometries(cfg):
    ours, theirs = pair(2, **cfg["kw"])
    check_against_torch(ours, theirs, strided(random(cfg["x"]), cfg["layout"]),
                        random(cfg["w"], seed=1), **TOL[np.float64])


@pytest.mark.parametrize("dims", [1, 2])
def test_second_derivatives_equal_torch(dims):
    ours, theirs = pair(dims, stride=2, padding=1, output_padding=1, groups=2)
    check_second_order_against_torch(ours, theirs, random((2, 4) + (3,) * dims),
                                     random((4, 3) + (3,) * dims, seed=1), random(6, seed=2))


def test_node_names_are_torchs():
    x = learntorch.randn(1, 2, 3, 3, requires_grad=True)
    w = learntorch.randn(2, 3, 3, 3, requires_grad=True)
    y = F.conv_transpose2d(x, w)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    gx, = learntorch.autograd.grad((y * y).sum(), x, create_graph=True)
    assert gx.grad_fn.name() == "ConvolutionBackwardBackward0"


def test_conv_transpose_is_the_adjoint_of_conv():
    # <conv2d(x, w), y> = <x, conv_transpose2d(y, w)>: the defining property
    x, w, y = random((2, 3, 7, 6)), random((4, 3, 3, 2), seed=1), random((2, 4, 4, 4), seed=2)
    kwargs = dict(stride=2, padding=(1, 2), dilation=(1, 2))
    left = (F.conv2d(learntorch.tensor(x), learntorch.tensor(w), **kwargs).numpy() * y).sum()
    back = F.conv_transpose2d(learntorch.tensor(y), learntorch.tensor(w), output_padding=(0, 1),
                              **kwargs)
    assert back.shape == x.shape
    np.testing.assert_allclose(left, (x * back.numpy()).sum(), rtol=1e-12)


ERRORS = [
    (((1, 4, 5, 5), (4, 3, 3, 3)), dict(output_padding=1)),                 # >= stride, dilation
    (((1, 4, 5, 5), (4, 3, 3, 3)), dict(stride=2, output_padding=2)),
    (((1, 5, 5, 5), (4, 3, 3, 3)), {}),                                     # channels
    (((1, 4, 5, 5), (4, 3, 3, 3)), dict(groups=3)),                         # groups
    (((1, 4, 5, 5), (4, 3, 3, 3)), dict(padding=5)),                        # output too small
    (((1, 4, 5, 5), (4, 3, 3, 3)), dict(stride=0)),
    (((1, 4, 5, 5), (4, 3, 3, 3)), dict(padding=-1)),
    (((1, 4, 5, 5), (4, 3, 3)), {}),                                        # weight rank
    (((4, 5), (4, 3, 3, 3)), {}),                                           # input rank
]


@pytest.mark.parametrize("shapes, kwargs", ERRORS)
def test_bad_arguments_raise_torchs_exception(shapes, kwargs):
    x, w = (random(s) for s in shapes)
    message = both_raise(lambda lib: lib.nn.functional.conv_transpose2d(lib.tensor(x),
                                                                        lib.tensor(w), **kwargs))
    assert message


def test_bias_of_the_wrong_size_and_padding_strings_are_refused_like_torch():
    x, w = random((1, 4, 5, 5)), random((4, 3, 3, 3))
    conv_t = "conv_transpose2d"
    assert "3 elements" in both_raise(lambda lib: getattr(lib.nn.functional, conv_t)(
        lib.tensor(x), lib.tensor(w), lib.tensor(random(4))))
    both_raise(lambda lib: getattr(lib.nn.functional, conv_t)(lib.tensor(x), lib.tensor(w),
                                                              padding="same"))
    both_raise(lambda lib: getattr(lib.nn.functional, conv_t)(lib.tensor(x).double(),
                                                              lib.tensor(w).float()))
