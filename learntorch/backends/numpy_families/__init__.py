"""The larger families of the backend contract, in numpy: one file each, mixed into
``NumpyBackend`` (``backends/reference.py``).

Each family is a class of methods with the same rules as the core ones: arrays in,
arrays out, inputs never modified.  A new family is a new file here and one entry in
``FAMILIES``; the Numba backend overrides what it has kernels for.
"""

from .conv import ConvFamily
from .dropout import DropoutFamily
from .embedding import EmbeddingFamily
from .interpolation import InterpolationFamily
from .normalization import NormalizationFamily
from .padding import PaddingFamily
from .pooling import PoolingFamily

FAMILIES = (ConvFamily, PoolingFamily, NormalizationFamily, PaddingFamily, InterpolationFamily,
            DropoutFamily, EmbeddingFamily)
