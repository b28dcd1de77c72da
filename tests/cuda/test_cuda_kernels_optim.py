"""The fused SGD, Adam/AdamW, RMSprop and Adagrad kernels on the GPU match the CPU fused kernels.

The oracle is ``numba_cpu.optim_backend.run_kernel`` on numpy copies: the CPU kernels,
themselves checked bit for bit against the numpy updates, which match
torch.optim step for step (``tests/optim``).  Each test runs several steps with
a new gradient every step, so the momentum / moment buffers carry state.  In
the simulator the GPU does the very same float operations: results must be
equal.  A real GPU may fuse multiply-adds (one rounding instead of two): a
last-bit tolerance there.
"""
import numpy as np
import pytest

import learntorch
from learntorch.backends.cuda import optim_kernels
from learntorch.backends.cuda.array import CudaArray
from learntorch.backends.cuda.driver import simulated
from learntorch.backends.numba_cpu.optim_backend import run_kernel

N = 37  # two blocks of 32 simulated threads, the second one ragged
STEPS = 3


def _assert_same(gpu, cpu):
    if simulated():
        np.testing.assert_array_equal(gpu, cpu)
    else:
        tol = 1e-6 if cpu.dtype == np.float32 else 1e-14
        np.testing.assert_allclose(gpu, cpu, rtol=tol, atol=tol)


def _gradients(dtype, nan_at=None):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(N).astype(dtype) for _ in range(STEPS)]
    if nan_at is not None:
        grads[1][nan_at] = np.nan
    return grads


SGD_OPTIONS = [
    dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.3, weight_decay=0.1, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.0, weight_decay=0.1, nesterov=True, maximize=False),
    dict(momentum=0.5, dampening=0.2, weight_decay=0.05, nesterov=False, maximize=True),
    dict(momentum=0.0, dampening=0.0, weight_decay=0.1, nesterov=False, maximize=True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", SGD_OPTIONS,
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items() if v))
def test_sgd_kernel_matches_the_cpu_kernel_over_several_steps(options, dtype):
    options = dict(options)
    dampening = options.pop("dampening")
    cpu_param = np.random.default_rng(1).standard_normal(N).astype(dtype)
    gpu_param = CudaArray.from_host(cpu_param)
    cpu_buf, gpu_buf = np.empty(N, dtype), CudaArray.empty((N,), dtype)
    with_buffer = options["momentum"] != 0
    for step, grad in enumerate(_gradients(dtype)):
        scalars = dict(options, lr=0.1, one_minus_dampening=1 - dampening, first=step == 0)
        run_kernel("sgd", cpu_param, grad, cpu_buf if with_buffer else None, **scalars)
        optim_kernels.run("sgd", gpu_param, CudaArray.from_host(grad),
                          gpu_buf if with_buffer else None, **scalars)
        _assert_same(gpu_param.copy_to_host(), cpu_param)
        if with_buffer:
            _assert_same(gpu_buf.copy_to_host(), cpu_buf)


ADAM_OPTIONS = [
    dict(weight_decay=0.0, amsgrad=False, maximize=False, decoupled=False),
    dict(weight_decay=0.1, amsgrad=False, maximize=False, decoupled=False),   # Adam's L2
    dict(weight_decay=0.1, amsgrad=False, maximize=False, decoupled=True),    # AdamW
    dict(weight_decay=0.01, amsgrad=True, maximize=False, decoupled=True),
    dict(weight_decay=0.0, amsgrad=True, maximize=True, decoupled=False),
]


def _adam_scalars(step, dtype, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, **options):
    """What ``optim.Adam._update`` hands the fused kernel at ``step`` (1, 2, ...)."""
    weight = dtype(1 - beta1)
    return dict(decay=1 - lr * options["weight_decay"], lerp_weight=weight,
                lerp_complement=1 - weight, beta2=beta2, one_minus_beta2=1 - beta2,
                bias_correction2_sqrt=(1 - beta2 ** step) ** 0.5, eps=eps,
                step_size=-(lr / (1 - beta1 ** step)), **options)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", ADAM_OPTIONS,
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items() if v) or "plain")
def test_adam_kernel_matches_the_cpu_kernel_over_several_steps(options, dtype):
    cpu = [np.random.default_rng(2).standard_normal(N).astype(dtype)] + [
        np.zeros(N, dtype) for _ in range(3 if options["amsgrad"] else 2)]
    gpu = [CudaArray.from_host(a) for a in cpu]
    for step, grad in enumerate(_gradients(dtype), start=1):
        scalars = _adam_scalars(step, dtype, **options)
        extra = [] if options["amsgrad"] else [None]
        run_kernel("adam", cpu[0], grad, *cpu[1:], *extra, **scalars)
        optim_kernels.run("adam", gpu[0], CudaArray.from_host(grad), *gpu[1:], *extra, **scalars)
        for g, c in zip(gpu, cpu):  # parameter, exp_avg, exp_avg_sq (, max_exp_avg_sq)
            _assert_same(g.copy_to_host(), c)


