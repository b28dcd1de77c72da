"""``learntorch.cuda``: the GPU device, as ``torch.cuda``.

Tensors with ``device='cuda'`` keep their data in GPU memory (a
``learntorch.backends.cuda.CudaArray``) and every operation on them runs as a
numba-cuda kernel.  Without a GPU, Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1`` set before Python starts) runs the same kernels
on the CPU, thread by thread: slow, but every line of kernel code runs, which
is how the tests check the CUDA backend on any machine.

Memory comes from a caching allocator (``backends/cuda/allocator.py``):
``memory_allocated()`` counts the bytes held by live tensors,
``memory_reserved()`` adds the freed blocks kept for reuse, and
``empty_cache()`` hands those back to the driver.
"""
from ._device import CPU as _CPU, device as _device_type
from .autograd.function import Function as _Function


def is_available():
    """True when cuda tensors can be made: a GPU with numba-cuda, or the CUDA simulator."""
    from .backends.cuda.driver import available
    return available()


def device_count():
    return 1 if is_available() else 0


def current_device():
    _require()
    return 0


def get_device_name(device=None):
    from .backends.cuda.driver import numba_cuda, simulated
    _require()
    if simulated():
        return "Numba CUDA simulator"
    name = numba_cuda().get_current_device().name
    return name.decode() if isinstance(name, bytes) else name


def synchronize(device=None):
    """Wait until every kernel launched so far has finished."""
    if is_available():
        from .backends.cuda.driver import numba_cuda
        numba_cuda().synchronize()


def manual_seed(seed):
    """Seed the GPU's random number generator (``backends/cuda/random.py``)."""
    from .backends.cuda import random
    random.manual_seed(seed)


manual_seed_all = manual_seed


def memory_allocated(device=None):
    """Bytes of device memory held by live tensors (rounded up to the allocator's blocks)."""
    return _allocator().allocated_bytes if _loaded() else 0


def max_memory_allocated(device=None):
    return _allocator().peak_allocated_bytes if _loaded() else 0


def memory_reserved(device=None):
    """Bytes the caching allocator holds: live tensors plus freed blocks kept for reuse."""
    return _allocator().reserved_bytes if _loaded() else 0


def empty_cache():
    """Give the freed blocks the allocator keeps back to the driver."""
    if _loaded():
        _allocator().empty_cache()


def _loaded():
    import sys
    return "learntorch.backends.cuda.allocator" in sys.modules


def _allocator():
    from .backends.cuda.allocator import allocator
    return allocator


def _require():
    if not is_available():
        raise RuntimeError(
            "cannot make a tensor on cuda: CUDA is not available here (no NVIDIA driver was "
            "found, and Numba's CUDA simulator is off). Keep tensors on 'cpu' or check "
            "learntorch.cuda.is_available() before choosing the device; to simulate a GPU on "
            "the CPU, start Python with NUMBA_ENABLE_CUDASIM=1.")


# ---------------------------------------------------------------- moving tensors
class _ToCopy(_Function):
    """A copy to another device; its gradient is the incoming gradient copied back."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, device):
        ctx.source = x.device
        return x._wrap(_copy_data(x._data, device))

    @staticmethod
    def backward(ctx, grad):
        return _ToCopy.apply(grad, ctx.source), None


def _copy_data(array, device):
    if device.type == "cpu":
        return array.copy_to_host()
    from .backends.cuda.array import CudaArray
    if isinstance(array, CudaArray):
        return array.copy()
    return CudaArray.from_host(array)


def _move(tensor, device):
    """``tensor`` on ``device`` (a copy, recorded by autograd), as ``tensor.to(device)``."""
    if device.type == "cuda":
        _require()
        if (device.index or 0) != 0:
            raise RuntimeError(f"CUDA error: invalid device ordinal (learntorch has one GPU, "
                               f"cuda:0; {device} does not exist)")
    if tensor.device == device:
        return tensor
    return _ToCopy.apply(tensor, _CPU if device.type == "cpu" else _device_type("cuda", 0))

