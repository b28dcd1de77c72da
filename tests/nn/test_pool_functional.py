"""F.max_pool2d, F.avg_pool2d and F.adaptive_avg_pool2d against torch: values, argmax
indices (ties, NaN, -inf, padding), gradients, second derivatives, errors; the Numba
max-pool kernel against the numpy reference."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from learntorch.autograd import gradcheck, gradgradcheck
from learntorch.backends.geometry import Geometry
from learntorch.backends.numba_cpu import pooling_backend
from learntorch.backends.numpy_families.pooling import running_max
from learntorch.nn._functional import pooling
from oracle import as_numpy, assert_close, both_raise, check_against_torch, require_torch
from test_layers_oracle import strided

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def random(shape, dtype=np.float64, seed=0, ties=False):
    x = np.random.default_rng(seed).standard_normal(shape)
    if ties:  # few distinct values: many windows hold their maximum more than once
        x = np.round(x)
    return x.astype(dtype)


def kernel_backend():
    """A Numba backend whose max-pool kernels serve arrays of any size."""
    backend = learntorch.backends.NumbaBackend()
    backend.layer_min_sizes = dict(backend.layer_min_sizes, max_pool2d=0)
    return backend


@pytest.fixture(params=["numpy", "kernel"])
def max_pool_path(request):
    """Run a max-pool test on the numpy reference and on the Numba kernel (forced for any size)."""
    with learntorch.backends.use(kernel_backend() if request.param == "kernel" else "numpy"):
        yield request.param


def check_max_pool(x, dtype=np.float64, **kwargs):
    """Values, indices and the input gradient of max_pool2d equal torch's on ``x``."""
    torch = require_torch()
    a, b = learntorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(a, return_indices=True, **kwargs)
    t_out, t_idx = torch.nn.functional.max_pool2d(b, return_indices=True, **kwargs)
    assert_close(out, t_out, **TOL[dtype], what="values")
    assert idx.dtype == learntorch.int64
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy(), err_msg="indices")
    g = random(tuple(t_out.shape), dtype, seed=5)
    out.backward(learntorch.tensor(g))
    t_out.backward(torch.tensor(g))
    assert_close(a.grad, b.grad, **TOL[dtype], what="gradient")


# ---------------------------------------------------------------- max pooling
MAX_CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 7, 9), dict(kernel_size=2)),                                  # odd sizes: edge dropped
    ((1, 2, 7, 7), dict(kernel_size=3, stride=1, padding=1)),             # overlapping windows
    ((2, 2, 9, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))),
    ((1, 2, 9, 9), dict(kernel_size=3, stride=2, dilation=2, padding=1)),
    ((2, 1, 7, 8), dict(kernel_size=2, ceil_mode=True)),                  # partial last window
    ((1, 2, 8, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((1, 1, 6, 6), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True)),
    ((3, 7, 6), dict(kernel_size=(2, 3), stride=(1, 2))),                 # unbatched (C, H, W)
    ((2, 2, 5, 5), dict(kernel_size=5)),                                  # one window per plane
]


