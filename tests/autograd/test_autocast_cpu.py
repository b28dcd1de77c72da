"""``autocast("cpu")``: the dtype of every output equals torch 2.13's for the same program
(torch's CPU op lists: matmul/linear/conv in bfloat16, losses and prod in float32, cat/stack
promoted, everything else in its inputs' dtype); gradients come back in each leaf's dtype;
regions nest, switch off, decorate, and leave nothing behind."""
import warnings

import numpy as np
import pytest

import learntorch
from learntorch.autograd import function as _function
from tests.oracle import require_torch, torch


def _inputs(lib, requires_grad=False):
    """The same tensors in both libraries: float32, bfloat16, float16, float64, int64."""
    rs = np.random.RandomState(0)
    make = lambda *shape: lib.tensor(rs.randn(*shape).astype(np.float32))  # noqa: E731
    x, w, b = make(4, 6), make(3, 6), make(3)
    v, img, k = make(6), make(2, 3, 5, 5), make(4, 3, 3, 3)
    if requires_grad:
        for t in (x, w, b, img, k):
            t.requires_grad_(True)
    return dict(x=x, w=w, b=b, v=v, img=img, k=k, xb=make(4, 6).bfloat16(),
                xh=make(4, 6).half(), xd=make(4, 6).double(), xi=lib.arange(4),
                batch=make(2, 4, 6), target=lib.tensor([0, 2, 1, 0]), prob=make(4, 3).sigmoid())


def F(lib):
    return lib.nn.functional


PROGRAMS = {
    # lower_precision_fp on the CPU
    "linear": lambda lib, t: F(lib).linear(t["x"], t["w"], t["b"]),
    "linear_bfloat16_input": lambda lib, t: F(lib).linear(t["xb"], t["w"], t["b"]),
    "linear_float64_not_eligible": lambda lib, t: F(lib).linear(t["xd"], t["w"].double()),
    "matmul": lambda lib, t: t["x"] @ t["w"].T,
    "matmul_mixed": lambda lib, t: t["xb"] @ t["w"].T,
    "matmul_vector_vector": lambda lib, t: t["v"] @ t["v"],
    "matmul_matrix_vector": lambda lib, t: t["x"] @ t["v"],
    "matmul_batched": lambda lib, t: t["batch"] @ t["w"].T,
    # torch's einsum is made of bmm, which is on the list
    "einsum": lambda lib, t: lib.einsum("ij,kj->ik", t["x"], t["w"]),
    "mm": lambda lib, t: lib.mm(t["x"], t["w"].T),
    "mm_mixed": lambda lib, t: lib.mm(t["xh"], t["w"].T),
    "bmm": lambda lib, t: lib.bmm(t["batch"], t["batch"].transpose(1, 2)),
    "conv2d": lambda lib, t: F(lib).conv2d(t["img"], t["k"]),
    "conv_transpose2d": lambda lib, t: F(lib).conv_transpose2d(t["img"], t["k"].transpose(0, 1)),
    "prelu": lambda lib, t: F(lib).prelu(t["x"], lib.tensor([0.25])),
    "linear_module": lambda lib, t: lib.nn.Linear(6, 3)(t["x"]),
    # not on the CPU lists: run as the inputs are
    "dot": lambda lib, t: lib.dot(t["v"], t["v"]),
    "softmax": lambda lib, t: lib.softmax(t["x"] @ t["w"].T, 1),
    "log_softmax_float32": lambda lib, t: F(lib).log_softmax(t["x"], 1),
    "sum": lambda lib, t: (t["x"] @ t["w"].T).sum(),
    "mean": lambda lib, t: (t["x"] @ t["w"].T).mean(),
    "exp": lambda lib, t: lib.exp(t["xb"]),
    "relu": lambda lib, t: lib.relu(t["x"] @ t["w"].T),
    "add_mixed": lambda lib, t: t["xb"] + t["x"],
    "cumsum": lambda lib, t: t["xb"].cumsum(0),
    "layer_norm": lambda lib, t: F(lib).layer_norm(t["xb"], (6,)),
    # fp32 on the CPU
    "prod": lambda lib, t: t["xb"].prod(),
    "prod_dim": lambda lib, t: t["xb"].prod(1),
    "mse_loss": lambda lib, t: F(lib).mse_loss(t["x"] @ t["w"].T, t["x"][:, :3]),
    "mse_loss_bfloat16": lambda lib, t: F(lib).mse_loss(t["xb"], t["xb"]),
    "cross_entropy": lambda lib, t: F(lib).cross_entropy(t["x"] @ t["w"].T, t["target"]),
    "cross_entropy_probabilities": lambda lib, t: F(lib).cross_entropy(
        t["xb"][:, :3], t["prob"]),
    "nll_loss": lambda lib, t: F(lib).nll_loss(t["xb"][:, :3], t["target"]),
    "smooth_l1_loss": lambda lib, t: F(lib).smooth_l1_loss(t["xb"], t["x"]),
    "huber_loss": lambda lib, t: F(lib).huber_loss(t["xb"], t["xb"]),
    "binary_cross_entropy": lambda lib, t: F(lib).binary_cross_entropy(
        t["prob"].bfloat16(), t["prob"]),
    "bce_with_logits": lambda lib, t: F(lib).binary_cross_entropy_with_logits(
        t["x"], t["prob"].new_ones(4, 6)),
    "cdist": lambda lib, t: lib.cdist(t["xb"], t["xb"]),
    "trace": lambda lib, t: lib.trace(t["xb"]),
    # promote on the CPU
    "cat_bfloat16_float32": lambda lib, t: lib.cat([t["xb"], t["x"]]),
    "cat_bfloat16": lambda lib, t: lib.cat([t["xb"], t["xb"]]),
    "cat_float64": lambda lib, t: lib.cat([t["x"], t["xd"]]),
    "stack": lambda lib, t: lib.stack([t["xb"], t["x"]]),
    "cat_integers": lambda lib, t: lib.cat([t["xi"], t["xi"]]),
}


