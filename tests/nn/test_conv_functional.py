"""F.conv2d and F.conv1d against torch: values, the gradients of input, weight and bias,
second derivatives, and torch's errors."""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from learntorch.autograd import gradcheck, gradgradcheck
from oracle import as_numpy, assert_close, both_raise, check_against_torch, require_torch
from test_layers_oracle import strided

# torch warns that it copies the input for 'same' padding with an even kernel; nothing to see
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-10)}


def random(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def conv_pair(dims, bias, **kwargs):
    """(learntorch function, torch function) taking (x, w[, b]) with the given keywords."""
    torch = require_torch()
    lt_f = F.conv2d if dims == 2 else F.conv1d
    th_f = torch.nn.functional.conv2d if dims == 2 else torch.nn.functional.conv1d
    if bias:
        return (lambda x, w, b: lt_f(x, w, b, **kwargs)), (lambda x, w, b: th_f(x, w, b, **kwargs))
    return (lambda x, w: lt_f(x, w, **kwargs)), (lambda x, w: th_f(x, w, **kwargs))


# (input shape, weight shape, keywords): kernel sizes, strides, paddings, dilations, groups
CONV2D_CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 3), {}),
    ((1, 1, 5, 5), (2, 1, 1, 1), {}),                                     # 1x1 kernel
    ((3, 2, 8, 7), (5, 2, 2, 4), dict(stride=2)),                         # non-square kernel
    ((2, 3, 9, 8), (4, 3, 3, 2), dict(stride=(3, 2), padding=(2, 1))),
    ((2, 2, 9, 9), (3, 2, 3, 3), dict(dilation=2, padding=2)),
    ((2, 2, 10, 9), (3, 2, 2, 3), dict(stride=2, dilation=(3, 1), padding=(1, 0))),
    ((2, 4, 6, 6), (6, 2, 3, 3), dict(groups=2, padding=1)),
    ((2, 4, 6, 5), (4, 1, 3, 2), dict(groups=4, stride=(1, 2))),          # depthwise
    ((1, 3, 7, 8), (4, 3, 3, 3), dict(padding="same")),
    ((2, 3, 7, 8), (4, 3, 2, 4), dict(padding="same")),                   # even kernel: extra after
    ((2, 3, 7, 8), (2, 3, 2, 3), dict(padding="same", dilation=(3, 2))),
    ((2, 3, 5, 6), (4, 3, 3, 3), dict(padding="valid")),
    ((2, 3, 4, 4), (2, 3, 4, 4), {}),                                     # kernel = image: 1x1 out
    ((2, 1, 5, 5), (2, 1, 2, 2), dict(stride=4)),                         # stride skips pixels
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONV2D_CASES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_values_and_gradients_equal_torch(x_shape, w_shape, kwargs, bias, dtype):
    lt_f, th_f = conv_pair(2, bias, **kwargs)
    arrays = [random(x_shape, dtype), random(w_shape, dtype, seed=1)]
    if bias:
        arrays.append(random(w_shape[:1], dtype, seed=2))
    check_against_torch(lt_f, th_f, *arrays, **TOL[dtype])


