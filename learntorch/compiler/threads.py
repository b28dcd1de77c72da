"""One thread or all of them: when a generated kernel is long enough to share.

A kernel written with ``prange`` splits its outer loop across Numba's threads.  Waking
the sleeping threads costs tens of microseconds, so it pays only for a long kernel: a
softmax of 1024 x 1024 (about 0.5 ms on one thread) gains from a second core, while the
GELU of a 128 x 256 layer (about 1 ns an element: 35 us) or its ReLU (a fraction of a
nanosecond an element) would mostly wait for it.

The Numba backend makes the same choice for its own kernels, from a table measured on
the machine (``backends/numba_cpu/tuning.json``, written by ``python -m
benchmarks.calibrate``): each op's one-thread cost per element, and the one-thread time
from which every thread is used.  A fused kernel does the work of all its ops, so its
expected time is the number of elements times the sum of its ops' costs (an op the table
does not list costs what an ``add`` does: a few operations, no transcendental).  The
threshold is the table's, so a fused kernel and the eager op it replaces choose alike.
"""
import math


def one_thread_ns(source, group):
    """The expected one-thread time of a kernel (``KernelSource``) over its loops, in
    nanoseconds, from the Numba backend's tuning table."""
    from ..backends.numba_cpu import tuning
    costs = tuning.load()["ns_per_element"]
    per_element = sum(costs.get(_key(node), costs["add"]) for node in group.nodes)
    widest = max([op.dtype.itemsize for op in source.inputs + source.outputs] or [4])
    return math.prod(source.loops) * per_element * widest / 4  # the table is per float32


def worth_threads(source, group):
    """The one-thread time when the kernel should run on every thread, else None.

    Never for a kernel whose outer loop is reduced (``x.sum()``): threads would each add
    a part and the parts be added after, another order than the serial kernel's."""
    from ..backends.numba_cpu import tuning
    if source.reduction is not None and source.reduction[1] == len(source.loops):
        return None
    ns = one_thread_ns(source, group)
    return ns if ns >= tuning.load()["parallel_min_ns"] else None


def use_threads(ns):
    """Before a parallel kernel: every thread (the Numba backend may have left its last
    kernel on one), unless ``learntorch.set_num_threads`` capped them."""
    from ..backends.numba_cpu import loader
    loader.use_threads(ns)


def _key(node):
    """The tuning table's name for a node's op: ``Gelu`` -> ``gelu``, ``gt`` -> ``gt``."""
    return getattr(node.target, "__name__", "").lower()
