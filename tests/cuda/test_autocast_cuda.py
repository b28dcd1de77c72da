"""``autocast("cuda")``: the dtype of every output equals torch 2.13's for the same program
(torch's CUDA op lists: matmul/linear/conv in float16; exp/log/pow, softmax, sums, norms and
losses in float32; addcmul/atan2/dot promoted; binary_cross_entropy refused).

torch's oracle runs without a GPU: its autocast for cuda works on "fake" cuda tensors
(``FakeTensorMode``: shapes and dtypes, no data), with the region switched on through
``torch.set_autocast_enabled`` (``torch.autocast("cuda")`` itself turns off without a GPU).
learntorch runs on its cuda device (Numba's CUDA simulator where there is no GPU).
"""
import contextlib

import pytest

import learntorch
from tests.oracle import require_torch, torch


def F(lib):
    return lib.nn.functional


def _tensors(lib):
    cuda = "cuda"
    make = lambda *shape: lib.randn(*shape, device=cuda)  # noqa: E731
    return dict(x=make(4, 6), w=make(3, 6), b=make(3), v=make(6), img=make(2, 3, 5, 5),
                k=make(4, 3, 3, 3), xh=make(4, 6).half(), xd=make(4, 6).double(),
                batch=make(2, 4, 6), target=lib.tensor([0, 2, 1, 0], device=cuda),
                prob=make(4, 6).sigmoid())


PROGRAMS = {
    # lower_precision_fp
    "linear": lambda lib, t: F(lib).linear(t["x"], t["w"], t["b"]),
    "matmul": lambda lib, t: t["x"] @ t["w"].T,
    "matmul_matrix_vector": lambda lib, t: t["x"] @ t["v"],
    "matmul_vector_vector": lambda lib, t: t["v"] @ t["v"],
    "mm": lambda lib, t: lib.mm(t["x"], t["w"].T),
    "bmm": lambda lib, t: lib.bmm(t["batch"], t["batch"].transpose(1, 2)),
    "einsum": lambda lib, t: lib.einsum("ij,kj->ik", t["x"], t["w"]),
    "conv2d": lambda lib, t: F(lib).conv2d(t["img"], t["k"]),
    "linear_float64_not_eligible": lambda lib, t: F(lib).linear(t["xd"], t["w"].double()),
    # fp32
    "exp": lambda lib, t: lib.exp(t["xh"]),
    "log": lambda lib, t: lib.log(t["prob"].half()),
    "pow": lambda lib, t: t["xh"] ** 2,
    "rsqrt": lambda lib, t: lib.rsqrt(t["prob"].half()),
    "softmax": lambda lib, t: lib.softmax(t["x"] @ t["w"].T, 1),
    "log_softmax": lambda lib, t: F(lib).log_softmax(t["xh"], 1),
    "sum": lambda lib, t: (t["x"] @ t["w"].T).sum(),
    "sum_dim": lambda lib, t: t["xh"].sum(1),
    "prod": lambda lib, t: t["xh"].prod(),
    "cumsum": lambda lib, t: t["xh"].cumsum(1),
    "norm": lambda lib, t: t["xh"].norm(),
    "logsumexp": lambda lib, t: lib.logsumexp(t["xh"], 1),
    "layer_norm": lambda lib, t: F(lib).layer_norm(t["xh"], (6,)),
    # (mse_loss, softplus, atan2: torch's fake cuda tensors cannot run mse_loss, learntorch's
    # cuda backend has no softplus/atan2 kernel yet; their entries are the CPU tests' and the
    # policy table's)
    "cross_entropy": lambda lib, t: F(lib).cross_entropy(t["x"] @ t["w"].T, t["target"]),
    "huber_loss": lambda lib, t: F(lib).huber_loss(t["xh"], t["xh"]),
    "nll_loss": lambda lib, t: F(lib).nll_loss(t["xh"], t["target"]),
    "smooth_l1_loss": lambda lib, t: F(lib).smooth_l1_loss(t["xh"], t["x"]),
    "bce_with_logits": lambda lib, t: F(lib).binary_cross_entropy_with_logits(t["xh"],
                                                                              t["prob"]),
    # promote
    "addcmul": lambda lib, t: lib.addcmul(t["xh"], t["x"], t["xh"]),
    "dot": lambda lib, t: lib.dot(t["v"].half(), t["v"]),
    # as the inputs are
    "relu": lambda lib, t: lib.relu(t["x"] @ t["w"].T),
    "mean": lambda lib, t: (t["x"] @ t["w"].T).mean(),
    "add_mixed": lambda lib, t: t["xh"] + t["x"],
    "cat": lambda lib, t: lib.cat([t["xh"], t["x"]]),
    "tanh": lambda lib, t: lib.tanh(t["xh"]),
}