CONV1D_CASES = [
    ((2, 3, 9), (4, 3, 3), {}),
    ((1, 2, 8), (3, 2, 2), dict(stride=3, padding=2)),
    ((3, 4, 11), (6, 2, 3), dict(groups=2, dilation=2, padding=1)),
    ((2, 3, 8), (4, 3, 4), dict(padding="same", dilation=3)),
    ((2, 3, 8), (4, 3, 5), dict(padding="valid")),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONV1D_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv1d_values_and_gradients_equal_torch(x_shape, w_shape, kwargs, dtype):
    lt_f, th_f = conv_pair(1, True, **kwargs)
    check_against_torch(lt_f, th_f, random(x_shape, dtype), random(w_shape, dtype, seed=1),
                        random(w_shape[:1], dtype, seed=2), **TOL[dtype])


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_conv2d_on_non_contiguous_input_and_weight_equals_torch(layout):
    lt_f, th_f = conv_pair(2, True, stride=(1, 2), padding=1)
    x = strided(random((2, 3, 6, 7)), layout)
    w = strided(random((4, 3, 3, 2), seed=1), layout)
    check_against_torch(lt_f, th_f, x, w, random(4, seed=2), **TOL[np.float64])


def test_conv2d_gradient_arriving_non_contiguous_equals_torch():
    torch = require_torch()
    x, w = random((2, 3, 6, 6)), random((4, 3, 3, 3), seed=1)
    g = random((2, 4, 4, 4), seed=3)
    a, b = learntorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    # the transpose after the conv hands the conv a transposed (non-contiguous) gradient
    (F.conv2d(a, learntorch.tensor(w)).transpose(2, 3) * learntorch.tensor(g)).sum().backward()
    (torch.nn.functional.conv2d(b, torch.tensor(w)).transpose(2, 3) * torch.tensor(g)).sum() \
        .backward()
    assert_close(a.grad, b.grad, **TOL[np.float64])


@st.composite
def conv_configs(draw):
    """A valid random conv2d: shapes, stride, padding (numbers or a string), dilation, groups."""
    groups = draw(st.integers(1, 3))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    if draw(st.booleans()):
        padding, stride = "same", (1, 1)
    else:
        padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
        stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    reach = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    lows = [max(1, r - 2 * (p if padding != "same" else 0))
            for r, p in zip(reach, padding if padding != "same" else (0, 0))]
    size = (draw(st.integers(lows[0], lows[0] + 4)), draw(st.integers(lows[1], lows[1] + 4)))
    batch = draw(st.integers(1, 3))
    return dict(x=(batch, cin) + size, w=(cout, cin // groups) + kernel, bias=draw(st.booleans()),
                kw=dict(stride=stride, padding=padding, dilation=dilation, groups=groups),
                layout=draw(st.sampled_from(["plain", "transposed", "strided"])))


@given(conv_configs())
def test_conv2d_equals_torch_on_random_geometries(cfg):
    lt_f, th_f = conv_pair(2, cfg["bias"], **cfg["kw"])
    arrays = [strided(random(cfg["x"]), cfg["layout"]), random(cfg["w"], seed=1)]
    if cfg["bias"]:
        arrays.append(random(cfg["w"][:1], seed=2))
    check_against_torch(lt_f, th_f, *arrays, **TOL[np.float64])


@pytest.mark.parametrize("dims", [1, 2])
def test_unbatched_input_is_a_batch_of_one_like_torch(dims):
    torch = require_torch()
    lt_f, th_f = conv_pair(dims, True, padding=1)
    x = random((3,) + (5,) * dims)
    out = check_against_torch(lt_f, th_f, x, random((2, 3) + (3,) * dims, seed=1),
                              random(2, seed=2), **TOL[np.float64])
    assert out.shape == (2,) + (5,) * dims
    th_out = th_f(torch.tensor(x, requires_grad=True),
                  torch.zeros((2, 3) + (3,) * dims, dtype=torch.float64),
                  torch.zeros(2, dtype=torch.float64))
    assert out.grad_fn.name() == th_out.grad_fn.name() == "SqueezeBackward1"


def test_conv2d_node_is_named_like_torchs():
    torch = require_torch()
    x = random((1, 1, 4, 4))
    lt_out = F.conv2d(learntorch.tensor(x, requires_grad=True),
                      learntorch.ones(1, 1, 2, 2, dtype=learntorch.float64))
    th_out = torch.nn.functional.conv2d(torch.tensor(x, requires_grad=True), torch.ones(1, 1, 2, 2,
                                        dtype=torch.float64))
    assert lt_out.grad_fn.name() == th_out.grad_fn.name() == "ConvolutionBackward0"


def test_empty_batch_equals_torch():
    lt_f, th_f = conv_pair(2, True)
    check_against_torch(lt_f, th_f, random((0, 3, 5, 5)), random((2, 3, 3, 3), seed=1),
                        random(2, seed=2), **TOL[np.float64])


def test_zero_input_channels_give_the_bias_in_every_output_channel():
    # torch 2.13 returns (2, 0, 3, 3) here, dropping the 6 output channels the weight asks
    # for; the sum over no channels is 0, so learntorch returns the bias, shaped as asked
    out = F.conv2d(learntorch.zeros(2, 0, 5, 5), learntorch.zeros(6, 0, 3, 3),
                   learntorch.arange(6.0))
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(np.arange(6.0)[:, None, None],
                                                               (2, 6, 3, 3)))


def test_integer_convolution_equals_torch():
    torch = require_torch()
    rng = np.random.default_rng(0)
    x, w = rng.integers(-5, 5, (2, 3, 6, 6)), rng.integers(-3, 3, (4, 3, 3, 3))
    out = F.conv2d(learntorch.tensor(x), learntorch.tensor(w), stride=2, padding=1)
    expected = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), stride=2, padding=1)
    assert out.dtype == learntorch.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


# ---------------------------------------------------------------- gradients without torch
@pytest.mark.parametrize("kwargs", [dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
                                    dict(padding="same", groups=2)])
