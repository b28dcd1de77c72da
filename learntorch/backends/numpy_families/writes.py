"""Writes into an existing array's memory: the in-place primitives, in numpy.

The only methods of the contract that modify an argument -- the first one, which is
a tensor's memory (or a view of it).  Everything an in-place op computes is computed
out of place first; these store the result: copy it in, fill with one value, or put
values at an index region.  Each casts to ``dst``'s dtype (C's conversions) and
broadcasts the source to where it goes.
"""
import numpy as np

from .loop_order import copy_in_loop_order, reads_what_it_writes


class Writes:
    def copy_into(self, dst, src):
        """dst[...] = src, ``src`` broadcast to dst's shape and cast to its dtype.  A source
        that is dst's own memory rearranged is copied in torch's loop order (loop_order.py)."""
        if (getattr(dst, "base", None) is not None or getattr(src, "base", None) is not None) \
                and reads_what_it_writes(dst, src):  # (a view: the cheap test first)
            copy_in_loop_order(dst, src)
        else:
            np.copyto(dst, src, casting="unsafe")

    def fill(self, dst, value):
        """Every element of ``dst`` becomes ``value``."""
        dst.fill(value)

    def index_put(self, dst, index, value, accumulate=False):
        """dst[index] = value (or +=, where repeated indices accumulate); ``index`` is a tuple
        of slices and index arrays/masks, or None for all of ``dst``."""
        if index is None:
            if accumulate:
                dst += value
            else:
                dst[...] = value
        elif accumulate:
            np.add.at(dst, index, value)
        else:
            dst[index] = value
