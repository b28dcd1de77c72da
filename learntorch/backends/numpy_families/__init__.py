"""The larger families of the backend contract, in numpy: one file each, mixed into
``NumpyBackend`` (``backends/reference.py``).

Each family is a class of methods with the same rules as the core ones: arrays in,
arrays out, inputs never modified (``Writes``, the in-place primitives, are the one
exception: they store into their first argument).  A new family is a new file here
and one entry in ``FAMILIES``; the Numba backend overrides what it has kernels for.
"""
from .comparison import Comparison
from .conv import ConvFamily
from .copies import Copies
from .cumulative import Cumulative
from .dropout import DropoutFamily
from .elementwise_math import ElementwiseMath
from .embedding import EmbeddingFamily
from .grad_norms import GradNormFamily
from .indexing import Indexing
from .init import InitFamily
from .interpolation import InterpolationFamily
from .joining import Joining
from .linalg import LinearAlgebra
from .linear import LinearFamily
from .losses import LossFamily
from .nn_activations import NnActivationFamily
from .normalization import NormalizationFamily
from .optim import OptimizerFamily
from .padding import PaddingFamily
from .pooling import PoolingFamily
from .reductions import Reductions
from .sorting import Sorting
from .special_functions import SpecialFunctions
from .writes import Writes

from .quantized import QuantizedFamily

FAMILIES = (ElementwiseMath, SpecialFunctions, Comparison, Reductions, Cumulative, Sorting,
            Indexing, Copies, Joining, LinearAlgebra, Writes,
            ConvFamily, PoolingFamily, NormalizationFamily, PaddingFamily, InterpolationFamily,
            DropoutFamily, EmbeddingFamily, GradNormFamily, InitFamily, LinearFamily, LossFamily,
            NnActivationFamily, OptimizerFamily, QuantizedFamily)