def test_conv2d_gradients_equal_finite_differences(kwargs):
    x = learntorch.tensor(random((2, 2, 5, 4)), requires_grad=True)
    w = learntorch.tensor(random((2, 2 // kwargs.get("groups", 1), 3, 2), seed=1),
                          requires_grad=True)
    b = learntorch.tensor(random(2, seed=2), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))


def test_conv1d_gradients_equal_finite_differences():
    x = learntorch.tensor(random((2, 2, 7)), requires_grad=True)
    w = learntorch.tensor(random((3, 2, 3), seed=1), requires_grad=True)
    b = learntorch.tensor(random(3, seed=2), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2), (x, w, b))


def test_conv2d_second_derivatives_equal_finite_differences():
    x = learntorch.tensor(random((1, 2, 4, 4)), requires_grad=True)
    w = learntorch.tensor(random((2, 1, 2, 3), seed=1), requires_grad=True)
    b = learntorch.tensor(random(2, seed=2), requires_grad=True)
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2),
                         (x, w, b))


@pytest.mark.parametrize("dims", [1, 2])
def test_double_backward_equals_torch(dims):
    """A gradient penalty: differentiate |dL/dx|^2 + |dL/dw|^2 once more, as torch does."""
    torch = require_torch()
    kwargs = dict(stride=2, padding=1, dilation=2 if dims == 1 else (1, 2), groups=2)
    x, w, b = random((2, 4) + (7,) * dims), random((6, 2) + (3,) * dims, seed=1), random(6, seed=2)
    grads = []
    for lib, f in ((learntorch, F), (torch, torch.nn.functional)):
        conv = f.conv2d if dims == 2 else f.conv1d
        X, W, B = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = conv(X, W, B, **kwargs)
        gx, gw = lib.autograd.grad((y * y).sum(), [X, W], create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        grads.append([as_numpy(t.grad) for t in (X, W, B)])
    for name, ours, theirs in zip("xwb", *grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10, err_msg=f"grad of {name}")


def test_changing_the_input_in_place_after_conv_is_caught_at_backward():
    x = learntorch.tensor(random((1, 1, 4, 4)), requires_grad=True)
    w = learntorch.tensor(random((1, 1, 2, 2)), requires_grad=True)
    h = x * 1
    y = F.conv2d(h, w)
    h.mul_(2)  # the windows forward copied (and dW needs) are stale now
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_gradients_flow_only_where_requested():
    x = learntorch.tensor(random((1, 2, 5, 5)))
    w = learntorch.tensor(random((3, 2, 3, 3), seed=1), requires_grad=True)
    F.conv2d(x, w, learntorch.zeros(3, dtype=learntorch.float64)).sum().backward()
    assert x.grad is None and w.grad is not None and w.grad.shape == w.shape


# ---------------------------------------------------------------- errors, as torch raises them
ERROR_CASES = [
    # (name, input shape, weight shape, bias shape, keywords, text learntorch's message contains)
    ("wrong channels", (2, 3, 28, 28), (8, 1, 3, 3), None, {},
     "Given groups=1, weight of size [8, 1, 3, 3], expected input[2, 3, 28, 28] to have 1 "
     "channels, but got 3 channels instead"),
    ("unbatched wrong channels", (3, 28, 28), (8, 1, 3, 3), None, {},
     "expected input[1, 3, 28, 28] to have 1 channels, but got 3 channels instead"),
    ("groups mismatch", (2, 4, 8, 8), (6, 2, 3, 3), None, dict(groups=3),
     "Given groups=3, weight of size [6, 2, 3, 3], expected input[2, 4, 8, 8] to have 6 "
     "channels, but got 4 channels instead"),
    ("out channels vs groups", (2, 4, 8, 8), (7, 2, 3, 3), None, dict(groups=2),
     "expected weight to be divisible by 2 at dimension 0"),
    ("input rank", (28, 28), (8, 1, 3, 3), None, {},
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [28, 28]"),
    ("input rank 5", (2, 1, 1, 28, 28), (8, 1, 3, 3), None, {},
     "but got input of size: [2, 1, 1, 28, 28]"),
    ("kernel too big", (2, 1, 3, 3), (8, 1, 5, 5), None, {},
     "Calculated padded input size per channel: (3 x 3). Kernel size: (5 x 5). Kernel size "
     "can't be greater than actual input size"),
    ("dilated kernel too big", (2, 4, 2, 2), (6, 4, 3, 3), None, dict(dilation=2),
     "Kernel size: (5 x 5)"),
    ("bias size", (2, 4, 8, 8), (6, 4, 3, 3), (5,), {},
     "expected bias to be 1-dimensional with 6 elements, but got bias of size [5] instead"),
    ("bias rank", (2, 4, 8, 8), (6, 4, 3, 3), (6, 1), {}, "but got bias of size [6, 1]"),
    ("zero stride", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(stride=0),
     "non-positive stride is not supported"),
    ("negative padding", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(padding=-1),
     "negative padding is not supported"),
    ("zero dilation", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(dilation=0),
     "non-positive dilation is not supported"),
    ("zero groups", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(groups=0),
     "non-positive groups is not supported"),
    ("same with stride", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    ("bad padding string", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(padding="SAME"),
     "Invalid padding string: 'SAME'"),
    ("three strides", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(stride=(1, 2, 3)),
     "expected stride to be a single integer value or a list of 2 values to match the "
     "convolution dimensions, but got stride=[1, 2, 3]"),
    ("three paddings", (2, 4, 8, 8), (6, 4, 3, 3), None, dict(padding=(1, 2, 3)),
     "but got padding=[1, 2, 3]"),
]


@pytest.mark.parametrize("name, x_shape, w_shape, b_shape, kwargs, text", ERROR_CASES,
                         ids=[c[0] for c in ERROR_CASES])
def test_bad_arguments_raise_torchs_exception_with_a_message_naming_the_shapes(
        name, x_shape, w_shape, b_shape, kwargs, text):
    arrays = [np.zeros(x_shape, np.float32), np.zeros(w_shape, np.float32)]
    arrays.append(None if b_shape is None else np.zeros(b_shape, np.float32))
    message = both_raise(lambda lib: lib.nn.functional.conv2d(
        *[None if a is None else lib.tensor(a) for a in arrays], **kwargs))
    assert text in message


def test_conv1d_errors_name_conv1d_and_its_shapes():
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
            "[2, 4, 8, 8]")):
        F.conv1d(learntorch.zeros(2, 4, 8, 8), learntorch.zeros(6, 4, 2))
    with pytest.raises(RuntimeError, match=re.escape(
            "Calculated padded input size per channel: (3). Kernel size: (5).")):
        F.conv1d(learntorch.zeros(2, 4, 3), learntorch.zeros(6, 4, 5))
    with pytest.raises(RuntimeError, match=re.escape("a list of 1 values")) as error:
        F.conv1d(learntorch.zeros(2, 4, 5), learntorch.zeros(6, 4, 3), stride=(1, 1))
    assert "stride=[1, 1]" in str(error.value)


def test_a_weight_of_the_wrong_rank_is_a_runtime_error_naming_its_size():
    with pytest.raises(RuntimeError, match=re.escape("[6, 4, 3]")):
        F.conv2d(learntorch.zeros(2, 4, 8, 8), learntorch.zeros(6, 4, 3))


@pytest.mark.parametrize("bad", ["input", "weight", "bias"])
def test_non_tensor_arguments_are_a_type_error_like_torch(bad):
    args = {"input": learntorch.zeros(1, 1, 3, 3), "weight": learntorch.zeros(1, 1, 2, 2),
            "bias": None}
    args[bad] = [1.0]
    with pytest.raises(TypeError, match=bad):
        F.conv2d(**args)


@pytest.mark.parametrize("x_dtype, w_dtype, b_dtype", [("float64", "float32", None),
                                                       ("float32", "float16", None),
                                                       ("float64", "float64", "float32"),
                                                       ("float32", "float32", "float64")])
def test_mixed_dtypes_are_a_runtime_error_naming_both_like_torch(x_dtype, w_dtype, b_dtype):
    def make(lib, shape, dtype):
        return None if dtype is None else lib.zeros(shape, dtype=getattr(lib, dtype))
    message = both_raise(lambda lib: lib.nn.functional.conv2d(
        make(lib, (1, 2, 4, 4), x_dtype), make(lib, (3, 2, 2, 2), w_dtype),
        make(lib, (3,), b_dtype)))
    other = w_dtype if w_dtype != x_dtype else b_dtype
    # the message names both dtypes and how to convert
    assert "should be the same" in message
    assert x_dtype in message and other in message and ".to(" in message


def test_boolean_convolution_is_not_implemented_like_torch():
    with pytest.raises(NotImplementedError, match="Bool"):
        F.conv2d(learntorch.ones(1, 1, 3, 3, dtype=learntorch.bool),
                 learntorch.ones(1, 1, 2, 2, dtype=learntorch.bool))
