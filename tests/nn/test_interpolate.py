"""F.interpolate and nn.Upsample against torch: nearest, nearest-exact, linear, bilinear,
trilinear and area, by size or scale factor, with and without align_corners; gradients,
second derivatives, node names and torch's errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from oracle import both_raise, check_against_torch, require_torch
from second_order import check_second_order_against_torch
from test_layers_oracle import strided

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def random(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pair(**kwargs):
    torch = require_torch()
    return (lambda x: F.interpolate(x, **kwargs),
            lambda x: torch.nn.functional.interpolate(x, **kwargs))


CASES = [
    ((2, 3, 5, 4), dict(scale_factor=2)),
    ((2, 3, 5, 4), dict(size=(7, 3))),
    ((2, 3, 5, 4), dict(scale_factor=(1.5, 0.5))),
    ((2, 3, 6), dict(size=13)),
    ((1, 2, 3, 4, 2), dict(scale_factor=2)),
    ((2, 3, 5, 4), dict(scale_factor=2, mode="nearest-exact")),
    ((2, 3, 5, 4), dict(size=(3, 7), mode="nearest-exact")),
    ((2, 3, 5, 4), dict(size=(7, 9), mode="bilinear")),
    ((2, 3, 5, 4), dict(size=(7, 9), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 4), dict(scale_factor=(1.7, 2.5), mode="bilinear")),
    ((2, 3, 5, 4), dict(scale_factor=0.6, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 8, 8), dict(size=(3, 5), mode="bilinear")),                       # shrinking
    ((2, 3, 5, 4), dict(size=(5, 4), mode="bilinear")),                       # the identity
    ((2, 3, 6), dict(size=11, mode="linear", align_corners=True)),
    ((2, 3, 6), dict(scale_factor=1.5, mode="linear")),
    ((1, 2, 3, 4, 2), dict(size=(4, 3, 5), mode="trilinear")),
    ((2, 3, 7, 6), dict(size=(3, 4), mode="area")),
    ((2, 3, 9), dict(scale_factor=0.5, mode="area")),
]


@pytest.mark.parametrize("shape, kwargs", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate_values_and_gradient_equal_torch(shape, kwargs, dtype):
    check_against_torch(*pair(**kwargs), random(shape, dtype), **TOL[dtype])


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 9), st.integers(1, 9),
       st.sampled_from(["nearest", "nearest-exact", "bilinear", "bilinear-aligned"]),
       st.sampled_from(["contiguous", "transposed"]))
def test_interpolate_equals_torch_for_any_sizes(h, w, out_h, out_w, mode, layout):
    kwargs = dict(size=(out_h, out_w), mode=mode.split("-aligned")[0])
    if mode.endswith("aligned"):
        kwargs["align_corners"] = True
    check_against_torch(*pair(**kwargs), strided(random((2, 2, h, w)), layout), **TOL[np.float64])


@given(st.integers(1, 6), st.floats(0.3, 3.0), st.sampled_from(["nearest", "bilinear"]),
       st.booleans())
def test_interpolate_by_scale_factor_equals_torch(n, factor, mode, recompute):
    kwargs = dict(scale_factor=factor, mode=mode, recompute_scale_factor=recompute)
    if int(n * factor) < 1:
        return  # torch refuses an empty output (tested below)
    check_against_torch(*pair(**kwargs), random((1, 2, n, n + 1)), **TOL[np.float64])


@pytest.mark.parametrize("kwargs", [dict(scale_factor=(2, 1.5)),
                                    dict(size=(7, 6), mode="bilinear"),
                                    dict(size=(3, 7), mode="bilinear", align_corners=True)])
def test_second_derivatives_equal_torch(kwargs):
    ours, theirs = pair(**kwargs)
    check_second_order_against_torch(lambda x: ours(x * x), lambda x: theirs(x * x),
                                     random((2, 2, 4, 5)))


def test_node_names_are_torchs():
    x = learntorch.randn(1, 2, 4, 4, requires_grad=True)
    x3 = learntorch.randn(1, 2, 4, requires_grad=True)
    assert F.interpolate(x, scale_factor=2).grad_fn.name() == "UpsampleNearest2DBackward0"
    assert F.interpolate(x3, size=5).grad_fn.name() == "UpsampleNearest1DBackward0"
    y = F.interpolate(x, size=5, mode="bilinear")
    assert y.grad_fn.name() == "UpsampleBilinear2DBackward0"
    gx, = learntorch.autograd.grad((y * y).sum(), x, create_graph=True)
    assert "UpsampleBilinear2DBackwardBackward0" in {gx.grad_fn.name()} | {
        n.name() for n, _ in gx.grad_fn.next_functions if n is not None}
    assert F.interpolate(x3, size=5, mode="linear").grad_fn.name() == \
        "UpsampleLinear1DBackward0"


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=3, scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=(3, 4, 5)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), scale_factor=(3, 4, 5)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=4, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=4, mode="linear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5), size=4, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=4, mode="foo"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(5, 5), size=4),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=3,
                                              recompute_scale_factor=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5, dtype=lib.int64), size=3),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), size=0),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 5, 5), scale_factor=0.1),
])
def test_bad_arguments_raise_torchs_exception(call):
    assert both_raise(call)


def test_upsample_modules_print_keep_attributes_and_compute_like_torch():
    torch = require_torch()
    for cls, kwargs in (("Upsample", dict(scale_factor=2)),
                        ("Upsample", dict(size=3, mode="bilinear", align_corners=True)),
                        ("Upsample", dict(size=(3, 4))),
                        ("Upsample", dict(scale_factor=(2, 3), mode="bilinear")),
                        ("UpsamplingNearest2d", dict(scale_factor=2)),
                        ("UpsamplingBilinear2d", dict(size=(5, 6)))):
        ours, theirs = getattr(nn, cls)(**kwargs), getattr(torch.nn, cls)(**kwargs)
        assert repr(ours) == repr(theirs)
        for name in ("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor"):
            assert getattr(ours, name) == getattr(theirs, name), name
        check_against_torch(ours, theirs, random((2, 3, 4, 5)), **TOL[np.float64])