def _run(lib, program, requires_grad=False, **autocast_kwargs):
    lib.manual_seed(0)
    t = _inputs(lib, requires_grad)
    with lib.autocast("cpu", **autocast_kwargs):
        return program(lib, t), t


def _name(dtype):
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_output_dtype_under_cpu_autocast_is_torchs(name):
    require_torch()
    got, _ = _run(learntorch, PROGRAMS[name])
    want, _ = _run(torch, PROGRAMS[name])
    assert _name(got.dtype) == _name(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize("name", ["linear", "matmul", "mm", "conv2d"])
def test_output_dtype_with_float16_as_the_cpu_autocast_dtype_is_torchs(name):
    require_torch()
    got, _ = _run(learntorch, PROGRAMS[name], dtype=learntorch.float16)
    want, _ = _run(torch, PROGRAMS[name], dtype=torch.float16)
    assert _name(got.dtype) == _name(want.dtype) == "float16"


def test_promoting_float16_with_bfloat16_is_torchs_error():
    require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in "
                                               "at::autocast::prioritize"):
            _run(lib, lambda lib, t: lib.cat([t["xh"], t["xb"]]))


@pytest.mark.parametrize("name", ["linear", "matmul", "mm", "mse_loss", "cross_entropy"])
def test_values_under_autocast_equal_torchs_within_bfloat16_rounding(name):
    require_torch()
    got, _ = _run(learntorch, PROGRAMS[name])
    want, _ = _run(torch, PROGRAMS[name])
    np.testing.assert_allclose(got.float().detach().numpy(), want.float().detach().numpy(),
                               rtol=2 ** -7, atol=2 ** -7)


@pytest.mark.parametrize("name", ["linear", "linear_bfloat16_input", "matmul", "mse_loss",
                                  "cross_entropy", "conv2d", "bce_with_logits"])
def test_gradients_flow_back_in_each_leafs_dtype(name):
    require_torch()
    results = []
    for lib in (learntorch, torch):
        out, t = _run(lib, PROGRAMS[name], requires_grad=True)
        out.float().sum().backward()
        results.append({k: (None if v.grad is None else _name(v.grad.dtype))
                        for k, v in t.items() if v.requires_grad})
    assert any(d is not None for d in results[0].values())
    assert results[0] == results[1]
    assert all(d in (None, "float32") for d in results[0].values())


def test_a_training_step_under_autocast_gives_float32_gradients_close_to_torchs():
    require_torch()
    grads = []
    for lib in (learntorch, torch):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        with torch.no_grad() if lib is torch else learntorch.no_grad():
            for i, p in enumerate(model.parameters()):  # the same weights in both
                p.copy_(lib.tensor(np.random.RandomState(i).randn(*p.shape).astype(np.float32)))
        t = _inputs(lib)
        with lib.autocast("cpu"):
            out = model(t["x"])
            loss = nn.functional.cross_entropy(out, t["target"])
        assert _name(out.dtype) == "bfloat16" and _name(loss.dtype) == "float32"
        loss.backward()
        grads.append([p.grad for p in model.parameters()])
    for g, w in zip(*grads):
        assert g.dtype is learntorch.float32 and w.dtype is torch.float32
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=0.05, atol=0.02)


# ---------------------------------------------------------------- the region's rules
def test_nested_regions_set_and_restore_the_dtype_and_enabled_flag_as_torch():
    require_torch()
    seen = []
    for lib in (learntorch, torch):
        a = lib.ones(2, 2)
        trace = []
        with lib.autocast("cpu"):
            trace.append(_name((a @ a).dtype))
            with lib.autocast("cpu", dtype=lib.float16):
                trace.append(_name((a @ a).dtype))
                with lib.autocast("cpu"):  # no dtype: the enclosing region's
                    trace.append(_name((a @ a).dtype))
                with lib.autocast("cpu", enabled=False):
                    trace.append(_name((a @ a).dtype))
                    trace.append(lib.is_autocast_enabled("cpu"))
                trace.append(_name(lib.get_autocast_dtype("cpu")))
            trace.append(_name((a @ a).dtype))
            trace.append(lib.is_autocast_enabled("cpu"))
        trace.append(_name((a @ a).dtype))
        trace.append(lib.is_autocast_enabled("cpu"))
        trace.append(_name(lib.get_autocast_dtype("cpu")))
        seen.append(trace)
    assert seen[0] == seen[1]
    assert seen[0][:4] == ["bfloat16", "float16", "float16", "float32"]


