"""The fast tier's layer pieces equal the reference: every ``ARRAY_BACKWARD`` entry of
``_fast/array_backward/nn_layers.py`` against its Function's reference ``backward``, bit for
bit, and every Numba override of the conv and pooling families against the numpy method it
overrides (bit for bit where the operations run in the same order, else within rounding).

Inputs vary as the training step sees them and beyond: float32 and float64, strided
(transposed) inputs and gradients, inf and nan, each window geometry.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as F
from learntorch._fast.array_backward import ARRAY_BACKWARD
from learntorch.autograd import grad_mode
from learntorch.backends import NumbaBackend, NumpyBackend
from learntorch.backends.geometry import Geometry, output_size
from learntorch.nn._functional import conv, fold, normalization, pooling, sparse


def kernel_backend():
    """The Numba backend with every layer kernel serving arrays of any size."""
    backend = NumbaBackend(min_size=0)
    backend.layer_min_sizes = dict.fromkeys(backend.layer_min_sizes, 0)
    return backend


BACKENDS = {"numpy": NumpyBackend, "numba": NumbaBackend, "numba_kernels": kernel_backend}


@st.composite
def arrays(draw, shape, dtype=None, special=True):
    """A random array of ``shape``: float32 or float64, maybe strided, maybe with inf/nan."""
    dtype = dtype or draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2 ** 16))
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    if special and a.size and draw(st.booleans()):
        flat = a.reshape(-1)
        flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from([np.inf, -np.inf, np.nan]))
    if a.ndim >= 2 and draw(st.booleans()):  # the same values, transposed memory
        a = np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    return a


def backward_both_ways(make, grad):
    """(reference backward's arrays, ARRAY_BACKWARD entry's arrays) for the op ``make()``
    builds, with ``grad`` the gradient of its (first) output: as the engine calls them, grad
    mode off."""
    out = make()
    node = (out[0] if isinstance(out, tuple) else out).grad_fn
    entry = ARRAY_BACKWARD[node._function]
    n_outputs = len(node._output_meta)
    with grad_mode.no_grad(), np.errstate(all="ignore"):  # (inf and nan make nan quietly)
        reference = node._function.backward(node, learntorch.tensor(grad),
                                            *([None] * (n_outputs - 1)))
        fast = entry(node, grad, *([None] * (n_outputs - 1)))
    reference = reference if isinstance(reference, tuple) else (reference,)
    fast = fast if isinstance(fast, tuple) else (fast,)
    return ([None if r is None else r._data for r in reference], list(fast))


def assert_same_bits(reference, fast):
    assert len(reference) == len(fast)
    for i, (r, f) in enumerate(zip(reference, fast)):
        assert (r is None) == (f is None), f"gradient {i}: None in one tier only"
        if r is not None:
            assert r.shape == f.shape and r.dtype == f.dtype, i
            np.testing.assert_array_equal(r, f, err_msg=f"gradient {i}", strict=True)


def leaf(a):
    return learntorch.tensor(a, requires_grad=True)


# ---------------------------------------------------------------- ARRAY_BACKWARD entries
@settings(deadline=None)
@given(st.data(), st.sampled_from(sorted(BACKENDS)), st.sampled_from([1, 2]),
       st.sampled_from([1, 2]), st.integers(0, 1), st.booleans())
def test_convolution_entries_equal_the_reference_backward(data, backend, dims, groups, pad,
                                                          transposed):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    x = data.draw(arrays((2, 2 * groups) + (5,) * dims, dtype))
    w = data.draw(arrays((2 * groups, 2) + (3,) * dims, dtype, special=False))
    b = data.draw(arrays((2 * groups,), dtype, special=False))
    with learntorch.backends.use(BACKENDS[backend]()):
        if transposed:
            f = F.conv_transpose2d if dims == 2 else F.conv_transpose1d
            make = lambda: f(leaf(x), leaf(w), leaf(b), stride=2, padding=pad,  # noqa: E731
                             groups=groups)
        else:
            f = F.conv2d if dims == 2 else F.conv1d
            make = lambda: f(leaf(x), leaf(w), leaf(b), stride=2, padding=pad,  # noqa: E731
                             groups=groups)
        out_shape = tuple(make().shape)
        assert_same_bits(*backward_both_ways(make, data.draw(arrays(out_shape, dtype))))


@settings(deadline=None)
@given(st.data(), st.sampled_from(sorted(BACKENDS)),
       st.sampled_from(["max", "avg", "adaptive_avg", "adaptive_max"]))
def test_pooling_entries_equal_the_reference_backward(data, backend, kind):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    x = data.draw(arrays((2, 3, 7, 6), dtype))
    calls = {"max": lambda t: F.max_pool2d(t, 3, stride=2, padding=1, return_indices=True),
             "avg": lambda t: F.avg_pool2d(t, 3, stride=2, padding=1, ceil_mode=True,
                                           count_include_pad=False),
             "adaptive_avg": lambda t: F.adaptive_avg_pool2d(t, (3, 4)),
             "adaptive_max": lambda t: F.adaptive_max_pool2d(t, (4, 3), return_indices=True)}
    with learntorch.backends.use(BACKENDS[backend]()):
        make = lambda: calls[kind](leaf(x))  # noqa: E731
        out = make()
        shape = tuple((out[0] if isinstance(out, tuple) else out).shape)
        assert_same_bits(*backward_both_ways(make, data.draw(arrays(shape, dtype))))


@settings(deadline=None)
@given(st.data(), st.sampled_from(sorted(BACKENDS)), st.sampled_from(["batch", "batch_eval",
                                                                      "layer", "group"]),
       st.booleans(), st.booleans())
def test_normalization_entries_equal_the_reference_backward(data, backend, kind, affine,
                                                            half):
    dtype = np.float16 if half else data.draw(st.sampled_from([np.float32, np.float64]))
    x = data.draw(arrays((4, 6, 3, 2), dtype))
    w = data.draw(arrays((6,), np.float32 if half else dtype, special=False)) if affine else None
    b = data.draw(arrays((6,), np.float32 if half else dtype, special=False)) if affine else None
    params = lambda: (None if w is None else leaf(w), None if b is None else leaf(b))  # noqa
    m, v = np.zeros(6, np.float32 if half else dtype), np.ones(6, np.float32 if half else dtype)
    calls = {
        "batch": lambda: F.batch_norm(leaf(x), None, None, *params(), training=True),
        "batch_eval": lambda: F.batch_norm(leaf(x), learntorch.tensor(m), learntorch.tensor(v),
                                           *params()),
        "layer": lambda: F.layer_norm(leaf(x), (3, 2), *(
            None if p is None else p.reshape(3, 2) for p in params())),
        "group": lambda: F.group_norm(leaf(x), 3, *params()),
    }
    with learntorch.backends.use(BACKENDS[backend]()):
        assert_same_bits(*backward_both_ways(calls[kind], data.draw(arrays(x.shape, dtype))))


@settings(deadline=None)
@given(st.data(), st.sampled_from(sorted(BACKENDS)), st.booleans())
def test_unfold_fold_and_embedding_entries_equal_the_reference_backward(data, backend, unfold):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    with learntorch.backends.use(BACKENDS[backend]()):
        if unfold:
            x = data.draw(arrays((2, 3, 5, 4), dtype))
            make = lambda: F.unfold(leaf(x), (2, 3), padding=1, stride=(2, 1))  # noqa: E731
        else:
            c = data.draw(arrays((2, 3 * 4, 8), dtype))     # 2 x 4 windows of 2 x 2
            make = lambda: F.fold(leaf(c), (4, 5), 2, stride=(2, 1))  # noqa: E731
        assert_same_bits(*backward_both_ways(make, data.draw(arrays(tuple(make().shape),
                                                                    dtype))))
        table = data.draw(arrays((7, 3), dtype, special=False))
        idx = learntorch.tensor(np.random.default_rng(0).integers(0, 7, (4, 5)))
        make = lambda: F.embedding(idx, leaf(table), padding_idx=2,  # noqa: E731
                                   scale_grad_by_freq=data.draw(st.booleans()))
        assert_same_bits(*backward_both_ways(make, data.draw(arrays((4, 5, 3), dtype))))


def test_every_layer_entry_is_tested_here():
    tested = {conv.Convolution, conv.ConvolutionTranspose, pooling.MaxPool2d, pooling.AvgPool2d,
              pooling.AdaptiveAvgPool2d, pooling.AdaptiveMaxPool2d, normalization.BatchNorm,
              normalization.LayerNorm, normalization.GroupNorm, fold.Im2col, fold.Col2im,
              sparse.Embedding}
    layer_entries = {cls for cls, fn in ARRAY_BACKWARD.items()
                     if fn.__module__.endswith("array_backward.nn_layers")}
    assert layer_entries == tested


# ---------------------------------------------------------------- Numba overrides
@st.composite
def geometries(draw, pooling=False):
    """A window geometry; for pooling, with torch's rule that every window holds a pixel of
    the image (padding at most half the kernel), which the max-pool kernels rely on."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = tuple(draw(st.integers(0, k // 2 if pooling else 1)) for k in kernel)
    size = tuple(d * (k - 1) + 1 + draw(st.integers(0, 4)) for k, d in zip(kernel, dilation))
    out = tuple(output_size(n, k, s, d, p, p)
                for n, k, s, d, p in zip(size, kernel, stride, dilation, pad))
    return Geometry(size, kernel, stride, dilation, pad, out)


