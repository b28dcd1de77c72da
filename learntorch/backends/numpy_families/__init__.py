"""The larger families of the backend contract, in numpy: one file each, mixed into
``NumpyBackend`` (``backends/reference.py``).

Each family is a class of methods with the same rules as the core ones: arrays in,
arrays out, inputs never modified.  A new family is a new file here and one entry in
``FAMILIES``; the Numba backend overrides what it has kernels for.
"""

from .grad_norms import GradNormFamily
from .init import InitFamily
from .linear import LinearFamily
from .losses import LossFamily
from .nn_activations import NnActivationFamily
from .optim import OptimizerFamily

FAMILIES = (GradNormFamily, InitFamily, LinearFamily, LossFamily, NnActivationFamily,
            OptimizerFamily)
