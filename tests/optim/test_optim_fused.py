"""The fused optimizer updates: the same numbers as the numpy formula, and used only where
they pay.

Each update is a backend method (``sgd_update``, ``adam_update``, ``rmsprop_update``,
``adagrad_update``): torch's formula written once in numpy (``NumpyBackend``, held to
torch step for step in test_optim_trajectories.py), which the Numba backend overrides
with a one-pass kernel.  The kernel must reproduce the numpy formula *bit for bit*, for
every option, in float32 and float64 -- it performs the same IEEE operations in the same
order.  Then the dispatch rules: ``fused=False`` never runs a kernel, ``fused=True`` runs
it whenever the arrays allow it, the default runs it from ``layer_min_sizes[name]``
elements, and small demos never import Numba.
"""
import subprocess
import sys

import numpy as np
import pytest

import learntorch
from learntorch.backends import NumbaBackend, NumpyBackend
from learntorch.backends.numba_cpu import optim_backend

OPTIONS = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.1),
            dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)],
    "Adam": [dict(lr=0.01), dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True),
             dict(lr=0.01, betas=(0.4, 0.7), decoupled_weight_decay=True, weight_decay=0.1)],
    "AdamW": [dict(lr=0.01, amsgrad=True)],
    "RMSprop": [dict(lr=0.01), dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1),
                dict(lr=0.01, alpha=0.2, centered=True, maximize=True)],
    "Adagrad": [dict(lr=0.1), dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, maximize=True,
                                   initial_accumulator_value=0.3)],
}
CASES = [(name, o) for name, options in OPTIONS.items() for o in options]
KERNELS = ("sgd", "adam", "rmsprop", "adagrad")


def numba_backend(min_size):
    """A Numba backend whose optimizer kernels serve parameters from ``min_size`` elements."""
    backend = NumbaBackend()
    backend.layer_min_sizes = dict(backend.layer_min_sizes, **dict.fromkeys(KERNELS, min_size))
    return backend


def run(name, options, dtype, backend, steps=6, size=(30, 37)):
    """Parameters and state after ``steps`` steps with ``backend`` active."""
    rng = np.random.default_rng(0)
    params = [learntorch.nn.Parameter(learntorch.from_numpy(rng.standard_normal(s).astype(dtype)))
              for s in (size, (size[1],))]
    opt = getattr(learntorch.optim, name)(params, **options)
    grads = []
    with learntorch.backends.use(backend):
        for _ in range(steps):
            for p in params:
                g = rng.standard_normal(tuple(p.shape)).astype(dtype) * 3
                g.reshape(-1)[::7] = 0  # exact zeros: sqrt(0), 0/eps, lerp towards 0
                p.grad = learntorch.from_numpy(g)
                grads.append((g.copy(), p.grad))
            opt.step()
    for before, after in grads:  # an update reads the gradient, never writes it
        np.testing.assert_array_equal(before, after.numpy())
    return params, opt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, options", CASES)
def test_kernel_gives_the_numpy_updates_numbers_bit_for_bit(name, options, dtype):
    ref_params, ref_opt = run(name, options, dtype, NumpyBackend())
    k_params, k_opt = run(name, options, dtype, numba_backend(0))
    for p, q in zip(ref_params, k_params):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert set(ref_opt.state[p]) == set(k_opt.state[q])
        for key, value in ref_opt.state[p].items():
            np.testing.assert_array_equal(value.numpy(), k_opt.state[q][key].numpy(),
                                          err_msg=key)


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad", "SGD"])
def test_non_finite_gradients_propagate_the_same_way_on_both_paths(name):
    results = []
    for backend in (NumpyBackend(), numba_backend(0)):
        p = learntorch.nn.Parameter(learntorch.zeros(6))
        extra = dict(amsgrad=True) if name == "Adam" else {}
        opt = getattr(learntorch.optim, name)([p], lr=0.1, **extra)
        with learntorch.backends.use(backend):
            for grad in ([1.0, np.inf, -np.inf, np.nan, 0.0, -2.0], [1.0] * 6):
                p.grad = learntorch.tensor(grad)
                opt.step()
        results.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(results[0], results[1])  # nan == nan here
    assert np.isnan(results[0][3])


# ---------------------------------------------------------------- which path runs
@pytest.fixture
def kernel_calls(monkeypatch):
    """Names of the kernels run, recorded (they still run); the Numba backend is active."""
    calls = []
    real = optim_backend.run_kernel

    def spy(name, *arrays, **scalars):
        calls.append(name)
        return real(name, *arrays, **scalars)
    monkeypatch.setattr(optim_backend, "run_kernel", spy)
    with learntorch.backends.use(NumbaBackend()):
        yield calls


