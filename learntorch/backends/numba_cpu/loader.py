"""Import kernel modules on first need, and know when kernels must not run.

``import numba`` takes about half a second and compiling (or loading a cached)
kernel more, so nothing here imports a kernel module until an array is big
enough to use it: ``import learntorch`` and small operations never pay for
Numba at all.

The parallel kernels run on a thread pool.  With the GNU OpenMP runtime (what
Numba picks on most Linux machines) a process that forks *after* starting that
pool must not use it again: the child is killed with "fork() called from a
process already using GNU OpenMP".  Forked children (``multiprocessing`` with
the fork start method, e.g. data-loading workers) therefore fall back to numpy,
which gives the same values.

Idle threads should sleep, not spin.  Between two kernels the program usually
runs numpy (and BLAS, with its own threads) for a while; OpenMP's default is to
keep idle workers spinning, stealing a core from that work, and on a busy
machine a kernel then waited for its worker for milliseconds.  Measured on a
shared 2-core machine, a 100-element kernel called 2 ms after the previous
one: median 24 ms with the default policy, 45 us with
``OMP_WAIT_POLICY=PASSIVE``.  So before the first kernel module loads (and
with it the OpenMP runtime) we set ``OMP_WAIT_POLICY=PASSIVE`` -- unless you
set it yourself.

One thread per CPU we may actually use.  Numba starts one thread per CPU it
can see, but a container (Binder, Docker with ``--cpus``, Kubernetes) often
sees all of the host's cores while its CPU *time* is capped by a cgroup quota.
Forty threads sharing two CPUs' worth of quota get throttled in turn, and a
parallel loop waits for the slowest one.  So ``NUMBA_NUM_THREADS`` defaults to
the smaller of the visible CPUs and the quota -- again, unless you set it.

Our own thread pool, never another library's OpenMP.  Numba's default layer, GNU
OpenMP, resolves its ``GOMP_*`` calls in the process's global symbol scope.  PyTorch
puts *its* libgomp there (``import torch`` loads its global dependencies with
``RTLD_GLOBAL``), initialised before we could ask for passive waiting: when torch is
imported first, our parallel kernels run on torch's runtime, whose idle workers spin.
Measured on the 2-core machine: after one max-pooling kernel the process burnt ~5 ms of
CPU during a 50 ms sleep with torch imported first, ~0.05 ms without (and the CNN
training step took 4.4x PyTorch's time in one process instead of 1.3-2x).  So before
the first kernel loads, ``choose_threading_layer`` picks the layer once and records
why (``threading_choice()``):

* nobody else's OpenMP is loaded -> ``omp``, with passive waiting (what we set);
* another OpenMP runtime is in the global scope already -> ``tbb`` when the TBB library
  can be loaded (its own pool: thread-safe and fork-safe; the ``tbb`` package puts
  ``libtbb.so.12`` in the environment's ``lib/``, where the loader does not look, so we
  load it first), else ``omp`` with every kernel on one thread: a team of one wakes no
  worker, so nothing spins.  (Numba's ``workqueue`` layer would avoid OpenMP too, but
  it aborts the process when two threads launch kernels at once.)

``NUMBA_THREADING_LAYER`` set by you is obeyed.

What the ``tbb`` choice still costs next to torch.  torch's workers keep spinning for
milliseconds after each of *its* parallel calls (its runtime was started with the
default wait policy), and on a 2-core machine a spinning worker holds one of the two
cores.  A kernel called right after a torch op then runs as if on one core, whatever
its thread count: a 1024 x 1024 softmax took 0.52-0.58 ms right after torch's softmax,
0.27 ms on its own and 0.51 ms on one thread (torch's own: 0.31 ms).  On ``omp`` the
same softmax shares torch's spinning team and takes ~0.3 ms -- but the CNN training
step, whose kernels alternate with numpy's BLAS threads, took 16 ms there against 3.7
ms on ``tbb``.  Only code that calls torch and learntorch in turn, op by op, meets the
first cost (``benchmarks/before_after.py`` measures exactly that); setting
``OMP_WAIT_POLICY=PASSIVE`` before ``import torch`` makes torch's workers sleep and
removes it (the softmax pair then measured 0.88-0.99x torch's time).

One thread unless the work is long.  Waking the sleeping workers for a
parallel loop costs tens of microseconds (on the 2-core machine of
BENCHMARKS.md: 8-55 us per call, about 50 us typically), while a relu over
32,768 float32 takes 2.5 us on one thread.  So every kernel call first says
how long it would take on one thread (``use_threads``), and only calls
expected to run for ``PARALLEL_MIN_NS`` or more use every thread: softmax of
1024 x 1024 (0.3 ms on one thread, 0.22 ms on two) and max pooling of
256 x 28 x 28 planes (160 us, 112 us) do, relu of 10^6 elements (64 us on one
thread, 100 us on two) does not.
"""
import ctypes
import importlib
import math
import os
import sys
import threading

from . import tuning

_loaded = {}            # family name -> kernel module, filled on first use
_forked_after_use = False


def kernels(family):
    """The kernel module ``family`` ('activations', 'softmax', ...), imported once."""
    module = _loaded.get(family)
    if module is None:
        # both are read once, when numba and the OpenMP runtime load
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("NUMBA_NUM_THREADS", str(usable_cpus()))
        choose_threading_layer()
        module = importlib.import_module(f"{__package__}.{family}")
        _loaded[family] = module
    return module


