"""bfloat16 behaves as torch's: promotion, conversions (round to nearest even), printing,
save/load, and the kernels that accumulate in float32 ("opmath") -- compared with torch 2.13
bit for bit where torch's CPU result does not depend on its vector code's order."""
import io

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import learntorch
import learntorch.nn.functional as LF
from oracle import require_torch, torch

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64")


def to_torch(a):
    """A torch tensor with the same bits as numpy array ``a`` (torch.from_numpy refuses bfloat16)."""
    a = np.ascontiguousarray(a)
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def from_torch(t):
    t = t.detach()
    return t.view(torch.int16).numpy().view(BF16) if t.dtype == torch.bfloat16 else t.numpy()


def assert_same_bits(got, want):
    """Same dtype name, shape and values (nan where torch has nan)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    g, w = got.detach().numpy(), from_torch(want)
    assert g.shape == w.shape
    np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64))


def bfloat16_values(seed, shape, scale=3.0):
    return (np.random.RandomState(seed).randn(*shape) * scale).astype(np.float32).astype(BF16)


# ---------------------------------------------------------------- the dtype and promotion
def test_bfloat16_is_a_public_floating_dtype_of_two_bytes():
    d = learntorch.bfloat16
    assert repr(d) == "learntorch.bfloat16" and d.is_floating_point and d.itemsize == 2
    t = learntorch.zeros(3, dtype=d)
    assert t.dtype is d and t.element_size() == 2 and t.type() == "torch.BFloat16Tensor"


def test_promote_types_matches_torch_for_every_pair_of_dtypes():
    require_torch()
    for a in NAMES:
        for b in NAMES:
            got = learntorch.promote_types(getattr(learntorch, a), getattr(learntorch, b))
            want = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert got.name == str(want).split(".")[-1], (a, b)


def test_float16_with_bfloat16_is_float32_in_both_orders():
    h, b = learntorch.ones(2, dtype=learntorch.float16), learntorch.ones(2).bfloat16()
    assert (h + b).dtype is learntorch.float32 and (b * h).dtype is learntorch.float32


@pytest.mark.parametrize("program", [
    lambda lib, b: b * 2.5,               # a Python float keeps the tensor's float dtype
    lambda lib, b: b + 3,
    lambda lib, b: b + lib.tensor(2.0),   # a 0-d float32 does not widen a 1-d bfloat16
    lambda lib, b: lib.arange(3) + b,     # integers + bfloat16 -> bfloat16
    lambda lib, b: b + lib.ones(3),       # two 1-d tensors: the wider, float32
    lambda lib, b: b[0] + lib.ones(3, dtype=lib.float16),  # 0-d bfloat16 + 1-d float16
    lambda lib, b: b + lib.ones(3, dtype=lib.float64),
    lambda lib, b: lib.where(b > 0, b, lib.zeros(3, dtype=lib.float16)),
])
def test_result_dtype_of_mixed_programs_matches_torch(program):
    require_torch()
    got = program(learntorch, learntorch.tensor([1.0, -2.0, 3.0]).bfloat16())
    want = program(torch, torch.tensor([1.0, -2.0, 3.0]).bfloat16())
    assert_same_bits(got, want)


# ---------------------------------------------------------------- conversions
SPECIAL = np.array([0.0, -0.0, 1.0, 1.00390625, 1.01171875, 3.0e38, 3.4e38, -3.4e38, 1e-39,
                    9.2e-41, 1e-45, np.inf, -np.inf, 65504.0, 65520.0, 6e-8, 2.9e-8, 0.1, -1 / 3],
                   dtype=np.float32)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=20))
def test_float32_to_bfloat16_rounds_to_nearest_even_as_torch(values):
    require_torch()
    a = np.concatenate([np.array(values, dtype=np.float32), SPECIAL])
    assert_same_bits(learntorch.from_numpy(a).bfloat16(), torch.from_numpy(a).bfloat16())
    assert_same_bits(learntorch.from_numpy(a).to(learntorch.bfloat16),
                     torch.from_numpy(a).to(torch.bfloat16))


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int64", "int32", "uint8",
                                  "bool"])
def test_bfloat16_converts_to_other_dtypes_as_torch(name):
    require_torch()
    a = np.concatenate([SPECIAL[np.isfinite(SPECIAL)] % 200, [-7.5, 2.5, 250.0]]).astype(
        np.float32).astype(BF16)
    got = learntorch.from_numpy(a).to(getattr(learntorch, name))
    want = to_torch(a).to(getattr(torch, name))
    assert_same_bits(got, want)


def test_half_and_bfloat16_methods_and_to_give_the_named_dtype():
    x = learntorch.tensor([1.0, 2.0])
    assert x.half().dtype is learntorch.float16 and x.bfloat16().dtype is learntorch.bfloat16
    assert x.to(learntorch.bfloat16).dtype is learntorch.bfloat16
    assert x.bfloat16().float().dtype is learntorch.float32
    m = learntorch.nn.Linear(2, 2).bfloat16()
    assert m.weight.dtype is m.bias.dtype is learntorch.bfloat16


def test_bfloat16_keeps_float32s_range_where_float16_overflows():
    x = learntorch.tensor([1e5, 1e-30])
    assert x.half().tolist() == [float("inf"), 0.0]
    assert x.bfloat16().tolist() == [99840.0, pytest.approx(1e-30, rel=1e-2)]


# ---------------------------------------------------------------- finfo, printing, save/load
def test_finfo_of_the_four_float_dtypes_has_torchs_fields():
    require_torch()
    for name in ("float16", "bfloat16", "float32", "float64"):
        got, want = learntorch.finfo(getattr(learntorch, name)), torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype"):
            assert getattr(got, attr) == getattr(want, attr), (name, attr)
        assert repr(got) == repr(want)


@pytest.mark.parametrize("values", [[1.5, 2.25, -3.0], [1.5, 2.25, -3.0e10], [0.1, 1 / 3, 7.0],
                                    [], [[1e-5, 1.0], [float("nan"), float("inf")]], 2.0])
def test_bfloat16_tensors_print_as_torchs(values):
    require_torch()
    got = repr(learntorch.tensor(values).bfloat16()).replace("learntorch", "torch")
    assert got == repr(torch.tensor(values).bfloat16())


def test_save_and_load_keep_bfloat16_bits_and_flags():
    x = learntorch.from_numpy(np.concatenate([SPECIAL, [np.nan]]).astype(BF16))
    p = learntorch.nn.Parameter(learntorch.randn(2, 3).bfloat16())
    buf = io.BytesIO()
    learntorch.save({"x": x, "p": p, "f": learntorch.ones(2)}, buf)
    buf.seek(0)
    back = learntorch.load(buf)
    assert back["x"].dtype is learntorch.bfloat16
    np.testing.assert_array_equal(back["x"].numpy().view(np.uint16), x.numpy().view(np.uint16))
    assert isinstance(back["p"], learntorch.nn.Parameter) and back["p"].requires_grad
    assert back["p"].dtype is learntorch.bfloat16 and learntorch.equal(back["p"], p)
    assert back["f"].dtype is learntorch.float32


def test_load_refuses_a_tensor_marked_as_bits_of_an_unknown_type():
    import json
    import zipfile
    buf = io.BytesIO()
    learntorch.save({"x": learntorch.ones(2).bfloat16()}, buf)
    entries = {}
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        for name in z.namelist():
            entries[name] = z.read(name)
    structure_name = next(n for n in entries if "structure" in n)
    entries[structure_name] = json.dumps(json.loads(entries[structure_name])).replace(
        '"bfloat16"', '"float8"').encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    out.seek(0)
    with pytest.raises(Exception, match="float8"):
        learntorch.load(out)


# ---------------------------------------------------------------- kernels: accumulate in float32
@pytest.fixture
def torch_on_one_thread():
    """torch splits a long reduction between its threads and rounds each thread's partial
    sum to bfloat16, so its result depends on the thread count; on one thread it is the
    float32 sum rounded once."""
    require_torch()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_sum_of_many_bfloat16_numbers_accumulates_in_float32_as_torch(torch_on_one_thread):
    a = np.random.RandomState(0).rand(100_000).astype(np.float32).astype(BF16)
    got, want = learntorch.from_numpy(a).sum(), to_torch(a).sum()
    assert_same_bits(got, want)
    assert got.item() == np.float32(a.astype(np.float64).sum()).astype(BF16)
    assert float(a.sum()) < 1000 < got.item()  # numpy's bfloat16 sum rounds every partial sum


# ops whose CPU result torch computes in float32 and rounds once, in an order numpy follows:
# learntorch gives the same bits
EXACT = {
    "sum": lambda lib, a, b: a.sum(),
    "sum_dim0": lambda lib, a, b: a.sum(0),
    "sum_dim1_keepdim": lambda lib, a, b: a.sum(1, keepdim=True),
    "mean": lambda lib, a, b: a.mean(),
    "mean_dim1": lambda lib, a, b: a.mean(1),
    "cumsum": lambda lib, a, b: a.cumsum(1),
    "prod": lambda lib, a, b: (a[:, :6].abs() + 0.5).prod(1),  # torch rounds each product
    "amax": lambda lib, a, b: a.amax(1),
    "max_dim": lambda lib, a, b: a.max(1).values,
    "argmax": lambda lib, a, b: a.argmax(1),
    "sort": lambda lib, a, b: lib.sort(a, 1).values,
    "matmul": lambda lib, a, b: a @ b,
    "matmul_transposed": lambda lib, a, b: a @ b.t().contiguous().t(),
    "mm": lambda lib, a, b: lib.mm(a, b),
    "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
    "trace": lambda lib, a, b: lib.trace(a[:, :8]),
    "bmm": lambda lib, a, b: lib.bmm(a.reshape(2, 4, 64), b.expand(2, 64, 16)),
    "linear": lambda lib, a, b: (LF if lib is learntorch else torch.nn.functional).linear(
        a, b.t(), b[0]),
    "relu": lambda lib, a, b: a.relu(),
    "add": lambda lib, a, b: a + a[:, :1],
    "mul_scalar": lambda lib, a, b: a * 0.37,
    "div_scalar": lambda lib, a, b: a / 3.3,
    "add_scalar": lambda lib, a, b: a + 1.00390625,
    "square": lambda lib, a, b: a ** 2,
    "exp": lambda lib, a, b: lib.exp(a / 4),
    "tanh": lambda lib, a, b: lib.tanh(a),
    "sigmoid": lambda lib, a, b: lib.sigmoid(a),
    "softmax": lambda lib, a, b: lib.softmax(a, 1),
    "where": lambda lib, a, b: lib.where(a > 0, a, 0.0),
    "clamp": lambda lib, a, b: a.clamp(-1, 1),
    "mse_loss": lambda lib, a, b: (LF if lib is learntorch else torch.nn.functional).mse_loss(
        a, a * 0.5),
    "avg_pool2d": lambda lib, a, b: (LF if lib is learntorch else torch.nn.functional)
    .avg_pool2d(a.reshape(2, 4, 8, 8), 2),
    "max_pool2d": lambda lib, a, b: (LF if lib is learntorch else torch.nn.functional)
    .max_pool2d(a.reshape(2, 4, 8, 8), 2),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_bfloat16_op_gives_torchs_bits(name):
    require_torch()
    a, b = bfloat16_values(0, (8, 64)), bfloat16_values(1, (64, 16), scale=1.0)
    got = EXACT[name](learntorch, learntorch.from_numpy(a), learntorch.from_numpy(b))
    want = EXACT[name](torch, to_torch(a), to_torch(b))
    assert_same_bits(got, want)


# ops whose float32 math (exp, log, erf) differs from torch's vector code by a float32 ulp,
# which can move the rounded bfloat16 result by one of its own ulps: same dtype, within 1 ulp
# (or 1e-6 where torch's float32 formula cancels to 0 and learntorch's erf, in float64, keeps
# a tiny value: gelu of -6.5 is -2.6e-10)
CLOSE = {
    "log_softmax": lambda lib, a: lib.log_softmax(a, 1),
    "logsumexp": lambda lib, a: lib.logsumexp(a, 1),
    "gelu": lambda lib, a: (LF if lib is learntorch else torch.nn.functional).gelu(a),
    "silu": lambda lib, a: (LF if lib is learntorch else torch.nn.functional).silu(a),
    "var": lambda lib, a: a.var(1),
    "std": lambda lib, a: a.std(),
    "norm": lambda lib, a: a.norm(),
    "cross_entropy": lambda lib, a: (LF if lib is learntorch else torch.nn.functional)
    .cross_entropy(a, lib.arange(8) * 7),
    "conv2d": lambda lib, a: (LF if lib is learntorch else torch.nn.functional).conv2d(
        a.reshape(2, 4, 8, 8), a[:4, :36].reshape(4, 4, 3, 3) / 8),
}


def _within_one_ulp(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] == "bfloat16"
    g, w = got.detach().float().numpy(), want.detach().float().numpy()
    ulp = np.spacing(np.abs(w).astype(BF16)).astype(np.float32)
    np.testing.assert_array_less(np.abs(g - w), 1.01 * ulp + 1e-6)


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_bfloat16_transcendental_op_is_within_one_ulp_of_torch(name):
    require_torch()
    a = bfloat16_values(2, (8, 64))
    _within_one_ulp(CLOSE[name](learntorch, learntorch.from_numpy(a)),
                    CLOSE[name](torch, to_torch(a)))


@pytest.mark.parametrize("affine", [None, "float32", "bfloat16"])
def test_bfloat16_layer_norm_gives_torchs_bits_with_statistics_kept_in_float32(affine):
    """torch's layer_norm kernel keeps the mean and variance of a bfloat16 input in float32 and
    rounds once; so does learntorch's (its statistics never travel as bfloat16): same bits,
    with no weight, with float32 parameters (torch's mixed-precision case) or bfloat16 ones."""
    require_torch()
    a = bfloat16_values(2, (8, 64))
    g = np.random.RandomState(3).randn(64).astype(np.float32)
    params = {}
    if affine is not None:
        params = {"lt": (learntorch.tensor(g), learntorch.tensor(g / 2)),
                  "torch": (torch.tensor(g), torch.tensor(g / 2))}
        if affine == "bfloat16":
            params = {k: tuple(p.bfloat16() for p in v) for k, v in params.items()}
    got = LF.layer_norm(learntorch.from_numpy(a), (64,), *params.get("lt", ()))
    want = torch.nn.functional.layer_norm(to_torch(a), (64,), *params.get("torch", ()))
    assert_same_bits(got, want)


@pytest.mark.parametrize("norm", ["layer_norm", "group_norm", "batch_norm"])
def test_16_bit_normalisation_takes_float32_parameters_as_torch(norm):
    """A bfloat16 activation with a float32 module's parameters (what autocast hands a norm
    layer after a bfloat16 linear): torch's CPU kernels accept it and answer in bfloat16; the
    parameters' gradients stay float32."""
    require_torch()
    a = bfloat16_values(5, (2, 4, 3, 3))
    dtypes = []
    for lib, x in ((learntorch, learntorch.from_numpy(a)), (torch, to_torch(a))):
        x.requires_grad_()
        F = LF if lib is learntorch else torch.nn.functional
        w = lib.linspace(0.5, 2.0, 4).requires_grad_()
        b = lib.linspace(-1.0, 1.0, 4).requires_grad_()
        y = {"layer_norm": lambda: F.layer_norm(x, (3,), w[:3], b[:3]),
             "group_norm": lambda: F.group_norm(x, 2, w, b),
             "batch_norm": lambda: F.batch_norm(x, lib.zeros(4), lib.ones(4), w, b,
                                                training=True)}[norm]()
        y.float().sum().backward()
        dtypes.append([str(t.dtype).split(".")[-1] for t in (y, x.grad, w.grad, b.grad)])
    assert dtypes[0] == dtypes[1] == ["bfloat16", "bfloat16", "float32", "float32"]


@pytest.mark.parametrize("name", ["sum", "mean_dim1", "matmul", "linear", "relu", "mul_scalar",
                                  "mse_loss", "avg_pool2d", "max_pool2d", "cumsum"])
def test_bfloat16_gradients_have_torchs_dtype_and_bits(name):
    require_torch()
    a, b = bfloat16_values(3, (8, 64)), bfloat16_values(4, (64, 16), scale=1.0)
    la, lb = learntorch.from_numpy(a).requires_grad_(), learntorch.from_numpy(b).requires_grad_()
    ta, tb = to_torch(a).requires_grad_(), to_torch(b).requires_grad_()
    EXACT[name](learntorch, la, lb).float().sum().backward()
    EXACT[name](torch, ta, tb).float().sum().backward()
    for got, want in ((la.grad, ta.grad), (lb.grad, tb.grad)):
        assert (got is None) == (want is None)
        if got is not None:
            assert_same_bits(got, want)


def test_a_bfloat16_model_trains_with_bfloat16_parameters_and_gradients():
    learntorch.manual_seed(0)
    model = learntorch.nn.Sequential(learntorch.nn.Linear(4, 8), learntorch.nn.ReLU(),
                                     learntorch.nn.Linear(8, 1)).bfloat16()
    opt = learntorch.optim.Adam(model.parameters(), lr=0.05)
    x = learntorch.randn(32, 4).bfloat16()
    y = x.sum(1, keepdim=True)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = LF.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype is learntorch.bfloat16 and p.grad.dtype is learntorch.bfloat16
               for p in model.parameters())
    assert losses[-1] < 0.2 * losses[0]
