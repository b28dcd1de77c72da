"""Numba's threading layer next to PyTorch: chosen by the engine, in either import order.

When PyTorch is imported first its GNU OpenMP runtime sits in the process's global symbol
scope, and Numba's OpenMP layer would run our kernels on it -- with torch's spinning idle
workers.  The loader (``numba_cpu/loader.py``) then takes TBB's pool, or runs kernels on one
thread; with no foreign OpenMP runtime it keeps its own, waiting passively.  These tests
check the decision and that the kernels' results do not depend on it (no timing here: the
figures are in the loader's docstring and the benchmark suite).
"""
import os

import pytest

from test_backend_dispatch import run_python

pytest.importorskip("torch")  # the other library whose runtime we must not share

# a kernel served by every layer: max pooling of 32x16 planes of 56x56, long enough on one
# thread (~0.7 ms) to use every thread when the choice allows it; its values and indices
# must be the numpy reference's
POOL_AND_REPORT = """
    import json, sys
    import numpy as np
    {before}
    import learntorch
    from learntorch import backends
    from learntorch.backends.numba_cpu import loader
    x = np.random.default_rng(0).standard_normal((32, 16, 56, 56)).astype(np.float32)
    x[0, 0, :2, :2] = np.nan
    def pool(name):
        with backends.use(name):
            out, idx = learntorch.nn.functional.max_pool2d(
                learntorch.from_numpy(x), 2, return_indices=True)
        return out.numpy(), idx.numpy()
    same = [bool(np.array_equal(a, b, equal_nan=True)) for a, b in zip(pool("numba"), pool("numpy"))]
    {after}
    same += [bool(np.array_equal(a, b, equal_nan=True)) for a, b in zip(pool("numba"), pool("numpy"))]
    import numba
    print(json.dumps(dict(choice=loader.threading_choice(), layer=numba.threading_layer(),
                          threads=numba.get_num_threads(), same=same,
                          foreign=loader.foreign_openmp_loaded())))
"""


def _run(before="", after=""):
    import json
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    env["NUMBA_NUM_THREADS"] = "2"  # (so that a long kernel has threads to share)
    out = run_python(POOL_AND_REPORT.format(before=before, after=after), _replace_env=env)
    return json.loads(out.strip().splitlines()[-1])


def test_torch_imported_first_keeps_the_kernels_off_its_openmp_runtime():
    report = _run(before="import torch; torch.ones(4).sum()")
    choice = report["choice"]
    assert report["foreign"], "torch's OpenMP runtime should be in the global scope"
    assert choice["layer"] == report["layer"]             # the recorded choice is the one in use
    assert choice["layer"] == "tbb" or choice["serial"]   # never torch's spinning pool, in parallel
    if choice["serial"]:
        assert report["threads"] == 1
    assert "OpenMP runtime is loaded" in choice["reason"]
    assert report["same"] == [True] * 4


def test_learntorch_first_keeps_its_own_passive_openmp_and_torch_after_changes_nothing():
    report = _run(after="import torch; torch.ones(4).sum()")
    assert report["choice"] == dict(layer="omp", serial=False, reason=(
        "no other OpenMP runtime in the process: ours, waiting passively"))
    assert report["layer"] == "omp"
    assert report["threads"] == 2                           # the long kernel still shares its work
    assert report["same"] == [True] * 4                     # before and after torch arrived


def test_a_layer_the_user_names_is_obeyed():
    out = run_python("""
        import numpy as np
        import torch
        from learntorch.backends.numba_cpu import NumbaBackend, loader
        NumbaBackend(min_size=0).relu(np.ones(5, np.float32))
        import numba
        print(loader.threading_choice()["layer"], numba.config.THREADING_LAYER)
    """, NUMBA_THREADING_LAYER="workqueue")
    assert out.split() == ["workqueue", "workqueue"]


def test_threads_asked_for_before_any_kernel_module_loads_still_get_the_chosen_layer():
    """Setting Numba's thread count starts its threads: ``use_threads`` first chooses the
    layer, or a layer that asks for threads before loading its kernels gets Numba's default
    (torch's OpenMP runtime)."""
    out = run_python("""
        import torch
        torch.ones(4).sum()
        from learntorch.backends.numba_cpu import loader
        loader.use_threads(10 ** 9)   # a long call: every thread, before any kernel module
        import numba
        print(loader.threading_choice()["layer"], numba.threading_layer(), loader.threading_choice()["reason"])
    """, _replace_env={k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"})
    layer, running, reason = out.split(None, 2)
    assert layer == running and "OpenMP runtime is loaded" in reason