@pytest.mark.parametrize("shape, kwargs", MAX_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool2d_values_indices_and_gradient_equal_torch(shape, kwargs, dtype, ties,
                                                            max_pool_path):
    check_max_pool(random(shape, dtype, ties=ties), dtype, **kwargs)


def test_ties_send_the_gradient_to_the_first_maximum_in_row_major_order(max_pool_path):
    x = learntorch.tensor([[[[1.0, 1.0], [1.0, 0.0]]]], requires_grad=True)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    out.backward()
    assert idx.item() == 0
    assert x.grad.tolist() == [[[[1.0, 0.0], [0.0, 0.0]]]]


def test_a_nan_in_a_window_wins_and_the_last_nan_takes_the_gradient(max_pool_path):
    nan = float("nan")
    check_max_pool(np.array([[[[nan, 1.0, 5.0, 2.0], [nan, 0.0, 3.0, nan]]]]), kernel_size=2)


def test_padding_never_wins_even_against_minus_infinity(max_pool_path):
    # every window holds only -inf pixels: torch points at the first pixel inside the plane
    check_max_pool(np.full((1, 1, 3, 3), -np.inf), kernel_size=3, stride=2, padding=1,
                   ceil_mode=True)


def test_overlapping_windows_add_up_gradients_at_a_shared_maximum(max_pool_path):
    x = np.zeros((1, 1, 3, 3))
    x[0, 0, 1, 1] = 5.0  # the maximum of all four 2x2 windows
    a = learntorch.tensor(x, requires_grad=True)
    F.max_pool2d(a, 2, stride=1).sum().backward()
    assert a.grad[0, 0, 1, 1].item() == 4.0 and a.grad.sum().item() == 4.0


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_max_pool2d_on_non_contiguous_input_equals_torch(layout, max_pool_path):
    check_max_pool(strided(random((2, 3, 6, 8)), layout), kernel_size=2, stride=(2, 1))


def test_max_pool2d_of_integers_equals_torch():
    torch = require_torch()
    x = np.random.default_rng(0).integers(-9, 0, (2, 2, 5, 5))  # all negative: no 0 sneaks in
    out, idx = F.max_pool2d(learntorch.tensor(x), 3, stride=2, padding=1, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), 3, stride=2, padding=1,
                                                  return_indices=True)
    assert out.dtype == learntorch.int64
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


@st.composite
def pool_geometries(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)  # torch's limit
    size = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 9))
                 for k, d, p in zip(kernel, dilation, padding))
    return dict(shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3))) + size,
                kw=dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
                        ceil_mode=draw(st.booleans())),
                ties=draw(st.booleans()))


@given(pool_geometries())
def test_max_pool2d_equals_torch_on_random_geometries(cfg):
    for backend in ("numpy", kernel_backend()):
        with learntorch.backends.use(backend):
            check_max_pool(random(cfg["shape"], ties=cfg["ties"]), **cfg["kw"])


@given(pool_geometries(), st.sampled_from([np.float32, np.float64]))
def test_the_kernel_gives_exactly_the_numpy_reference(cfg, dtype):
    from learntorch.backends.numba_cpu.loader import kernels
    kw = cfg["kw"]
    planes = random(cfg["shape"], dtype, ties=cfg["ties"]).reshape((-1,) + cfg["shape"][-2:])
    planes[0, 0, 0] = np.nan
    g = pooling._pool_geometry(learntorch.tensor(planes), kw["kernel_size"], kw["stride"],
                               kw["padding"], kw["dilation"], kw["ceil_mode"])
    values, indices = running_max(planes, g)
    out, idx = np.empty_like(values), np.empty_like(indices)
    kernels("pool_kernels").max_pool2d_forward(planes, *g.kernel, *g.stride, *g.pad,
                                                *g.dilation, out, idx)
    np.testing.assert_array_equal(out, values)
    np.testing.assert_array_equal(idx, indices)


@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 9), st.integers(2, 9), st.booleans(),
       st.sampled_from([np.float32, np.float64]))
def test_the_2x2_kernel_gives_exactly_the_numpy_reference(sh, sw, h, w, ties, dtype):
    from learntorch.backends.numba_cpu.loader import kernels
    planes = random((3, h, w), dtype, seed=h * w, ties=ties)
    planes[1, 0, 1] = planes[2, 1, 0] = planes[2, 1, 1] = np.nan
    g = pooling._pool_geometry(learntorch.tensor(planes), (2, 2), (sh, sw), (0, 0), (1, 1), False)
    values, indices = running_max(planes, g)
    out, idx = np.empty_like(values), np.empty_like(indices)
    kernels("pool_kernels").max_pool2d_2x2_forward(planes, sh, sw, out, idx)
    np.testing.assert_array_equal(out, values)
    np.testing.assert_array_equal(idx, indices)


