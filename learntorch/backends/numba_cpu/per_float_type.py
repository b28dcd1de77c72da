"""One name for a scalar function that has a float32 and a float64 version.

``fast_exp`` and ``fast_gelu`` each come in two compiled versions, one per float type,
because a float32 loop must stay in float32 to run 16 numbers per AVX-512 instruction.
``per_float_type`` gives the pair one name that works in both worlds:

* called from Python, it runs the version for the argument's type and returns a numpy
  scalar of that type (``np.float32`` in, ``np.float32`` out; anything else as float64);
* called inside a Numba function, Numba's ``overload`` picks the version by the
  argument's *type* while compiling, so the loop contains that version's code and no
  test of the type at run time.
"""
import numpy as np
from numba import types
from numba.extending import overload


def per_float_type(name, doc, float32_version, float64_version, inline="never"):
    """The Python function ``name`` (docstring ``doc``), and Numba's meaning of it.

    ``inline="always"`` pastes the chosen version's code into the caller before LLVM sees
    it (fast_erf.py says when that is needed for the loop to vectorize)."""
    def function(x):
        if isinstance(x, np.float32):
            return np.float32(float32_version(x))
        return np.float64(float64_version(float(x)))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc

    @overload(function, inline=inline)
    def _version_for(x):
        if x == types.float32:
            return lambda x: float32_version(x)
        if x == types.float64:
            return lambda x: float64_version(x)
        return None

    return function