def test_autocast_as_a_decorator_runs_the_function_in_a_region():
    @learntorch.autocast("cpu")
    def product(a, b):
        """a @ b"""
        assert learntorch.is_autocast_enabled("cpu")
        return a @ b

    assert product(learntorch.ones(2, 3), learntorch.ones(3, 2)).dtype is learntorch.bfloat16
    assert product.__doc__ == "a @ b" and not learntorch.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="requires a callable"):
        learntorch.autocast("cpu")(3)


def test_amp_autocast_is_the_same_context_manager():
    assert learntorch.amp.autocast is learntorch.autocast
    with learntorch.amp.autocast(device_type="cpu", dtype=learntorch.bfloat16):
        assert (learntorch.ones(2, 2) @ learntorch.ones(2, 2)).dtype is learntorch.bfloat16


def test_leaving_the_region_takes_the_hook_off_even_after_an_error():
    """The region's hook in ``Function.apply`` is on inside, off after, whatever happened
    inside; ``apply`` itself is never replaced (entering costs no class change)."""
    apply = _function.Function.__dict__["apply"]
    assert _function._autocast_hook is None
    with pytest.raises(ValueError):
        with learntorch.autocast("cpu"):
            assert _function._autocast_hook is not None
            raise ValueError("inside")
    assert _function._autocast_hook is None
    assert _function.Function.__dict__["apply"] is apply
    assert not learntorch.is_autocast_enabled("cpu")
    assert (learntorch.ones(2, 2) @ learntorch.ones(2, 2)).dtype is learntorch.float32


def test_unsupported_dtype_warns_and_disables_as_torch():
    require_torch()
    for lib in (learntorch, torch):
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                             "supported. Disabling autocast."):
            region = lib.autocast("cpu", dtype=lib.float32)
        with region:
            assert not lib.is_autocast_enabled("cpu")


def test_a_device_type_that_is_not_a_string_is_a_value_error():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        learntorch.autocast(learntorch.device("cpu"))


def test_cuda_autocast_without_cuda_warns_and_disables_as_torch():
    require_torch()
    if learntorch.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a cuda device is present: this tests the machine without one")
    for lib in (learntorch, torch):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with lib.autocast("cuda"):
                assert not lib.is_autocast_enabled("cuda")


def test_default_dtypes_and_state_functions():
    assert learntorch.get_autocast_dtype("cpu") is learntorch.bfloat16
    assert learntorch.get_autocast_dtype("cuda") is learntorch.float16
    assert not learntorch.is_autocast_enabled() and learntorch.is_autocast_cache_enabled()
    assert learntorch.amp.is_autocast_available("cpu")
    assert not learntorch.amp.is_autocast_available("tpu")


def test_a_weight_is_cast_once_per_region_when_the_cache_is_on():
    w = learntorch.ones(3, 3, requires_grad=True)
    x = learntorch.ones(2, 3)
    for cache_enabled, distinct in ((True, 1), (False, 3)):
        with learntorch.autocast("cpu", cache_enabled=cache_enabled):
            outs = [learntorch.nn.functional.linear(x, w) for _ in range(3)]
        casts = [out.grad_fn.next_functions[1][0] for out in outs]  # the weight's cast node
        assert len({id(c) for c in casts}) == distinct
        assert all(c.name() == "ToCopyBackward0" for c in casts)


def test_the_cast_cache_is_emptied_when_the_outermost_region_ends():
    from learntorch.amp.autocast_mode import _State
    w = learntorch.ones(3, 3, requires_grad=True)
    with learntorch.autocast("cpu"):
        with learntorch.autocast("cpu"):
            learntorch.nn.functional.linear(learntorch.ones(2, 3), w)
        assert _State.cache  # an inner region's end keeps it
    assert not _State.cache


def test_custom_functions_are_not_autocast():
    class Square(learntorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g

    with learntorch.autocast("cpu"):
        assert Square.apply(learntorch.ones(2)).dtype is learntorch.float32


def test_autocast_runs_in_the_reference_tier_too():
    from learntorch import tiers
    with tiers.use("reference"):
        with learntorch.autocast("cpu"):
            out = learntorch.nn.functional.linear(learntorch.ones(2, 3), learntorch.ones(4, 3))
        assert out.dtype is learntorch.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with learntorch.autocast("cpu"):
            pass
