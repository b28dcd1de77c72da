"""Measure where each fused optimizer kernel starts to beat the numpy update, on this machine.

    python -m learntorch.optim._crossover                  # float32, every optimizer
    python -m learntorch.optim._crossover --dtype float64 adam

For each optimizer and each parameter size it times one ``optimizer.step()``
on a single parameter with ``fused=False`` (numpy) and ``fused=True`` (the
kernel, compiled beforehand), and prints both and their ratio.  RMSprop has no
``fused`` option, so it is timed with ``_fused.MIN_SIZE`` forced to 0 or to
infinity.  ``_fused.py`` records what this printed where its thresholds come
from.  Each figure is the median of 31 batches of 5 steps, which keeps the
moments when another process had the cores out of it.
"""
import argparse
import statistics
import time

import numpy as np

from .._tensor import Tensor
from ..nn import Parameter
from . import SGD, Adam, AdamW, RMSprop, Adagrad, _fused

SIZES = (10**2, 10**3, 10**4, 3 * 10**4, 10**5, 10**6)
OPTIMIZERS = {
    "sgd": lambda ps, **kw: SGD(ps, lr=0.01, momentum=0.9, **kw),
    "adam": lambda ps, **kw: Adam(ps, **kw),
    "adamw": lambda ps, **kw: AdamW(ps, **kw),
    "rmsprop": lambda ps, **kw: RMSprop(ps),
    "adagrad": lambda ps, **kw: Adagrad(ps, **kw),
}


def make(name, size, dtype, kernel):
    rng = np.random.default_rng(0)
    p = Parameter(Tensor._wrap(rng.standard_normal(size).astype(dtype)))
    p.grad = Tensor._wrap(rng.standard_normal(size).astype(dtype))
    return OPTIMIZERS[name]([p], **({} if name == "rmsprop" else {"fused": kernel}))


def median_step_time(opt, kernel, name, repeats=31):
    saved = dict(_fused.MIN_SIZE)
    if name == "rmsprop":
        _fused.MIN_SIZE["rmsprop"] = 0 if kernel else float("inf")
    try:
        opt.step()  # creates the state; compiles or loads the kernel
        times = []
        for _ in range(repeats):
            number = 5
            t0 = time.perf_counter()
            for _ in range(number):
                opt.step()
            times.append((time.perf_counter() - t0) / number)
    finally:
        _fused.MIN_SIZE.update(saved)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(OPTIMIZERS))
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args(argv)
    print(f"{'optimizer':10s}{'size':>10s}{'numpy us':>11s}{'kernel us':>11s}{'ratio':>8s}")
    for name in args.names:
        for size in SIZES:
            t_numpy = median_step_time(make(name, size, args.dtype, False), False, name)
            t_kernel = median_step_time(make(name, size, args.dtype, True), True, name)
            print(f"{name:10s}{size:>10d}{t_numpy * 1e6:>11.1f}{t_kernel * 1e6:>11.1f}"
                  f"{t_numpy / t_kernel:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
