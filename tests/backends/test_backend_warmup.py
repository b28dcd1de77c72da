"""warmup() compiles the kernels ahead of time, and every kernel is cached on disk."""
import numba
import numpy as np
import pytest
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

import learntorch
from learntorch.backends.numba_cpu import NumbaBackend, loader

FAMILIES = ("activations", "arithmetic", "reduction", "softmax", "teaching_matmul",
            "pool_kernels", "im2col_kernels", "col2im_kernels", "cross_entropy", "optim_kernels", "bfloat16_casts",
            "bfloat16_layers")
# serial by design: a classifier's batch is far too small to repay waking a second thread,
# an optimizer update and a float32 <-> bfloat16 conversion are memory-bound (and must stay
# safe in forked processes), and a conversion is called on small arrays many times a step
SERIAL_FAMILIES = ("cross_entropy", "optim_kernels", "bfloat16_casts", "bfloat16_layers")
# the conversions exist for float32 only (the bfloat16 side is passed as uint16 bits)
FLOAT32_ONLY = ("bfloat16_casts",)
# compiled on the first bfloat16 layer (autocast), as the int8 kernels on the first int8 one
NOT_WARMED = ("bfloat16_layers",)


def dispatchers():
    """Every compiled function in the kernel modules, by 'family.name'."""
    found = {}
    for family in FAMILIES:
        module = loader.kernels(family)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher):
                found[f"{family}.{name}"] = obj
    return found


def test_every_kernel_is_cached_on_disk():
    """cache=True everywhere: compile once per machine, not once per Python process."""
    found = dispatchers()
    assert len(found) >= 20
    not_cached = [name for name, d in found.items() if not isinstance(d._cache, FunctionCache)]
    assert not_cached == []


def test_main_loops_are_parallel():
    found = dispatchers()
    serial = sorted(name for name, d in found.items()
                    if not d.targetoptions.get("parallel") and not name.split(".")[1].startswith("_")
                    and name.split(".")[0] not in SERIAL_FAMILIES)
    assert serial == []


def float_types(dispatcher):
    return {str(arg.dtype) for sig in dispatcher.signatures for arg in sig
            if isinstance(arg, numba.types.Array)}


def test_warmup_compiles_every_kernel_for_float32_and_float64_when_asked():
    warmed = learntorch.backends.warmup(all_kernels=True)
    found = dispatchers()
    hot = {name for name in found if not name.startswith("teaching_matmul.")
           and not name.split(".")[1].startswith("_") and name.split(".")[0] not in NOT_WARMED}
    assert set(warmed) == hot
    for name in hot:
        wanted = {"float32", "uint16"} if name.split(".")[0] in FLOAT32_ONLY else \
            {"float32", "float64"}
        assert wanted <= float_types(found[name]), name


def test_warmup_by_default_compiles_the_kernels_the_active_backend_uses():
    layers = ["col2im_kernels.col2im", "cross_entropy.cross_entropy_rows",
              "cross_entropy.cross_entropy_rows_backward", "optim_kernels.adagrad",
              "optim_kernels.adam", "optim_kernels.rmsprop", "optim_kernels.sgd",
              "pool_kernels.max_pool2d_2x2_forward", "pool_kernels.max_pool2d_backward",
              "pool_kernels.max_pool2d_forward"]
    mine = NumbaBackend(min_sizes={op: None for op in NumbaBackend.min_sizes} | {"gelu": 10})
    with learntorch.backends.use(mine):
        assert learntorch.backends.warmup() == ["activations.gelu"] + layers
    with learntorch.backends.use("numpy"):  # not a Numba backend: the defaults' kernels
        default = learntorch.backends.warmup()
    enabled = [op for op, size in NumbaBackend.min_sizes.items() if size is not None]
    assert len(default) == len(enabled) + len(layers)
    assert "activations.relu" in default and "activations.tanh" not in default


def test_warmup_accepts_learntorch_dtypes_and_rejects_dtypes_without_kernels():
    assert "activations.relu" in learntorch.backends.warmup(dtypes=(learntorch.float32,))
    with pytest.raises(TypeError, match=r"float32 and float64, not float16"):
        learntorch.backends.warmup(dtypes=(np.float16,))
