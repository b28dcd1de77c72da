"""Measure this machine's tuning table and write it to learntorch's ``tuning.json``.

    python -m benchmarks.calibrate                     # measure everything, write tuning.json
    python -m benchmarks.calibrate relu softmax        # only these keys (the others are kept)
    python -m benchmarks.calibrate --dry-run           # print, write nothing

The Numba backend chooses, call by call, between numpy and a compiled kernel, and between
one thread and all of them.  Those choices compare a size with a threshold that depends on
the machine (cores, caches, SIMD width, how long a sleeping thread takes to wake), so
learntorch keeps the thresholds in a data file (``learntorch/backends/numba_cpu/tuning.json``,
read by ``tuning.py``) and this script measures them:

* ``min_sizes[op]`` -- for each size 10^2 .. 10^7 the numpy reference and the kernel (with
  every kernel forced on, so the Python dispatch is included) are timed, alternating; the
  threshold is the smallest size from which the kernel was 10% faster at every larger size,
  and never below 1,000 elements (``None``: it never reliably was, numpy keeps the op);
* ``ns_per_element[op]`` -- the kernel's time per float32 element on one thread, at 2^20
  elements: what ``loader.use_threads`` multiplies by a call's size to predict its length;
* ``parallel_min_ns`` -- the one-thread time from which running on every thread pays: the
  kernel calls of a range of sizes timed on one thread and on all of them;
* ``layer_min_sizes[...]`` and ``layer_ns_per_element[...]`` -- the same for the layers'
  kernels and the fused optimizer updates: not measured here yet (their calls need layer
  geometries and optimizer states); the script keeps them as the file has them.

Timing on a shared machine is noisy: each figure is the *minimum* over many short repeats,
which filters out the moments when another process had the cores.  Run it on a quiet
machine; the file records the machine, the versions and the date.
"""
import argparse
import datetime
import json
import os
import time

import numpy as np

from learntorch import bfloat16
from learntorch.backends.numba_cpu import NumbaBackend, loader, tuning
from learntorch.backends.reference import NumpyBackend

from .machine import describe

BFLOAT16 = bfloat16.np  # (the numpy type: imports ml_dtypes, which the cast cases measure)

SIZES = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7)
#: a finer grid where the crossover falls among the sizes of a small model's layers (a
#: 64 x 64 weight is 4096 elements): autocast converts every weight, every step
FINE_SIZES = {op: (10**2, 10**3, 2 * 10**3, 4 * 10**3, 10**4, 10**5, 10**6, 10**7)
              for op in ("to_bfloat16", "from_bfloat16")}
ROW = 100  # every op sees the 2-D shape (size // ROW, ROW): the softmax family works on rows

# min_sizes key -> how to call the primitive on (backend, x, g)
CALLS = {
    "relu": lambda b, x, g: b.relu(x),
    "relu_backward": lambda b, x, g: b.relu_backward(x, g),
    "tanh": lambda b, x, g: b.tanh(x),
    "tanh_backward": lambda b, x, g: b.tanh_backward(x, g),
    "sigmoid": lambda b, x, g: b.sigmoid(x),
    "sigmoid_backward": lambda b, x, g: b.sigmoid_backward(x, g),
    "gelu": lambda b, x, g: b.gelu(x),
    "gelu_backward": lambda b, x, g: b.gelu_backward(x, g),
    "silu": lambda b, x, g: b.silu(x),
    "silu_backward": lambda b, x, g: b.silu_backward(x, g),
    "add": lambda b, x, g: b.add(x, g),
    "sub": lambda b, x, g: b.sub(x, g),
    "mul": lambda b, x, g: b.mul(x, g),
    "div": lambda b, x, g: b.div(x, g),
    "sum": lambda b, x, g: b.sum(x, (1,), False),
    "softmax": lambda b, x, g: b.softmax(x, 1),
    "log_softmax": lambda b, x, g: b.log_softmax(x, 1),
    "softmax_backward": lambda b, x, g: b.softmax_backward(x, g, 1),
    "log_softmax_backward": lambda b, x, g: b.log_softmax_backward(x, g, 1),
    "logsumexp": lambda b, x, g: b.logsumexp(x, (1,), False),
    # autocast's conversions (``_inputs`` gives "from_bfloat16" a bfloat16 x)
    "to_bfloat16": lambda b, x, g: b.cast(x, BFLOAT16),
    "from_bfloat16": lambda b, x, g: b.cast(x, np.dtype(np.float32)),
}


