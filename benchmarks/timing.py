"""The timing harness: warm up, calibrate, repeat, report the median and the minimum.

A measurement runs the function ``loops`` times in a row and divides by
``loops``; ``loops`` is chosen so one measurement lasts about
``Settings.seconds`` (a fast op runs thousands of times, a slow one once),
which keeps ``time.perf_counter``'s resolution and the loop's own cost out
of the figure.  ``Settings.repeats`` measurements are taken; the **median**
is the figure we report (robust to a neighbour stealing the CPU for a
moment) and the **minimum** is kept as the best case.

The garbage collector stays on: freeing autograd graphs is part of what a
training loop pays, and it is on for every library alike.
"""
import math
import statistics
import time
from dataclasses import dataclass, asdict


@dataclass(frozen=True)
class Settings:
    seconds: float = 0.2   # target length of one measurement
    repeats: int = 5       # measurements per contender; the median is reported
    warmup: int = 1        # untimed calls first (JIT compilation, caches, allocator)


FULL = Settings()
QUICK = Settings(seconds=0.05, repeats=3, warmup=1)
ONCE = Settings(seconds=0.0, repeats=1, warmup=0)  # smoke tests: run once, time nothing seriously


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one contender."""
    median: float
    min: float
    loops: int      # calls per measurement
    repeats: int    # measurements taken

    def as_dict(self):
        return asdict(self)


class Sampled:
    """A contender that times itself: ``fn()`` does one run and returns its seconds.

    For work that must not be repeated in a tight loop or whose setup must stay
    out of the figure, e.g. starting a fresh Python process with a freshly
    emptied JIT cache.  The harness calls it once per measurement (loops = 1).
    """

    def __init__(self, fn, setup=None):
        self.fn = fn
        self.setup = setup  # untimed preparation, run once before the warm-up


def _run(fn, loops):
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return time.perf_counter() - start


def calibrate(fn, seconds):
    """How many calls make one measurement last about ``seconds``.

    Runs 1, 10, 100, ... calls until a batch takes a tenth of the target,
    then scales up linearly (like ``timeit.Timer.autorange``, but aiming at a
    chosen duration).
    """
    loops = 1
    while True:
        elapsed = _run(fn, loops)
        if elapsed >= seconds:
            return loops
        if elapsed >= seconds / 10:
            return max(1, math.ceil(loops * seconds / elapsed))
        loops *= 10


def measure(fn, settings=FULL):
    """Time ``fn`` (a zero-argument callable or a ``Sampled``) and return a ``Timing``."""
    if isinstance(fn, Sampled):
        if fn.setup is not None:
            fn.setup()
        for _ in range(settings.warmup):
            fn.fn()
        samples = [fn.fn() for _ in range(settings.repeats)]
        loops = 1
    else:
        for _ in range(settings.warmup):
            fn()
        loops = calibrate(fn, settings.seconds)
        samples = [_run(fn, loops) / loops for _ in range(settings.repeats)]
    return Timing(statistics.median(samples), min(samples), loops, len(samples))