@contextlib.contextmanager
def _torch_cuda_autocast(dtype):
    """torch's cuda autocast on fake cuda tensors (no GPU needed)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode(allow_non_fake_inputs=True):
        before = (torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"))
        torch.set_autocast_enabled("cuda", True)
        torch.set_autocast_dtype("cuda", dtype)
        try:
            yield
        finally:
            torch.set_autocast_enabled("cuda", before[0])
            torch.set_autocast_dtype("cuda", before[1])


def _torch_dtype(program, dtype=None):
    with _torch_cuda_autocast(dtype or torch.float16):
        t = _tensors(torch)
        return str(program(torch, t).dtype).split(".")[-1]


def _learntorch_dtype(program, dtype=None):
    with learntorch.autocast("cuda", dtype=dtype):
        out = program(learntorch, _tensors(learntorch))
    assert out.device.type == "cuda"
    return out.dtype.name


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_output_dtype_under_cuda_autocast_is_torchs(name):
    require_torch()
    assert _learntorch_dtype(PROGRAMS[name]) == _torch_dtype(PROGRAMS[name])


def test_binary_cross_entropy_is_refused_under_cuda_autocast_as_torch():
    require_torch()
    program = lambda lib, t: F(lib).binary_cross_entropy(t["prob"], t["prob"])  # noqa: E731
    with pytest.raises(RuntimeError, match="unsafe to autocast") as got:
        _learntorch_dtype(program)
    with pytest.raises(RuntimeError, match="unsafe to autocast") as want:
        _torch_dtype(program)
    assert "binary_cross_entropy_with_logits" in str(got.value)
    assert str(got.value).splitlines()[:3] == str(want.value).splitlines()[:3]


def test_cpu_tensors_are_not_cast_by_a_cuda_region():
    with learntorch.autocast("cuda"):
        cpu = learntorch.ones(2, 2)
        assert (cpu @ cpu).dtype is learntorch.float32
        on_gpu = cpu.cuda()
        assert (on_gpu @ on_gpu).dtype is learntorch.float16


def test_cuda_and_cpu_regions_nest_independently():
    a = learntorch.ones(2, 2)
    with learntorch.autocast("cuda"), learntorch.autocast("cpu"):
        assert (a @ a).dtype is learntorch.bfloat16
        assert (a.cuda() @ a.cuda()).dtype is learntorch.float16
        assert learntorch.is_autocast_enabled() and learntorch.is_autocast_enabled("cpu")
    assert not learntorch.is_autocast_enabled("cuda")


def test_gradients_of_a_cuda_autocast_step_are_float32():
    learntorch.manual_seed(0)
    model = learntorch.nn.Linear(6, 3).cuda()
    x = learntorch.randn(4, 6, device="cuda")
    with learntorch.autocast("cuda"):
        out = model(x)
        loss = F(learntorch).cross_entropy(out, learntorch.tensor([0, 1, 2, 0], device="cuda"))
    assert out.dtype is learntorch.float16 and loss.dtype is learntorch.float32
    loss.backward()
    assert model.weight.grad.dtype is model.bias.grad.dtype is learntorch.float32
