"""``ARRAY_BACKWARD``: Function class -> its backward written on raw arrays.

Each entry replaces that class's ``backward`` (the reference, written on Tensors)
when the raw-array engine (``_fast/engine.py``) runs it: the same formula, the same
backend calls in the same order, so the same bits -- without building a Tensor or
running ``Function.apply`` per gradient.  Keyed by the exact class: a learner's
subclass that writes its own ``backward`` never takes an entry.  An entry receives
the node (the ctx) and one gradient array per output, and returns one array (or None)
per forward argument, as ``backward`` would.

``tests/tiers/`` walks every entry against the reference ``backward`` on hypothesis
inputs (0-d, broadcast, strided, float32/float64, inf/nan) and asks for bit-for-bit
equality.
"""

ARRAY_BACKWARD = {}


def register(*classes):
    """Decorator: the function is the array backward of each of ``classes``."""
    def add(fn):
        for cls in classes:
            ARRAY_BACKWARD[cls] = fn
        return fn
    return add
