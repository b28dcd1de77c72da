"""The oracle of the CUDA tests: the same program on the cpu.

The cpu engine is itself tested against torch and finite differences, so a
cuda result is right when it matches the cpu result for the same inputs --
forward values and the gradient of every input.
"""
import numpy as np

import learntorch


def same(cuda_tensor, cpu_tensor, rtol=1e-5, atol=1e-6):
    """Assert that a cuda result equals the cpu one: values, shape, dtype and device."""
    assert cuda_tensor.device == learntorch.device("cuda", 0), cuda_tensor.device
    assert cpu_tensor.device == learntorch.device("cpu"), cpu_tensor.device
    assert cuda_tensor.dtype is cpu_tensor.dtype, (cuda_tensor.dtype, cpu_tensor.dtype)
    assert tuple(cuda_tensor.shape) == tuple(cpu_tensor.shape)
    np.testing.assert_allclose(cuda_tensor.detach().cpu().numpy(), cpu_tensor.detach().numpy(),
                               rtol=rtol, atol=atol)


def leaves(arrays, device):
    """Tensors on ``device`` from numpy arrays; floating ones require grad."""
    out = []
    for a in arrays:
        t = learntorch.tensor(a, device=device)
        if t.is_floating_point():
            t = t.detach().requires_grad_()
        out.append(t)
    return out


def check(fn, *arrays, rtol=1e-5, atol=1e-6, grad=True):
    """Run ``fn`` on cpu and cuda leaves made from ``arrays``; compare outputs and gradients.

    The backward pass starts from a fixed random upstream gradient (not ones),
    so that a gradient mixed up between elements would show.
    """
    results = {}
    for device in ("cpu", "cuda"):
        inputs = leaves(arrays, device)
        out = fn(*inputs)
        grads = None
        if grad and out.requires_grad:
            upstream = np.random.default_rng(1).standard_normal(tuple(out.shape))
            out.backward(learntorch.tensor(upstream, dtype=out.dtype, device=device))
            grads = [t.grad for t in inputs if t.requires_grad]
        results[device] = (out, grads)
    (cuda_out, cuda_grads), (cpu_out, cpu_grads) = results["cuda"], results["cpu"]
    same(cuda_out, cpu_out, rtol, atol)
    if grad:
        assert (cuda_grads is None) == (cpu_grads is None)
        for g_cuda, g_cpu in zip(cuda_grads or [], cpu_grads or []):
            assert (g_cuda is None) == (g_cpu is None)
            if g_cpu is not None:
                same(g_cuda, g_cpu, rtol, atol)
    return cuda_out


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)