def test_the_kernel_runs_for_large_inputs_on_the_numba_backend(monkeypatch):
    calls = []
    real = pooling_backend.kernels

    def spy(family):
        calls.append(family)
        return real(family)
    monkeypatch.setattr(pooling_backend, "kernels", spy)
    big = learntorch.zeros(2, 4, 32, 32)  # 8192 elements
    with learntorch.backends.use("numba"):
        F.max_pool2d(big, 2)
        F.max_pool2d(learntorch.zeros(1, 1, 4, 4), 2)
        F.max_pool2d(big.double(), 2)
        F.max_pool2d(big.long(), 2)  # integers: numpy
    with learntorch.backends.use("numpy"):
        F.max_pool2d(big, 2)
    assert calls == ["pool_kernels", "pool_kernels"]  # float32 and float64, large only


def test_small_pooling_and_convolution_never_import_numba():
    code = ("import sys, learntorch, learntorch.nn.functional as F\n"
            "x = learntorch.randn(1, 2, 8, 8, requires_grad=True)\n"
            "y = F.max_pool2d(F.conv2d(x, learntorch.randn(3, 2, 3, 3), padding=1), 2)\n"
            "(F.avg_pool2d(y, 2).sum() + F.adaptive_avg_pool2d(y, 1).sum()).backward()\n"
            "print('numba' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False", result.stderr


# ---------------------------------------------------------------- average pooling
AVG_CASES = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 7, 9), dict(kernel_size=3, stride=2)),
    ((1, 2, 7, 7), dict(kernel_size=3, stride=1, padding=1)),
    ((1, 2, 7, 7), dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    ((2, 2, 9, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True)),
    ((1, 1, 5, 5), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True)),
    ((1, 1, 5, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        count_include_pad=False)),
    ((1, 2, 6, 6), dict(kernel_size=2, divisor_override=3)),
    ((3, 7, 6), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0))),  # unbatched
]


@pytest.mark.parametrize("shape, kwargs", AVG_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool2d_values_and_gradient_equal_torch(shape, kwargs, dtype):
    torch = require_torch()
    check_against_torch(lambda x: F.avg_pool2d(x, **kwargs),
                        lambda x: torch.nn.functional.avg_pool2d(x, **kwargs),
                        random(shape, dtype), **TOL[dtype])


@given(pool_geometries(), st.booleans(), st.sampled_from([None, 1, 4]))
def test_avg_pool2d_equals_torch_on_random_geometries(cfg, count_include_pad, divisor):
    torch = require_torch()
    kw = dict(cfg["kw"], count_include_pad=count_include_pad, divisor_override=divisor)
    kw.pop("dilation")  # avg_pool2d has none
    check_against_torch(lambda x: F.avg_pool2d(x, **kw),
                        lambda x: torch.nn.functional.avg_pool2d(x, **kw),
                        random(cfg["shape"]), **TOL[np.float64])


def test_avg_pool2d_of_integers_truncates_toward_zero_like_torch():
    torch = require_torch()
    x = np.random.default_rng(0).integers(-20, 20, (2, 3, 6, 6))
    out = F.avg_pool2d(learntorch.tensor(x), 3, stride=2, padding=1)
    expected = torch.nn.functional.avg_pool2d(torch.tensor(x), 3, stride=2, padding=1)
    assert out.dtype == learntorch.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_avg_pool2d_of_half_precision_equals_torch():
    torch = require_torch()
    x = random((1, 2, 6, 6), np.float16)
    out = F.avg_pool2d(learntorch.tensor(x), 3, stride=1)
    expected = torch.nn.functional.avg_pool2d(torch.tensor(x), 3, stride=1)
    assert out.dtype == learntorch.float16
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- adaptive average pooling
ADAPTIVE_CASES = [((2, 3, 7, 6), (3, 4)), ((2, 3, 7, 6), 1), ((2, 3, 8, 8), 4),
                  ((1, 2, 3, 4), (5, 7)),            # larger than the input: windows overlap
                  ((3, 7, 6), (None, 10)), ((2, 2, 5, 9), (2, None))]


@pytest.mark.parametrize("shape, size", ADAPTIVE_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_avg_pool2d_values_and_gradient_equal_torch(shape, size, dtype):
    torch = require_torch()
    check_against_torch(lambda x: F.adaptive_avg_pool2d(x, size),
                        lambda x: torch.nn.functional.adaptive_avg_pool2d(x, size),
                        random(shape, dtype), **TOL[dtype])


@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9))
def test_adaptive_avg_pool2d_equals_torch_for_any_sizes(h, w, out_h, out_w):
    torch = require_torch()
    check_against_torch(lambda x: F.adaptive_avg_pool2d(x, (out_h, out_w)),
                        lambda x: torch.nn.functional.adaptive_avg_pool2d(x, (out_h, out_w)),
                        strided(random((2, 2, h, w)), "transposed"), **TOL[np.float64])