def usable_cpus(cgroup_root="/sys/fs/cgroup"):
    """CPUs this process may use: the visible ones, capped by a cgroup CPU quota if any."""
    visible = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    visible = visible or os.cpu_count() or 1
    for quota_file, period_file in (("cpu.max", None),                      # cgroup v2
                                    ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):  # v1
        try:
            with open(os.path.join(cgroup_root, quota_file)) as f:
                fields = f.read().split()
            if period_file is not None:
                with open(os.path.join(cgroup_root, period_file)) as f:
                    fields.append(f.read().strip())
            quota, period = fields[0], fields[1]
        except (OSError, IndexError):
            continue
        if quota not in ("max", "-1") and int(period) > 0:
            return max(1, min(visible, math.ceil(int(quota) / int(period))))
        return visible
    return visible


_choice = None  # the threading layer chosen, and why (``threading_choice()``)


def threading_choice():
    """The threading layer the kernels use and why: ``{"layer", "serial", "reason"}``
    (``None`` until the first kernel loads; ``numba.threading_layer()`` agrees once a
    parallel kernel has run).  ``serial``: every kernel runs on one thread."""
    return None if _choice is None else dict(_choice)


def choose_threading_layer():
    """Pick Numba's threading layer before its first parallel kernel (see the module
    docstring); once per process."""
    global _choice
    if _choice is not None:
        return _choice
    import numba
    from numba.np.ufunc import parallel
    if parallel._is_initialized:  # someone ran a parallel Numba function before us
        _choice = dict(layer=parallel.threading_layer(), serial=False,
                       reason="Numba's threads were started before learntorch's kernels")
    elif os.environ.get("NUMBA_THREADING_LAYER"):
        _choice = dict(layer=numba.config.THREADING_LAYER, serial=False,
                       reason="NUMBA_THREADING_LAYER is set")
    elif not foreign_openmp_loaded():
        _choice = dict(layer="omp", serial=False,
                       reason="no other OpenMP runtime in the process: ours, waiting passively")
    elif _load_tbb():
        _choice = dict(layer="tbb", serial=False,
                       reason="another library's OpenMP runtime is loaded (e.g. PyTorch's): "
                              "TBB's own pool instead")
    else:
        _choice = dict(layer="omp", serial=True,
                       reason="another library's OpenMP runtime is loaded (e.g. PyTorch's) "
                              "and TBB is not available: one thread per kernel")
    numba.config.THREADING_LAYER = _choice["layer"]
    return _choice


def foreign_openmp_loaded():
    """True when an OpenMP runtime's entry points are in the global symbol scope already:
    Numba's OpenMP layer would then run on that runtime, configured by someone else."""
    try:
        return hasattr(ctypes.CDLL(None), "GOMP_parallel")
    except OSError:  # no dlopen(NULL) here (not Linux/macOS): nothing to collide with
        return False


def _load_tbb():
    """Load the TBB library for Numba's ``tbb`` layer (True if it can be used)."""
    names = ["libtbb.so.12", os.path.join(sys.prefix, "lib", "libtbb.so.12")]
    for name in names:
        try:
            ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        try:
            from numba.np.ufunc import parallel
            parallel._check_tbb_version_compatible()
            from numba.np.ufunc import tbbpool  # noqa: F401  (the layer itself loads)
        except ImportError:
            return False
        return True
    return False


#: a kernel call expected to take at least this long on one thread uses every thread
#: (measured per machine: tuning.json's ``parallel_min_ns``)
PARALLEL_MIN_NS = tuning.load()["parallel_min_ns"]

_thread_count = threading.local()  # numba's thread count is per calling thread too
_thread_cap = None  # learntorch.set_num_threads(n): at most n threads per kernel


def set_thread_cap(n):
    """At most ``n`` threads per kernel call from now on (``None``: all usable CPUs)."""
    global _thread_cap
    _thread_cap = n
    _thread_count.value = None  # the next kernel call sets its count again


def thread_cap():
    """The most threads a kernel call may use."""
    return _thread_cap if _thread_cap is not None else usable_cpus()


def use_threads(single_thread_ns):
    """Set the threads of the next kernel call from its expected one-thread time (ns).

    Call it right before a kernel; it costs a few attribute look-ups when nothing
    changes.  Setting Numba's thread count starts its threads, so the threading layer is
    chosen here first if no kernel module has been loaded yet (a layer asking for threads
    before it loads its kernels would otherwise get Numba's default layer, torch's
    spinning OpenMP when torch is loaded).
    """
    import numba
    if _choice is None:
        choose_threading_layer()
    wanted = numba.config.NUMBA_NUM_THREADS if single_thread_ns >= PARALLEL_MIN_NS \
        and not (_choice and _choice["serial"]) else 1
    if _thread_cap is not None:
        wanted = max(1, min(wanted, _thread_cap))
    if getattr(_thread_count, "value", None) != wanted:
        numba.set_num_threads(wanted)
        _thread_count.value = wanted


def kernels_allowed():
    """False in a process forked after this one had used kernels (see module docstring)."""
    return not _forked_after_use


def _after_fork_in_child():
    global _forked_after_use
    if _loaded:
        _forked_after_use = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
