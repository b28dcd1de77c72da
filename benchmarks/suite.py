"""What a benchmark case is, how cases are registered, and what a row holds.

A case is one small function decorated with ``@case``.  It builds its inputs
and returns ``Contenders``: one zero-argument callable per library doing the
same work (``None`` where a library has no equivalent).  The harness
(``timing.py``) times every contender in the same run, so the ratios compare
like with like on the same machine at the same moment::

    @case("a + b, 1e6", n=10**6, tiny=dict(n=64))
    @case("a + b, 1e7", n=10**7, tiny=dict(n=64))
    def add(n):
        a, b = float32(n, seed=1), float32(n, seed=2)     # numpy data, shared by all
        la, lb = learntorch.from_numpy(a), learntorch.from_numpy(b)
        ta, tb = torch_from_numpy(a), torch_from_numpy(b)  # None without PyTorch
        return Contenders(learntorch=lambda: la + lb, numpy=lambda: a + b,
                          torch=lambda: ta + tb, metric=elements_per_second(n))

The same function may carry several ``@case`` lines, one per size (listed in
reading order).  A ``target=`` (``as_fast_as``, ``throughput_at_least``,
``within_seconds``) adds the case to the report's targets table.  ``tiny``
holds the parameters the smoke test uses (tests/test_benchmarks_smoke.py).
The group is the module name without ``bench_`` (``bench_matmul`` -> ``matmul``);
a new group is a new ``bench_<group>.py`` added to ``GROUPS`` below.

Running cases is runner.py's job.  A row (what ``runner.run_case`` returns, and
what the JSON file and the report hold) is a plain dict::

    group, name, key, params, note,
    seconds:  {library: {median, min, loops, repeats} or None},
    metric:   {unit, learntorch, numpy, torch} or None   (from the medians),
    ratios:   {vs_numpy, vs_torch}  learntorch time / other time (< 1: learntorch is faster),
    target:   {text, measured, met} or None
"""
import importlib
import os
from dataclasses import dataclass

import numpy as np

LIBRARIES = ("learntorch", "numpy", "torch")

# bench_<group>.py modules, in report order
GROUPS = ("autograd", "elementwise", "reduction", "matmul", "training", "startup", "widgets")

# With --isolated, each library is timed in its own worker process (see workers.py), which
# names its library here, and PyTorch is imported only where it is timed.  By default
# (pair mode) every library runs in one process, PyTorch imported, as in a notebook.
ONLY_LIBRARY = os.environ.get("BENCHMARKS_LIBRARY")

torch = None
if ONLY_LIBRARY in (None, "torch"):
    try:  # PyTorch is the yardstick, not a dependency: without it its column reads "—"
        import torch
    except ImportError:
        pass


# ---- what a case returns ------------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    """A figure derived from a time, e.g. GFLOP/s or µs per op."""
    unit: str
    amount: float
    per_second: bool = True   # amount / seconds (throughput) or seconds / amount (cost)
    scale: float = 1.0        # unit scale: 1e9 for GFLOP/s, 1e-6 for µs

    def of(self, seconds):
        seconds = max(seconds, 1e-12)  # a smoke run may be faster than the clock
        if self.per_second:
            return self.amount / seconds / self.scale
        return seconds / self.amount / self.scale


def flops_per_second(flops):
    return Metric("GFLOP/s", flops, scale=1e9)


def elements_per_second(n):
    return Metric("Gelem/s", n, scale=1e9)


def microseconds_per_op(n_ops):
    return Metric("µs/op", n_ops, per_second=False, scale=1e-6)


@dataclass
class Contenders:
    learntorch: object
    numpy: object = None
    torch: object = None
    metric: Metric = None
    note: str = ""

    def __post_init__(self):
        if torch is None:  # its callable was built on None inputs: drop it
            self.torch = None


