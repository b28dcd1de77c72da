"""The larger families of the backend contract, in numpy: one file each, mixed into
``NumpyBackend`` (``backends/reference.py``).

Each family is a class of methods with the same rules as the core ones: arrays in,
arrays out, inputs never modified.  A new family is a new file here and one entry in
``FAMILIES``; the Numba backend overrides what it has kernels for.
"""

from .conv import ConvFamily
from .dropout import DropoutFamily
from .embedding import EmbeddingFamily
from .grad_norms import GradNormFamily
from .init import InitFamily
from .interpolation import InterpolationFamily
from .linear import LinearFamily
from .losses import LossFamily
from .nn_activations import NnActivationFamily
from .normalization import NormalizationFamily
from .optim import OptimizerFamily
from .padding import PaddingFamily
from .pooling import PoolingFamily

FAMILIES = (ConvFamily, PoolingFamily, NormalizationFamily, PaddingFamily, InterpolationFamily,
            DropoutFamily, EmbeddingFamily, GradNormFamily, InitFamily, LinearFamily, LossFamily,
            NnActivationFamily, OptimizerFamily)