@settings(deadline=None)
@given(st.data(), geometries(), st.sampled_from([1, 2]))
def test_numba_conv_methods_equal_the_numpy_family(data, g, groups):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    x = data.draw(arrays((2, 2 * groups) + g.size, dtype, special=False))
    w = data.draw(arrays((3 * groups, 2) + g.kernel, dtype, special=False))
    b = data.draw(arrays((3 * groups,), dtype, special=False))
    grad = data.draw(arrays((2, 3 * groups) + g.out, dtype, special=False))
    ours, reference = kernel_backend(), NumpyBackend()
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    # the products run in another layout (one per group, not one per image): within rounding
    for method, args in (("conv2d", (x, w, b, g, groups)),
                         ("conv2d_backward_weight", (grad, x, g, groups)),
                         ("conv2d_backward_input", (grad, w, g, groups))):
        got, want = getattr(ours, method)(*args), getattr(reference, method)(*args)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, **tol, err_msg=method)
    cols = data.draw(arrays((2, 2) + g.kernel + g.out, dtype))
    np.testing.assert_array_equal(ours.col2im(cols, g), reference.col2im(cols, g),
                                  strict=True)  # the same additions, in the same order


@settings(deadline=None)
@given(st.data(), geometries(pooling=True))
def test_numba_max_pool_methods_equal_the_numpy_family_bit_for_bit(data, g):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    x = data.draw(arrays((2, 3) + g.size, dtype))
    ours, reference = kernel_backend(), NumpyBackend()
    (values, indices), (want_values, want_indices) = ours.max_pool2d(x, g), \
        reference.max_pool2d(x, g)
    np.testing.assert_array_equal(values, want_values, strict=True)
    np.testing.assert_array_equal(indices, want_indices, strict=True)
    grad = data.draw(arrays(values.shape, dtype))
    got, want = (b.max_pool2d_backward(grad, indices, g) for b in (ours, reference))
    if g.overlapping:  # a pixel that won several windows: numpy sums them in float64 first
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:              # each pixel receives one gradient at most: nothing to round
        np.testing.assert_array_equal(got, want, strict=True)


@pytest.mark.parametrize("backend", [NumpyBackend, NumbaBackend])
def test_small_and_non_float_inputs_take_the_numpy_reference(backend, monkeypatch):
    # the Numba overrides send what their kernels do not serve to the numpy method
    from learntorch.backends.numba_cpu import loader
    loaded = []
    monkeypatch.setattr(loader, "_loaded", {})
    real = loader.importlib.import_module
    monkeypatch.setattr(loader.importlib, "import_module",
                        lambda name: loaded.append(name) or real(name))
    b = backend()
    g = Geometry((4, 4), (2, 2), (2, 2), (1, 1), (0, 0), (2, 2))
    b.max_pool2d(np.ones((1, 1, 4, 4), np.float32), g)
    b.col2im(np.ones((1, 1, 2, 2, 2, 2), np.float64), g)
    b.max_pool2d(np.ones((64, 8, 4, 4), np.int64), g)
    assert loaded == []
