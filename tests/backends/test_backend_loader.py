"""The kernel loader: thread-count and wait-policy defaults that respect the user's settings."""
import os

import pytest

from learntorch.backends.numba_cpu.loader import usable_cpus

from test_backend_dispatch import run_python


def visible_cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root)


@pytest.mark.parametrize("files, cap", [
    ({"cpu.max": "150000 100000\n"}, 2),                    # v2: 1.5 CPUs of time -> 2 threads
    ({"cpu.max": "50000 100000\n"}, 1),
    ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),  # v1
], ids=["v2-1.5cpus", "v2-half-cpu", "v1-3cpus"])
def test_a_cgroup_cpu_quota_caps_the_thread_count(tmp_path, files, cap):
    assert usable_cpus(write(tmp_path, files)) == min(visible_cpus(), cap)


@pytest.mark.parametrize("files", [
    {"cpu.max": "max 100000\n"},
    {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
    {},
], ids=["v2-unlimited", "v1-unlimited", "no-cgroup"])
def test_without_a_quota_every_visible_cpu_is_used(tmp_path, files):
    assert usable_cpus(write(tmp_path, files)) == visible_cpus()


KERNEL_THEN_REPORT = """
    import os
    import numpy as np
    from learntorch.backends.numba_cpu import NumbaBackend
    NumbaBackend(min_size=0).relu(np.ones(5, np.float32))
    import numba
    print(numba.get_num_threads(), os.environ["NUMBA_NUM_THREADS"], os.environ["OMP_WAIT_POLICY"])
"""


def test_loading_kernels_sets_thread_defaults_only_where_the_user_set_none():
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_NUM_THREADS", "OMP_WAIT_POLICY")}
    out = run_python(KERNEL_THEN_REPORT, _replace_env=env)
    assert out.split() == [str(usable_cpus())] * 2 + ["PASSIVE"]
    out = run_python(KERNEL_THEN_REPORT, NUMBA_NUM_THREADS="1", OMP_WAIT_POLICY="ACTIVE")
    assert out.split() == ["1", "1", "ACTIVE"]


PARALLEL_KERNEL_THEN_THREADS = """
    import ctypes, ctypes.util, sys
    if sys.argv[-1] == "openmp-first":  # another library (torch, say) loaded OpenMP already
        ctypes.CDLL(ctypes.util.find_library("gomp"), mode=ctypes.RTLD_GLOBAL)
    import numpy as np
    from learntorch.backends import NumbaBackend
    NumbaBackend(min_size=0).relu(np.ones(100_000, np.float32))  # a parallel kernel
    import numba
    print(numba.get_num_threads())
"""


def test_an_openmp_runtime_loaded_before_the_kernels_makes_them_run_on_one_thread():
    import ctypes.util
    if ctypes.util.find_library("gomp") is None:
        pytest.skip("no GNU OpenMP library on this machine to load first")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    first = PARALLEL_KERNEL_THEN_THREADS.replace("sys.argv[-1]", "'openmp-first'")
    assert run_python(first, _replace_env=env).split() == ["1"]
    alone = run_python(PARALLEL_KERNEL_THEN_THREADS, _replace_env=env)
    assert alone.split() == [str(usable_cpus())]
    assert run_python(first, NUMBA_NUM_THREADS="2").split() == ["2"]  # the user's choice wins


def test_openmp_runtime_loaded_reads_the_process_memory_map(tmp_path):
    from learntorch.backends.numba_cpu.loader import openmp_runtime_loaded
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libm.so.6\n")
    assert not openmp_runtime_loaded(str(maps))
    maps.write_text("7f00-7f01 r-xp 0 08:01 1 /site-packages/torch/lib/libgomp-a34b3233.so.1\n")
    assert openmp_runtime_loaded(str(maps))
    assert not openmp_runtime_loaded(str(tmp_path / "missing"))
