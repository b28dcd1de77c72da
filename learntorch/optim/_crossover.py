"""Measure where each fused optimizer kernel starts to beat the numpy update, on this machine.

    python -m learntorch.optim._crossover                  # float32, every optimizer
    python -m learntorch.optim._crossover --dtype float64 adam

For each optimizer and each parameter size it times one ``optimizer.step()``
on a single parameter with the Numba backend's optimizer kernels switched off
(the numpy update) and on (the kernel, compiled beforehand), and prints both and
their ratio.  ``backends/numba_cpu/optim_backend.py`` records what this printed;
the thresholds live in ``tuning.json`` (``layer_min_sizes``).  Each figure is the
median of 31 batches of 5 steps, which keeps the moments when another process had
the cores out of it.
"""
import argparse
import statistics
import time

import numpy as np

from .. import backends
from .._tensor import Tensor
from ..nn import Parameter
from . import SGD, Adam, AdamW, RMSprop, Adagrad

SIZES = (10**2, 10**3, 10**4, 3 * 10**4, 10**5, 10**6)
OPTIMIZERS = {
    "sgd": lambda ps: SGD(ps, lr=0.01, momentum=0.9),
    "adam": lambda ps: Adam(ps),
    "adamw": lambda ps: AdamW(ps),
    "rmsprop": lambda ps: RMSprop(ps),
    "adagrad": lambda ps: Adagrad(ps),
}


def backend(kernel):
    """A Numba backend whose optimizer kernels update every parameter, or none."""
    b = backends.NumbaBackend()
    b.layer_min_sizes = dict(b.layer_min_sizes)
    for name in ("sgd", "adam", "rmsprop", "adagrad"):
        b.layer_min_sizes[name] = 0 if kernel else float("inf")
    return b


def make(name, size, dtype):
    rng = np.random.default_rng(0)
    p = Parameter(Tensor._wrap(rng.standard_normal(size).astype(dtype)))
    p.grad = Tensor._wrap(rng.standard_normal(size).astype(dtype))
    return OPTIMIZERS[name]([p])


def median_step_time(opt, kernel, repeats=31):
    with backends.use(backend(kernel)):
        opt.step()  # creates the state; compiles or loads the kernel
        times = []
        for _ in range(repeats):
            number = 5
            t0 = time.perf_counter()
            for _ in range(number):
                opt.step()
            times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(OPTIMIZERS))
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args(argv)
    print(f"{'optimizer':10s}{'size':>10s}{'numpy us':>11s}{'kernel us':>11s}{'ratio':>8s}")
    for name in args.names:
        for size in SIZES:
            t_numpy = median_step_time(make(name, size, args.dtype), False)
            t_kernel = median_step_time(make(name, size, args.dtype), True)
            print(f"{name:10s}{size:>10d}{t_numpy * 1e6:>11.1f}{t_kernel * 1e6:>11.1f}"
                  f"{t_numpy / t_kernel:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
