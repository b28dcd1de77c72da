"""Composite programs under ``autocast("cpu")`` -- functionals that learntorch builds from several
Functions, layers fed by a bfloat16 activation, losses after a bfloat16 layer -- give every
output and every gradient torch 2.13's dtype, and values within bfloat16's rounding."""
import numpy as np
import pytest

import learntorch
from tests.oracle import require_torch, torch


def _inputs(lib):
    rs = np.random.RandomState(0)

    def make(*shape):
        return lib.tensor(rs.randn(*shape).astype(np.float32), requires_grad=True)
    return dict(x=make(4, 6), w=make(3, 6), b=make(3), img=make(2, 4, 5, 5), k=make(4, 4, 3, 3),
                batch=make(2, 4, 6), m=make(4, 3), g=make(6), h=make(6), c=make(4),
                target=lib.tensor([0, 2, 1, 0]))


def _F(lib):
    return lib.nn.functional


PROGRAMS = {
    # lower precision: bfloat16 out, whatever the layer's arguments
    "linear_no_bias": lambda lib, t: _F(lib).linear(t["x"], t["w"]),
    "conv2d_bias": lambda lib, t: _F(lib).conv2d(t["img"], t["k"], t["c"], padding=1),
    "conv1d": lambda lib, t: _F(lib).conv1d(t["batch"], t["w"][:, :4].reshape(3, 4, 1)),
    "matmul_method": lambda lib, t: t["x"].matmul(t["w"].T),
    "bmm": lambda lib, t: lib.bmm(t["batch"], t["batch"].transpose(1, 2)),
    "tensordot": lambda lib, t: lib.tensordot(t["x"], t["w"], dims=([1], [1])),
    "addbmm": lambda lib, t: lib.addbmm(t["x"][:, :4], t["batch"], t["batch"].transpose(1, 2)),
    "sdpa": lambda lib, t: _F(lib).scaled_dot_product_attention(t["batch"], t["batch"],
                                                                 t["batch"]),
    "sdpa_float_mask": lambda lib, t: _F(lib).scaled_dot_product_attention(
        t["batch"], t["batch"], t["batch"], attn_mask=t["x"][:, :4]),
    # addmv is on the cuda list only: float32 on the CPU
    "addmv": lambda lib, t: lib.addmv(t["b"], t["w"], t["g"]),
    "mlp": lambda lib, t: _F(lib).linear(_F(lib).relu(_F(lib).linear(t["x"], t["w"], t["b"])),
                                         t["m"]),
    # layers that run in their input's dtype: a bfloat16 activation stays bfloat16, with the
    # module's float32 parameters (torch's CPU kernels take that mix)
    "layer_norm_float32": lambda lib, t: _F(lib).layer_norm(t["x"], (6,), t["g"], t["h"]),
    "layer_norm_after_linear": lambda lib, t: _F(lib).layer_norm(
        _F(lib).linear(t["x"], t["w"]), (3,), t["g"][:3], t["h"][:3]),
    "group_norm_after_conv": lambda lib, t: _F(lib).group_norm(
        _F(lib).conv2d(t["img"], t["k"]), 2, t["c"], t["c"] * 0.5),
    "batch_norm_after_conv": lambda lib, t: _F(lib).batch_norm(
        _F(lib).conv2d(t["img"], t["k"]), None, None, t["c"], t["c"] * 0.5, training=True),
    "softmax_after_linear": lambda lib, t: _F(lib).softmax(_F(lib).linear(t["x"], t["w"]), 1),
    "log_softmax_after_linear": lambda lib, t: _F(lib).log_softmax(
        _F(lib).linear(t["x"], t["w"]), 1),
    "softmax_dtype_float32": lambda lib, t: _F(lib).softmax(
        _F(lib).linear(t["x"], t["w"]), 1, dtype=lib.float32),
    "gelu_after_linear": lambda lib, t: _F(lib).gelu(_F(lib).linear(t["x"], t["w"])),
    "max_pool_after_conv": lambda lib, t: _F(lib).max_pool2d(_F(lib).conv2d(t["img"], t["k"]), 2),
    "adaptive_avg_pool": lambda lib, t: _F(lib).adaptive_avg_pool2d(
        _F(lib).conv2d(t["img"], t["k"]), 1),
    "sum_after_linear": lambda lib, t: _F(lib).linear(t["x"], t["w"]).sum(),
    # losses: float32 from a bfloat16 prediction
    "cross_entropy_after_linear": lambda lib, t: _F(lib).cross_entropy(
        _F(lib).linear(t["x"], t["w"], t["b"]), t["target"]),
    "cross_entropy_label_smoothing": lambda lib, t: _F(lib).cross_entropy(
        _F(lib).linear(t["x"], t["w"]), t["target"], label_smoothing=0.1),
    "cross_entropy_no_reduction": lambda lib, t: _F(lib).cross_entropy(
        _F(lib).linear(t["x"], t["w"]), t["target"], reduction="none"),
    "nll_after_log_softmax": lambda lib, t: _F(lib).nll_loss(
        _F(lib).log_softmax(_F(lib).linear(t["x"], t["w"]), 1), t["target"]),
    "mse_after_linear": lambda lib, t: _F(lib).mse_loss(_F(lib).linear(t["x"], t["w"]), t["m"]),
    "mse_no_reduction": lambda lib, t: _F(lib).mse_loss(
        _F(lib).linear(t["x"], t["w"]), t["m"], reduction="none"),
    "l1_after_linear": lambda lib, t: _F(lib).l1_loss(_F(lib).linear(t["x"], t["w"]), t["m"]),
    "kl_div": lambda lib, t: _F(lib).kl_div(_F(lib).log_softmax(_F(lib).linear(t["x"], t["w"]), 1),
                                            _F(lib).softmax(t["m"], 1), reduction="batchmean"),
    "cosine_similarity": lambda lib, t: _F(lib).cosine_similarity(
        _F(lib).linear(t["x"], t["w"]), t["m"]),
}


def _run(lib, name):
    lib.manual_seed(0)
    t = _inputs(lib)
    with lib.autocast("cpu"):
        out = PROGRAMS[name](lib, t)
    return out, t


def _name(dtype):
    return None if dtype is None else str(dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_output_and_gradient_dtypes_are_torchs(name):
    require_torch()
    seen = []
    for lib in (learntorch, torch):
        out, t = _run(lib, name)
        out.float().sum().backward()
        seen.append((_name(out.dtype), tuple(out.shape),
                     {k: _name(None if v.grad is None else v.grad.dtype) for k, v in t.items()}))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_are_torchs_within_bfloat16_rounding(name):
    """Values agree to a few bfloat16 ulps (2**-8 relative: one ulp is 2**-7 of the leading
    digit at worst); the programs chain at most three rounded steps on unit-scale numbers."""
    require_torch()
    got, want = (_run(lib, name)[0] for lib in (learntorch, torch))
    np.testing.assert_allclose(got.float().detach().numpy(), want.float().detach().numpy(),
                               rtol=2 ** -6, atol=2 ** -6)
