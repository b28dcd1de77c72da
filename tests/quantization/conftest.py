"""Shared pieces of the quantization tests: a Numba backend whose int8 kernels serve even
the tiny arrays of a test, and torch with its deprecation warnings silenced."""
import warnings

import pytest

import learntorch
from learntorch.backends import NumbaBackend

INT8_KERNELS = ("quantized_matmul", "quantize_per_tensor", "dequantize_matmul")


def forced_numba():
    """A Numba backend that runs every kernel, the int8 ones included, on any size."""
    backend = NumbaBackend(min_size=0)
    backend.layer_min_sizes = dict(backend.layer_min_sizes, **dict.fromkeys(INT8_KERNELS, 0))
    return backend


@pytest.fixture(params=["numba", "numpy"])
def quantized_backend(request):
    """Run a test with the int8 kernels and with the numpy reference."""
    chosen = forced_numba() if request.param == "numba" else "numpy"
    with learntorch.backends.use(chosen) as b:
        yield b


@pytest.fixture(autouse=True)
def _quiet_torch_deprecations():
    # torch 2.13 warns on every quantized tensor it makes (the dtypes are deprecated in
    # favour of torchao); the tests compare values, not warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*deprecated.*")
        warnings.filterwarnings("ignore", message=".*reduce_range will be deprecated.*")
        yield