def one_step(opt_factory, shape, dtype=learntorch.float32, transposed=False):
    data = learntorch.randn(*shape, dtype=dtype)
    if transposed:
        data = data.t()
    p = learntorch.nn.Parameter(data)
    opt = opt_factory([p])
    p.grad = learntorch.randn(*p.shape, dtype=dtype)
    opt.step()


@pytest.mark.parametrize("name, kernel", [("SGD", "sgd"), ("Adam", "adam"), ("AdamW", "adam"),
                                          ("Adagrad", "adagrad")])
def test_fused_option_forces_or_forbids_the_kernel(name, kernel, kernel_calls):
    cls = getattr(learntorch.optim, name)
    big = NumbaBackend.layer_min_sizes[kernel] * 2
    one_step(lambda ps: cls(ps, lr=0.1, fused=False), (big,))
    assert kernel_calls == []
    one_step(lambda ps: cls(ps, lr=0.1, fused=True), (3,))
    assert kernel_calls == [kernel]


@pytest.mark.parametrize("name, kernel", [("SGD", "sgd"), ("Adam", "adam"),
                                          ("RMSprop", "rmsprop"), ("Adagrad", "adagrad")])
def test_by_default_only_large_parameters_use_the_kernel(name, kernel, kernel_calls):
    cls = getattr(learntorch.optim, name)
    n = NumbaBackend.layer_min_sizes[kernel]
    one_step(lambda ps: cls(ps, lr=0.1), (n - 1,))
    assert kernel_calls == []
    one_step(lambda ps: cls(ps, lr=0.1), (n,))
    assert kernel_calls == [kernel]


@pytest.mark.parametrize("case", ["float16", "transposed"])
def test_arrays_a_kernel_cannot_take_use_the_numpy_path_even_when_fused(case, kernel_calls):
    dtype = learntorch.float16 if case == "float16" else learntorch.float32
    one_step(lambda ps: learntorch.optim.Adam(ps, fused=True), (40, 30), dtype,
             transposed=case == "transposed")
    assert kernel_calls == []


def test_a_transposed_parameter_gets_the_same_update_as_a_contiguous_copy():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    g = rng.standard_normal((5, 4)).astype(np.float32)
    values = []
    with learntorch.backends.use(NumbaBackend()):
        for transposed in (False, True):
            data = learntorch.from_numpy(np.ascontiguousarray(w.T)).t() if transposed else \
                learntorch.from_numpy(w.copy())
            p = learntorch.nn.Parameter(data)
            opt = learntorch.optim.Adam([p], lr=0.1, fused=True)
            p.grad = learntorch.from_numpy(g.copy())
            opt.step()
            values.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(values[0], values[1])


def test_a_learners_backend_computes_every_update():
    """The optimizers compute only through ``backends.current``: a backend that overrides
    an update sees every call, with torch's options."""
    seen = []

    class Spy(NumpyBackend):
        def sgd_update(self, param, grad, momentum_buffer, **options):
            seen.append(("sgd", options["momentum"], options["nesterov"]))
            return super().sgd_update(param, grad, momentum_buffer, **options)

        def adam_update(self, *arrays, **options):
            seen.append(("adam", options["step"], options["decoupled_weight_decay"]))
            return super().adam_update(*arrays, **options)

    p = learntorch.nn.Parameter(learntorch.ones(3))
    with learntorch.backends.use(Spy()):
        for opt in (learntorch.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True),
                    learntorch.optim.AdamW([p])):
            for _ in range(2):
                p.grad = learntorch.ones(3)
                opt.step()
    assert seen == [("sgd", 0.9, True), ("sgd", 0.9, True), ("adam", 1.0, True),
                    ("adam", 2.0, True)]


def test_training_a_small_model_never_imports_numba():
    code = (
        "import sys, learntorch as torch\n"
        "params = [torch.nn.Parameter(torch.randn(20, 30)), torch.nn.Parameter(torch.randn(30))]\n"
        "for cls in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, "
        "torch.optim.Adagrad):\n"
        "    opt = cls(params, lr=0.01)\n"
        "    for _ in range(3):\n"
        "        opt.zero_grad()\n"
        "        torch.tanh(torch.randn(8, 20) @ params[0] + params[1]).pow(2).mean().backward()\n"
        "        opt.step()\n"
        "print('numba' in sys.modules, "
        "'learntorch.backends.numba_cpu.optim_kernels' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr


def test_warmup_compiles_every_kernel_for_both_float_dtypes():
    warmed = learntorch.backends.warmup(all_kernels=True)
    module = sys.modules["learntorch.backends.numba_cpu.optim_kernels"]
    for name in KERNELS:
        assert f"optim_kernels.{name}" in warmed
        compiled = {str(sig[0].dtype) for sig in getattr(module, name).signatures}
        assert compiled == {"float32", "float64"}, name