def best_time(fn, budget=0.3, repeats=30):
    """Minimum seconds per call over ``repeats`` short batches (about ``budget`` s in all)."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(budget / repeats / once))
    best = float("inf")
    for _ in range(repeats if once * number * repeats < 5 * budget else 3):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _inputs(op, size, dtype, row=ROW):
    rng = np.random.default_rng(0)
    shape = (max(1, size // row), min(size, row))
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    if op == "from_bfloat16":
        x = x.astype(BFLOAT16)
    if op.endswith("softmax_backward"):  # y must be a (log-)softmax output
        y = NumpyBackend().softmax(x, 1)
        x = np.log(y) if op.startswith("log") else y
    return x, g


def crossover(op, sizes=SIZES, dtype=np.float32):
    """Rows of (size, numpy seconds, kernel seconds) for primitive ``op``."""
    numpy_backend, numba_backend = NumpyBackend(), NumbaBackend(min_size=0)
    call = CALLS[op]
    rows = []
    for size in sizes:
        x, g = _inputs(op, size, dtype)
        call(numba_backend, x, g)  # compile or load from the cache, outside the timing
        rows.append((size, best_time(lambda: call(numpy_backend, x, g)),
                     best_time(lambda: call(numba_backend, x, g))))
    return rows


#: no kernel below this size, however it times: a tensor this small must not make a program
#: import Numba, load or compile a kernel, or start a thread (costs a warm timing never sees)
SMALLEST_MIN_SIZE = 1_000


def threshold(rows, margin=1.1):
    """Smallest size from which the kernel was ``margin`` times faster at every larger size
    (at least ``SMALLEST_MIN_SIZE``)."""
    found = None
    for size, t_numpy, t_kernel in reversed(rows):
        if t_numpy < margin * t_kernel:
            break
        found = size
    return None if found is None else max(found, SMALLEST_MIN_SIZE)


def _on_threads(n, fn):
    loader.use_threads(float("inf") if n > 1 else 0)  # all threads, or one
    return best_time(fn)


def ns_per_element(op, size=1 << 20):
    """The kernel's one-thread time per float32 element (ns) at ``size`` elements."""
    backend = NumbaBackend(min_size=0)
    backend._use_threads = lambda *_: None  # keep the thread count this script sets
    x, g = _inputs(op, size, np.float32, row=1024)
    CALLS[op](backend, x, g)
    return _on_threads(1, lambda: CALLS[op](backend, x, g)) * 1e9 / size


def parallel_min_ns(op="softmax", sizes=(2**12, 2**14, 2**16, 2**18, 2**20)):
    """The one-thread time (ns) from which every thread is faster than one, for ``op``."""
    backend = NumbaBackend(min_size=0)
    backend._use_threads = lambda *_: None
    found = None
    for size in reversed(sizes):
        x, g = _inputs(op, size, np.float32, row=1024)
        CALLS[op](backend, x, g)
        one = _on_threads(1, lambda: CALLS[op](backend, x, g))
        every = _on_threads(2, lambda: CALLS[op](backend, x, g))
        if every >= one:
            break
        found = one * 1e9
    return None if found is None else int(round(found, -3))


def calibrate(keys=None, log=print):
    """The measured table (only ``keys`` measured; the others as ``tuning.json`` has them)."""
    table = tuning.load()
    for op in CALLS:
        if keys and op not in keys:
            continue
        rows = crossover(op, FINE_SIZES.get(op, SIZES))
        table["min_sizes"][op] = threshold(rows)
        table["ns_per_element"][op] = round(ns_per_element(op), 3)
        log(f"{op:22s} min_size {table['min_sizes'][op]!s:>8s}   "
            f"{table['ns_per_element'][op]:6.2f} ns/element on one thread   "
            + "  ".join(f"{s:.0e}: {n / k:4.1f}x" for s, n, k in rows))
    if not keys or "parallel_min_ns" in keys:
        measured = parallel_min_ns()
        table["parallel_min_ns"] = measured if measured is not None else 10**12
        log(f"parallel_min_ns        {table['parallel_min_ns']}")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("keys", nargs="*", help="what to measure (default: everything)")
    parser.add_argument("--dry-run", action="store_true", help="print, write nothing")
    args = parser.parse_args(argv)
    table = calibrate(set(args.keys) or None)
    machine = describe()
    table = {"machine": {"measured_on": f"{machine['cpu']}, {machine['usable_cores']} usable "
                                        f"cores, {machine['memory_gib']} GiB, {machine['os']}",
                         "python": machine["python"], "numpy": machine["numpy"],
                         "numba": machine["numba"], "date": datetime.date.today().isoformat(),
                         "how": "python -m benchmarks.calibrate"}, **table}
    if args.dry_run:
        print(json.dumps(table, indent=1))
        return 0
    with open(tuning.PATH, "w", encoding="utf-8") as f:
        f.write(json.dumps(table, indent=1) + "\n")
    print(f"wrote {os.path.relpath(tuning.PATH)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