def test_adaptive_avg_pool2d_to_an_empty_size_gives_an_empty_result_and_a_zero_gradient():
    torch = require_torch()
    x = random((2, 3, 6, 6))
    a = learntorch.tensor(x, requires_grad=True)
    out = F.adaptive_avg_pool2d(a, (0, 3))
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x), (0, 3))
    assert out.shape == tuple(expected.shape) == (2, 3, 0, 3)
    # torch 2.13 refuses this backward; nothing reaches the output, so the gradient is 0
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros_like(x))


# ---------------------------------------------------------------- gradients without torch
def tensor64(shape, seed=0):
    return learntorch.tensor(random(shape, seed=seed), requires_grad=True)


@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
], ids=["max", "avg", "adaptive"])
def test_pooling_gradients_and_second_derivatives_equal_finite_differences(pool):
    x = tensor64((1, 2, 5, 4))
    assert gradcheck(pool, (x,))
    assert gradgradcheck(pool, (x,))


@pytest.mark.parametrize("name, kwargs", [
    ("max_pool2d", dict(kernel_size=3, stride=1, padding=1)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("adaptive_avg_pool2d", dict(output_size=(3, 2))),
])
def test_double_backward_equals_torch(name, kwargs):
    """d/dx of |d(sum(out^3))/dx|^2, through each pooling's backward."""
    torch = require_torch()
    x = random((2, 2, 6, 5))
    grads = []
    for lib, f in ((learntorch, F), (torch, torch.nn.functional)):
        X = lib.tensor(x, requires_grad=True)
        gx, = lib.autograd.grad((getattr(f, name)(X, **kwargs) ** 3).sum(), [X],
                                create_graph=True)
        (gx * gx).sum().backward()
        grads.append(as_numpy(X.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-10)


def test_changing_the_returned_indices_in_place_is_caught_at_backward():
    x = tensor64((1, 1, 4, 4))
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    idx.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_pooling_nodes_are_named_like_torchs():
    x = tensor64((1, 1, 4, 4))
    assert F.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.adaptive_avg_pool2d(x, 2).grad_fn.name() == "AdaptiveAvgPool2DBackward0"


@pytest.mark.parametrize("pool", [lambda x: F.max_pool2d(x, 2), lambda x: F.avg_pool2d(x, 2),
                                  lambda x: F.adaptive_avg_pool2d(x, 2)])
def test_an_empty_batch_gives_an_empty_result_and_gradient(pool):
    x = learntorch.zeros(0, 3, 4, 4, requires_grad=True)
    out = pool(x)
    assert out.shape == (0, 3, 2, 2)
    out.sum().backward()
    assert x.grad.shape == (0, 3, 4, 4)


def test_output_size_formula_equals_torch_for_ceil_mode():
    torch = require_torch()
    for size in range(1, 9):
        for kernel, stride, pad in ((2, 2, 0), (3, 2, 1), (2, 3, 1), (3, 3, 0), (1, 2, 0)):
            for ceil in (False, True):
                if size + 2 * pad < kernel:
                    continue
                g = pooling._pool_geometry(learntorch.zeros(1, size, size), (kernel,) * 2,
                                           (stride,) * 2, (pad,) * 2, (1, 1), ceil)
                t = torch.nn.functional.max_pool2d(torch.zeros(1, size, size), kernel, stride,
                                                   pad, ceil_mode=ceil)
                assert isinstance(g, Geometry) and g.out == tuple(t.shape[1:]), \
                    (size, kernel, stride, pad, ceil)


# ---------------------------------------------------------------- errors, as torch raises them
X = (2, 3, 7, 7)
ERROR_CASES = [
    ("max_pool2d", X, dict(kernel_size=3, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
     "dilation=1"),
    ("max_pool2d", X, dict(kernel_size=3, padding=2, dilation=2),
     "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, "
     "kW = 3, kH = 3"),
    ("max_pool2d", X, dict(kernel_size=2, stride=0), "stride should not be zero"),
    ("max_pool2d", X, dict(kernel_size=0, stride=1),
     "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    ("max_pool2d", X, dict(kernel_size=2, stride=-1),
     "stride should be greater than zero, but got dH: -1 dW: -1"),
    ("max_pool2d", X, dict(kernel_size=3, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    ("max_pool2d", X, dict(kernel_size=3, padding=-1), "pad must be non-negative, but got pad: -1"),
    ("max_pool2d", X, dict(kernel_size=9),
     "Given input size: (3x7x7). Calculated output size: (3x0x0). Output size is too small"),
    ("max_pool2d", X, dict(kernel_size=(2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ("max_pool2d", X, dict(kernel_size=2, stride=(1, 2, 3)),
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    ("max_pool2d", X, dict(kernel_size=2.5), "kernel_size"),
    ("max_pool2d", (7, 7), dict(kernel_size=2),
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    ("max_pool2d", (1, 2, 0, 7), dict(kernel_size=2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[1, 2, 0, 7]"),
    ("avg_pool2d", X, dict(kernel_size=3, padding=2), "pad should be at most half"),
    ("avg_pool2d", X, dict(kernel_size=9), "Output size is too small"),
    ("avg_pool2d", X, dict(kernel_size=2, divisor_override=0), "divisor must be not zero"),
    ("avg_pool2d", X, dict(kernel_size=2, divisor_override=1.5), "divisor_override"),
    ("avg_pool2d", X, dict(kernel_size=(2, 2, 2)),
     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ("avg_pool2d", (1, 2, 3, 7, 7), dict(kernel_size=2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[1, 2, 3, 7, 7]"),
    ("adaptive_avg_pool2d", X, dict(output_size=(2, 3, 4)),
     "adaptive_avg_pool2d: output_size must be 2"),
    ("adaptive_avg_pool2d", X, dict(output_size=-1),
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
     "received {-1, -1}"),
    ("adaptive_avg_pool2d", (7, 7), dict(output_size=2),
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [7, 7]"),
    ("adaptive_avg_pool2d", (1, 2, 0, 7), dict(output_size=2),
     "Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[1, 2, 0, 7] with dimension 2 being empty"),
]


@pytest.mark.parametrize("name, shape, kwargs, text", ERROR_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ERROR_CASES)])
def test_bad_arguments_raise_torchs_exception_and_message(name, shape, kwargs, text):
    assert text in both_raise(lambda lib: getattr(lib.nn.functional, name)(lib.zeros(shape),
                                                                            **kwargs))


@pytest.mark.parametrize("name, dtype, torch_name", [("max_pool2d", "bool", "Bool"),
                                                     ("adaptive_avg_pool2d", "int64", "Long")])
def test_unsupported_dtypes_are_not_implemented_like_torch(name, dtype, torch_name):
    with pytest.raises(NotImplementedError, match=f"'{torch_name}'"):
        getattr(F, name)(learntorch.zeros(1, 1, 4, 4, dtype=getattr(learntorch, dtype)), 2)


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"])
def test_a_non_tensor_input_is_a_type_error(name):
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        getattr(F, name)([[1.0]], 2)
