"""Measure where each Numba kernel starts to beat numpy, on this machine.

    python -m learntorch.backends.numba_cpu.crossover            # every kernel, float32
    python -m learntorch.backends.numba_cpu.crossover relu sum --dtype float64
    python -m learntorch.backends.numba_cpu.crossover softmax --row 1024   # longer rows

For each primitive and each size (10^2 .. 10^7 elements) it times the numpy
reference backend and the Numba backend with every kernel forced on
(``NumbaBackend(min_size=0)``, so the Python dispatch is included), and prints
numpy's time, the kernel's time and the speedup.  The last column suggests a
threshold: the smallest size from which the kernel won at every larger size.
``backend.py`` records what this printed on the machine the defaults come from.

Timing on a shared machine is noisy: each figure is the *minimum* over many
short repeats, alternating numpy and kernel, which filters out the moments when
another process had the cores.
"""
import argparse
import time

import numpy as np

from ..reference import NumpyBackend
from .backend import NumbaBackend

SIZES = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7)
ROW = 100  # default row length (--row): every op sees the 2-D shape (size // ROW, ROW)

# primitive -> how to call it on (x, g, dim): the 2-D shape is used by every op
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
    "sum_all": lambda b, x, g: b.sum(x, (0, 1), False),  # x.sum(): the "sum" kernel too
    "softmax": lambda b, x, g: b.softmax(x, 1),
    "log_softmax": lambda b, x, g: b.log_softmax(x, 1),
    "softmax_backward": lambda b, x, g: b.softmax_backward(x, g, 1),
    "log_softmax_backward": lambda b, x, g: b.log_softmax_backward(x, g, 1),
    "logsumexp": lambda b, x, g: b.logsumexp(x, (1,), False),
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


def measure(op, sizes=SIZES, dtype=np.float32, row=ROW):
    """Rows of (size, numpy seconds, kernel seconds) for primitive ``op``.

    The arrays have shape (size // row, row): the softmax family works along the
    rows, and its kernels run faster per element on longer rows.
    """
    numpy_backend, numba_backend = NumpyBackend(), NumbaBackend(min_size=0)
    rng = np.random.default_rng(0)
    call = CALLS[op]
    rows = []
    for size in sizes:
        shape = (max(1, size // row), min(size, row))
        x = rng.standard_normal(shape).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        if op.endswith("softmax_backward"):  # y must be a (log-)softmax output
            y = numpy_backend.softmax(x, 1)
            x = np.log(y) if op.startswith("log") else y
        call(numba_backend, x, g)  # compile or load from the cache, outside the timing
        t_numpy = best_time(lambda: call(numpy_backend, x, g))
        t_kernel = best_time(lambda: call(numba_backend, x, g))
        rows.append((size, t_numpy, t_kernel))
    return rows


def suggested_threshold(rows, margin=1.1):
    """Smallest size from which the kernel was ``margin`` times faster at every larger size."""
    threshold = None
    for size, t_numpy, t_kernel in reversed(rows):
        if t_numpy < margin * t_kernel:
            break
        threshold = size
    return threshold


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ops", nargs="*", default=list(CALLS), help="primitives to time")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--row", type=int, default=ROW, help="row length (default %(default)s)")
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    print(f"{'primitive':22s}{'size':>10s}{'numpy us':>12s}{'kernel us':>12s}{'speedup':>9s}")
    for op in args.ops:
        rows = measure(op, sizes, np.dtype(args.dtype), args.row)
        for size, t_numpy, t_kernel in rows:
            print(f"{op:22s}{size:>10d}{t_numpy * 1e6:>12.1f}{t_kernel * 1e6:>12.1f}"
                  f"{t_numpy / t_kernel:>9.2f}")
        print(f"{op:22s} suggested min_size: {suggested_threshold(rows)}", flush=True)


if __name__ == "__main__":
    main()