RMSPROP_OPTIONS = [
    dict(weight_decay=0.0, momentum=0.0, centered=False, maximize=False),
    dict(weight_decay=0.0, momentum=0.9, centered=False, maximize=False),
    dict(weight_decay=0.0, momentum=0.0, centered=True, maximize=False),
    dict(weight_decay=0.1, momentum=0.5, centered=True, maximize=False),
    dict(weight_decay=0.05, momentum=0.0, centered=False, maximize=True),
]


def _rmsprop_scalars(dtype, lr=1e-2, alpha=0.99, eps=1e-8, **options):
    """What ``optim.RMSprop._update`` hands the fused kernel."""
    weight = dtype(1 - alpha)
    return dict(lr=lr, alpha=alpha, one_minus_alpha=1 - alpha, lerp_weight=weight,
                lerp_complement=1 - weight, eps=eps, **options)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", RMSPROP_OPTIONS,
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items() if v) or "plain")
def test_rmsprop_kernel_matches_the_cpu_kernel_over_several_steps(options, dtype):
    # parameter, square_avg, then grad_avg and momentum_buffer only when the options use them
    cpu = {"param": np.random.default_rng(4).standard_normal(N).astype(dtype),
           "square_avg": np.zeros(N, dtype),
           "grad_avg": np.zeros(N, dtype) if options["centered"] else None,
           "buf": np.zeros(N, dtype) if options["momentum"] > 0 else None}
    gpu = {k: None if a is None else CudaArray.from_host(a) for k, a in cpu.items()}
    for grad in _gradients(dtype):
        scalars = _rmsprop_scalars(dtype, **options)
        run_kernel("rmsprop", cpu["param"], grad, cpu["square_avg"], cpu["grad_avg"],
                   cpu["buf"], **scalars)
        optim_kernels.run("rmsprop", gpu["param"], CudaArray.from_host(grad), gpu["square_avg"],
                          gpu["grad_avg"], gpu["buf"], **scalars)
        for key, c in cpu.items():
            if c is not None:
                _assert_same(gpu[key].copy_to_host(), c)


ADAGRAD_OPTIONS = [
    dict(lr_decay=0.0, weight_decay=0.0, initial=0.0, maximize=False),
    dict(lr_decay=0.1, weight_decay=0.0, initial=0.0, maximize=False),
    dict(lr_decay=0.0, weight_decay=0.1, initial=0.5, maximize=False),
    dict(lr_decay=0.05, weight_decay=0.05, initial=0.1, maximize=True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", ADAGRAD_OPTIONS,
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items() if v) or "plain")
def test_adagrad_kernel_matches_the_cpu_kernel_over_several_steps(options, dtype):
    lr = 0.1
    cpu = [np.random.default_rng(5).standard_normal(N).astype(dtype),
           np.full(N, options["initial"], dtype)]   # parameter, sum
    gpu = [CudaArray.from_host(a) for a in cpu]
    for step, grad in enumerate(_gradients(dtype), start=1):
        # what ``optim.Adagrad._update`` hands the fused kernel: the decayed learning rate
        scalars = dict(clr=lr / (1 + (step - 1) * options["lr_decay"]), eps=1e-10,
                       weight_decay=options["weight_decay"], maximize=options["maximize"])
        run_kernel("adagrad", cpu[0], grad, cpu[1], **scalars)
        optim_kernels.run("adagrad", gpu[0], CudaArray.from_host(grad), gpu[1], **scalars)
        for g, c in zip(gpu, cpu):
            _assert_same(g.copy_to_host(), c)


def test_amsgrad_keeps_a_nan_as_torch_maximum_does():
    # a nan gradient makes exp_avg_sq nan; torch.maximum propagates nan into the running max
    cpu = [np.ones(N, np.float32)] + [np.zeros(N, np.float32) for _ in range(3)]
    gpu = [CudaArray.from_host(a) for a in cpu]
    options = dict(weight_decay=0.0, amsgrad=True, maximize=False, decoupled=False)
    for step, grad in enumerate(_gradients(np.float32, nan_at=5), start=1):
        scalars = _adam_scalars(step, np.float32, **options)
        run_kernel("adam", cpu[0], grad, *cpu[1:], **scalars)
        optim_kernels.run("adam", gpu[0], CudaArray.from_host(grad), *gpu[1:], **scalars)
    max_sq = gpu[3].copy_to_host()
    assert np.isnan(max_sq[5]) and np.isfinite(np.delete(max_sq, 5)).all()
    for g, c in zip(gpu, cpu):
        _assert_same(g.copy_to_host(), c)


def test_the_gradient_is_never_written():
    grad = CudaArray.from_host(np.arange(N, dtype=np.float32))
    optim_kernels.run("sgd", CudaArray.from_host(np.ones(N, np.float32)), grad, None, lr=0.1,
                      weight_decay=0.1, momentum=0.0, one_minus_dampening=1.0, nesterov=False,
                      maximize=True, first=False)
    np.testing.assert_array_equal(grad.copy_to_host(), np.arange(N, dtype=np.float32))


