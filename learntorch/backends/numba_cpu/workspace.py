"""Scratch arrays that a backend method reuses from one call to the next (the convolution
of ``conv_backend.py``).

Why: a convolution needs large temporary arrays -- the padded image, the
im2col matrix -- that live for a fraction of a millisecond.  Allocating them
fresh every time is not free: above a size threshold the C allocator hands
out memory straight from the operating system, and the first write to each
4 KiB page then traps into the kernel ("page fault"), which zeroes the page.
Measured on the course's small CNN (batch 32, 28x28): ~900 page faults per
training step, about 2 ms of a 5 ms step.  Keeping the temporaries and writing
into them again costs nothing of the kind.

The rule that keeps this safe: a scratch array is used only *inside* one
call and never escapes it -- nothing returned, saved for backward or handed
to user code may be (or view) a scratch array.  Each thread has its own
arrays, so threads never share one.  The arrays kept are capped at
``MAX_BYTES`` in all: past that the least recently used are dropped (big
images: the page faults are small next to the arithmetic, and holding
hundreds of megabytes between steps would be worse).
"""
import collections
import threading

import numpy as np

#: the scratch arrays one thread keeps, in bytes, at most
MAX_BYTES = 64 << 20

_local = threading.local()


def scratch(name, shape, dtype):
    """An uninitialised array of ``shape``/``dtype`` for temporary use under ``name``.

    The same (name, shape, dtype) returns the same memory on the next call, so
    two arrays needed at the same time must have two names.
    """
    key = (name, tuple(shape), np.dtype(dtype))
    kept = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = collections.OrderedDict()
    a = kept.get(key)
    if a is not None:
        kept.move_to_end(key)  # most recently used last
        return a
    a = np.empty(key[1], key[2])
    if a.nbytes <= MAX_BYTES:
        kept[key] = a
        total = sum(b.nbytes for b in kept.values())
        while total > MAX_BYTES:
            total -= kept.popitem(last=False)[1].nbytes
    return a
