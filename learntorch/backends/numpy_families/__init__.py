"""The larger families of the backend contract, in numpy: one file each, mixed into
``NumpyBackend`` (``backends/reference.py``).

Each family is a class of methods with the same rules as the core ones: arrays in,
arrays out, inputs never modified.  A new family is a new file here and one entry in
``FAMILIES``; the Numba backend overrides what it has kernels for.
"""

from .quantized import QuantizedFamily

FAMILIES = (QuantizedFamily,)