def test_mismatched_state_is_refused_with_the_fix():
    param = CudaArray.from_host(np.ones(N, np.float32))
    grad = CudaArray.from_host(np.ones(N, np.float32))
    sgd = dict(lr=0.1, weight_decay=0.0, momentum=0.9, one_minus_dampening=1.0, nesterov=False,
               maximize=False, first=True)
    with pytest.raises(RuntimeError, match=r"\(37,\), float32.*float64"):
        optim_kernels.run("sgd", param, grad, CudaArray.empty((N,), np.float64), **sgd)
    with pytest.raises(RuntimeError, match="on cuda arrays.*ndarray"):
        optim_kernels.run("sgd", param, np.ones(N, np.float32), None, **sgd)
    with pytest.raises(TypeError, match="float32 or float64.*int64"):
        optim_kernels.run("sgd", CudaArray.from_host(np.ones(N, np.int64)), grad, None, **sgd)


OPTIMIZERS = {
    "sgd_nesterov_wd": lambda ps: learntorch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                                       weight_decay=0.01),
    "sgd_dampening_maximize": lambda ps: learntorch.optim.SGD(ps, lr=0.1, momentum=0.5,
                                                              dampening=0.3, maximize=True),
    "adam_amsgrad_l2": lambda ps: learntorch.optim.Adam(ps, lr=0.01, weight_decay=0.1,
                                                        amsgrad=True),
    "adamw": lambda ps: learntorch.optim.AdamW(ps, lr=0.01),
    "rmsprop_centered_momentum_wd": lambda ps: learntorch.optim.RMSprop(
        ps, lr=0.01, momentum=0.9, centered=True, weight_decay=0.1),
    "rmsprop_maximize": lambda ps: learntorch.optim.RMSprop(ps, lr=0.01, maximize=True),
    "adagrad_lr_decay_wd_initial": lambda ps: learntorch.optim.Adagrad(
        ps, lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2),
    "adagrad_maximize": lambda ps: learntorch.optim.Adagrad(ps, lr=0.1, maximize=True),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_step_on_cuda_parameters_uses_the_kernel_and_matches_the_cpu(name,
                                                                               monkeypatch):
    launched = []
    original = optim_kernels.run
    monkeypatch.setattr(optim_kernels, "run", lambda *a, **k: launched.append(a[0]) or
                        original(*a, **k))
    start = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    params = {d: learntorch.nn.Parameter(learntorch.tensor(start, device=d))
              for d in ("cpu", "cuda")}
    optimizers = {d: OPTIMIZERS[name]([p]) for d, p in params.items()}
    for step in range(STEPS):
        grad = np.random.default_rng(step).standard_normal((4, 5)).astype(np.float32)
        for d in ("cpu", "cuda"):
            params[d].grad = learntorch.tensor(grad, device=d)
            optimizers[d].step()
    assert len(launched) == STEPS   # the cpu's small parameter took the numpy path instead
    _assert_same(params["cuda"].detach().cpu().numpy(), params["cpu"].detach().numpy())
    for key, value in optimizers["cpu"].state[params["cpu"]].items():
        if isinstance(value, learntorch.Tensor) and value.ndim:
            _assert_same(optimizers["cuda"].state[params["cuda"]][key].cpu().numpy(),
                         value.numpy())


# ---------------------------------------------------------------- through the backend contract
UPDATES = {  # backend method -> (state buffers, options)
    "sgd_update": (1, dict(lr=0.1, weight_decay=0.1, momentum=0.9, dampening=0.2,
                           nesterov=False, maximize=True)),
    "adam_update": (3, dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1,
                            amsgrad=True, maximize=False, decoupled_weight_decay=True)),
    "rmsprop_update": (3, dict(lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.1, momentum=0.5,
                               centered=True, maximize=False)),
    "adagrad_update": (1, dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, eps=1e-10,
                               maximize=True)),
}


@pytest.mark.parametrize("fused", [None, False])
@pytest.mark.parametrize("method", sorted(UPDATES))
def test_a_backend_update_of_cuda_arrays_runs_on_the_device_and_matches_the_numpy_update(
        method, fused):
    """``NumpyBackend.<update>`` hands cuda arrays to the CudaBackend: its kernel (fused=None)
    or the numpy formula on the device (fused=False) -- the numbers of the host's formula."""
    n_buffers, options = UPDATES[method]
    rng = np.random.default_rng(6)
    host = [rng.standard_normal(N).astype(np.float32)] + [  # state starts at 0, as in torch
        np.zeros(N, np.float32) for _ in range(n_buffers)]
    device = [CudaArray.from_host(a) for a in host]
    reference = learntorch.backends.NumpyBackend()
    for step, grad in enumerate(_gradients(np.float32), start=1):
        extra = {} if method in ("sgd_update", "rmsprop_update") else {"step": step}
        getattr(reference, method)(host[0], grad, *host[1:], **options, **extra)
        getattr(reference, method)(device[0], CudaArray.from_host(grad), *device[1:], **options,
                                   **extra, fused=fused)
        assert all(isinstance(a, CudaArray) for a in device)
        for d, h in zip(device, host):
            _assert_same(d.copy_to_host(), h)
