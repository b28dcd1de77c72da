"""A numpy view of an array's memory with any shape, strides and offset (torch's ``as_strided``).

It lives with the backends because both sides need it: the view ops build views with
it (``ops/strides.py``), and a backend allocates a copy with a chosen layout with it.
"""
import numpy as np


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def strided_array(a, shape, strides, offset=0):
    """A numpy view of ``a``'s memory: ``shape`` and ``strides`` (in elements), starting
    ``offset`` elements after ``a``'s first element -- torch's ``as_strided``.

    Built over the array that owns the memory, so ``storage_offset`` and
    sharing keep working.  A read-only ``a`` gives a read-only view.
    """
    if a.__class__ is not np.ndarray:  # a device array makes its views itself
        return a.as_strided(shape, strides, offset)
    item = a.itemsize
    byte_strides = tuple(int(s) * item for s in strides)
    if offset == 0 and a.shape == tuple(shape) and a.strides == byte_strides:
        return a
    root = _root(a)
    start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0] + offset * item
    if 0 in shape:  # no element to address: only keep the start inside the memory
        start = min(start, root.nbytes)
    try:
        out = np.ndarray(shape, a.dtype, buffer=root, offset=start, strides=byte_strides)
    except (TypeError, ValueError, BufferError):
        # memory that numpy cannot re-address through a buffer (an exotic root):
        # as_strided still shares it, though the view then no longer knows its root
        at = np.lib.stride_tricks.as_strided(a, (offset + 1,), (item,))[offset:]
        out = np.lib.stride_tricks.as_strided(at, shape, byte_strides)
    if not a.flags.writeable and out.flags.writeable:
        out.flags.writeable = False
    return out