def float32(*shape, seed=0):
    """Standard-normal float32 numpy data; every library gets the same numbers, in memory
    aligned to 64 bytes.

    Why aligned: numpy aligns its arrays to 16 bytes only, so where an array starts within
    a cache line depends on what the process allocated before -- and BLAS cares.  One
    128 x 128 matmul measured 19.7, 21.9, 22.1 and 30.3 us with its inputs at offsets 16,
    0, 32 and 48 of a cache line: a lottery larger than the differences being measured.
    The same alignment in every worker makes the ratios compare the libraries alone.
    """
    values = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    raw = np.empty(values.nbytes + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    aligned = raw[start:start + values.nbytes].view(np.float32).reshape(shape)
    aligned[...] = values
    return aligned


def torch_from_numpy(array):
    """``torch.from_numpy(array)``, or None when PyTorch is not installed."""
    return None if torch is None else torch.from_numpy(array)


# ---- targets (reported, never asserted) ----------------------------------------------

@dataclass(frozen=True)
class Target:
    """A goal from the issue, checked against one row: ``check(row) -> (measured, met)``."""
    text: str
    check: object

    def evaluate(self, row):
        measured, met = self.check(row)
        return {"text": self.text, "measured": measured, "met": met}


def _figure(row, library):
    metric = row["metric"]
    if metric and metric.get(library) is not None:
        return f"{metric[library]:.3g} {metric['unit']}"
    seconds = row["seconds"].get(library)
    return f"{seconds['median']:.3g} s" if seconds else "—"


def as_fast_as(library, text):
    """learntorch's time is at most ``library``'s."""
    def check(row):
        ratio = row["ratios"][f"vs_{library}"]
        if ratio is None:
            return f"{_figure(row, 'learntorch')} ({library} not measured)", None
        return (f"{_figure(row, 'learntorch')} vs {library} {_figure(row, library)} "
                f"(takes {ratio:.2f}× {library}'s time)", ratio <= 1.0)
    return Target(text, check)


def throughput_at_least(fraction, library, text):
    """learntorch's throughput is at least ``fraction`` of ``library``'s."""
    def check(row):
        ratio = row["ratios"][f"vs_{library}"]
        if ratio is None:
            return f"{_figure(row, 'learntorch')} ({library} not measured)", None
        relative = 1.0 / ratio
        return (f"{_figure(row, 'learntorch')} vs {library} {_figure(row, library)} "
                f"({relative:.2f}× {library}'s throughput)", relative >= fraction)
    return Target(text, check)


def within_seconds(limit, text):
    """learntorch's median time is at most ``limit`` seconds."""
    def check(row):
        seconds = row["seconds"]["learntorch"]["median"]
        reference = row["seconds"].get("torch")
        versus = f" (torch {reference['median']:.2f} s)" if reference else ""
        return f"{seconds:.3f} s{versus}", seconds <= limit
    return Target(text, check)


# ---- the registry ---------------------------------------------------------------------

@dataclass
class Case:
    group: str
    name: str
    fn: object
    params: dict
    tiny: dict
    target: Target = None

    @property
    def key(self):
        """A stable id, unique by construction: group.function-param-values."""
        return "-".join([f"{self.group}.{self.fn.__name__}", *map(str, self.params.values())])

    def matches(self, pattern):
        pattern = pattern.lower()
        return any(pattern in text.lower() for text in (self.group, self.name, self.key))


CASES = []


def case(name, *, tiny, target=None, **params):
    """Register ``fn(**params)`` as a case called ``name``; ``tiny`` for smoke tests."""
    def register(fn):
        group = fn.__module__.rpartition(".")[2].removeprefix("bench_")
        # stacked decorators run bottom-up: insert above this function's earlier
        # registrations so that the report lists sizes in reading order
        new = Case(group, name, fn, params, tiny, target)
        if any(c.key == new.key for c in CASES):
            raise ValueError(f"two benchmark cases are both {new.key!r}")
        first = next((i for i, c in enumerate(CASES) if c.fn is fn), len(CASES))
        CASES.insert(first, new)
        return fn
    return register


def all_cases():
    """Every registered case, grouped in ``GROUPS`` order, each group in file order."""
    for group in GROUPS:
        importlib.import_module(f"{__package__}.bench_{group}")
    order = {group: i for i, group in enumerate(GROUPS)}
    return sorted(CASES, key=lambda c: order.get(c.group, len(order)))  # stable sort
