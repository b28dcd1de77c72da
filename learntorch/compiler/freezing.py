"""``options={"freezing": True}``: a layer's weight stored once more, transposed, for BLAS.

``nn.Linear`` keeps its weight as (out, in), torch's layout, and computes ``x @ W.T``.
numpy hands BLAS the transposed *view* and a flag saying so; BLAS then reads the weight
across its rows while it copies it into the blocks its inner loop wants.  Given the same
numbers already laid out as (in, out), BLAS copies along rows and takes a faster path:
the three matmuls of ``benchmarks/compile.py``'s MLP (784-256-128-10, batch 128, float32)
take about 0.9 of the time, every layer alike (784x256: 323 -> 290 us, 128x10: 8.6 ->
5.7 us, in one process taking turns).  Eager code cannot keep that copy: it does not know
whether the weight is used again before it changes.  A compiled inference program does:
its guards hold grad mode off and the parameter objects, so it makes the copy once, at
the first call, and uses it on every call after -- torch's ``freezing`` (Inductor
treats parameters as constants and *prepacks* them, ``torch._inductor.config.freezing``).

What a copy costs: the weight's memory once more, per compiled program.  What it risks:
results from a weight that has since changed.  torch's freezing assumes parameters never
change after compiling.  Here every call first compares the weight with the copy's source
-- the same array (``weight.data = ...`` swaps it) at the same version (every in-place op,
``optimizer.step()`` and ``load_state_dict`` bump it) -- and makes the copy again when
either differs.  What no version counter sees is not seen here either: a write through
``weight.numpy()`` or an in-place op on ``weight.data`` (a tensor with a counter of its
own, as in torch).  After such a write, call ``learntorch.compiler.reset()``.

Results: the same products summed by another BLAS routine, so they can differ from
eager's in the last bits of float32 (a few ulp; ``rtol=1e-5``), as torch's frozen
programs differ from its eager ones.  Without the option the compiled program calls
the engine's ``Linear`` and its values are eager's bit for bit.
"""
import numpy as np

from .._tensor import Tensor
from .._fast.linear import linear_arrays
from ..nn._functional.linear import Linear

#: the dtypes BLAS computes (numpy hands float16 and bfloat16 to its own loops)
FROZEN_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def can_freeze(node, weight):
    """True when the ``Linear`` ``node``, whose weight argument is the parameter tensor
    ``weight``, can run on a transposed copy: a CPU matrix of a BLAS dtype, with input
    (and bias) of that dtype (under autocast the input is another dtype: not frozen)."""
    data = getattr(weight, "_data", None)
    if data.__class__ is not np.ndarray or data.ndim != 2 or data.dtype not in FROZEN_DTYPES:
        return False
    dtypes = {getattr(getattr(a, "tensor_meta", None), "dtype", None)
              for a in node.args if a is not None}
    return len(dtypes) == 1 and weight.dtype in dtypes


class FrozenLinear:
    """``Linear.apply(x, weight, bias)`` with the weight's transposed copy: ``x @ Wt + b``.

    Called by a compiled program that records no autograd, in place of ``Linear.apply``.
    ``repacks`` counts the copies made after the first (each a weight that had changed)."""

    def __init__(self, weight):
        self.weight = weight
        self.repacks = -1
        self._pack()

    def _pack(self):
        weight = self.weight
        self._source, self._version = weight._data, weight._version_counter[0]
        self.packed = np.ascontiguousarray(weight._data.T)  # (in, out): BLAS reads its rows
        self.repacks += 1

    def __call__(self, x, bias):
        weight = self.weight
        if weight._data is not self._source or weight._version_counter[0] != self._version:
            self._pack()  # the weight changed since the copy: copy it again
        a = x._data
        if a.__class__ is not np.ndarray or a.dtype != self.packed.dtype:
            return Linear.apply(x, weight, bias)  # not what the copy was made for: the engine's
        return Tensor._wrap(linear_arrays(a, self.packed, None if bias is None else bias._data))

    def __repr__(self):
        rows, cols = self.weight.shape
        return f"<frozen Linear weight {rows}x{cols}, stored transposed ({self.repacks} repacks)>"
