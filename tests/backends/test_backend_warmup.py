"""warmup() compiles the kernels ahead of time, and every kernel is cached on disk."""
import numba
import numpy as np
import pytest
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

import learntorch
from learntorch.backends.numba_cpu import loader

FAMILIES = ("activations", "arithmetic", "reduction", "softmax", "teaching_matmul")


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
                    if not d.targetoptions.get("parallel") and not name.split(".")[1].startswith("_"))
    assert serial == []


def test_warmup_compiles_every_hot_path_kernel_for_float32_and_float64():
    warmed = learntorch.backends.warmup()
    found = dispatchers()
    hot = {name for name in found if not name.startswith("teaching_matmul.")
           and not name.split(".")[1].startswith("_")}
    assert set(warmed) == hot
    for name in hot:
        float_types = {str(arg.dtype) for sig in found[name].signatures for arg in sig
                       if isinstance(arg, numba.types.Array)}
        assert {"float32", "float64"} <= float_types, name


def test_warmup_accepts_learntorch_dtypes_and_rejects_dtypes_without_kernels():
    assert "activations.relu" in learntorch.backends.warmup(dtypes=(learntorch.float32,))
    with pytest.raises(TypeError, match=r"float32 and float64, not float16"):
        learntorch.backends.warmup(dtypes=(np.float16,))
