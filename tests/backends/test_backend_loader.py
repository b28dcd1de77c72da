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
    print(numba.config.NUMBA_NUM_THREADS, os.environ["NUMBA_NUM_THREADS"],
          os.environ["OMP_WAIT_POLICY"])
"""

SHORT_AND_LONG_CALLS = """
    import numpy as np
    import numba
    from learntorch.backends.numba_cpu import NumbaBackend, loader
    backend = NumbaBackend(min_size=0)
    x = np.ones(1 << 16, np.float32)
    big = np.ones(1 << 18, np.float32)
    backend.relu(x)                       # ~5 us on one thread: not worth waking a worker
    short = numba.get_num_threads()
    backend.gelu(big)                     # ~270 us on one thread: shared
    long = numba.get_num_threads()
    backend.relu(x[:1000])
    print(short, long, numba.get_num_threads(), numba.config.NUMBA_NUM_THREADS,
          loader.PARALLEL_MIN_NS, x.size * backend.ns_per_element["relu"],
          big.size * backend.ns_per_element["gelu"])
"""


def test_only_kernel_calls_long_enough_to_repay_waking_threads_use_them():
    short, long, short_again, pool, limit, relu_ns, gelu_ns = run_python(
        SHORT_AND_LONG_CALLS, NUMBA_NUM_THREADS="2").split()
    assert (short, long, short_again, pool) == ("1", "2", "1", "2")
    # the two calls fall either side of the tuning table's threshold
    assert float(relu_ns) < int(limit) <= float(gelu_ns)


def test_loading_kernels_sets_thread_defaults_only_where_the_user_set_none():
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_NUM_THREADS", "OMP_WAIT_POLICY")}
    out = run_python(KERNEL_THEN_REPORT, _replace_env=env)
    assert out.split() == [str(usable_cpus())] * 2 + ["PASSIVE"]
    out = run_python(KERNEL_THEN_REPORT, NUMBA_NUM_THREADS="1", OMP_WAIT_POLICY="ACTIVE")
    assert out.split() == ["1", "1", "ACTIVE"]
