"""learntorch: a compact tensor and autograd engine whose API is PyTorch's.

``import learntorch as torch`` and write PyTorch.  Read the code: each op is a
``Function`` with a forward and a backward you can read in one screen
(``learntorch/ops``), the backward engine is one generator
(``learntorch/autograd/engine.py``), and kernels live in ``learntorch/backends``.
"""
from ._dtypes import (dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16,
                      float32, float64, get_default_dtype, set_default_dtype, promote_types, can_cast)
from ._dtypes import float16 as half, float32 as float, float64 as double, int64 as long
from ._dtypes import int32 as int, int16 as short
from ._dtypes import qint8, quint8, qint32
from ._device import device
from ._size import Size
from ._storage import UntypedStorage
from ._tensor import Tensor
from . import _tensor_methods  # noqa: F401  (the ops as Tensor methods and operators)
from .factories import (tensor, as_tensor, from_numpy, zeros, ones, empty, full, zeros_like,
                        ones_like, empty_like, full_like, arange, linspace, logspace, eye, rand,
                        randn, randint, randperm, rand_like, randn_like, randint_like, bernoulli,
                        multinomial, normal)
from .random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state, Generator
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled
from .autograd.grad_mode import inference_mode, is_inference_mode_enabled
from . import autograd, backends, cuda, nn
from . import optim
from .serialization import save, load
from .ops.arithmetic import (add, sub, subtract, mul, multiply, div, divide, true_divide,
                             floor_divide, remainder, fmod, pow, rsub)
from .ops.unary import (neg, negative, exp, log, log1p, expm1, sqrt, rsqrt, sin, cos, abs,
                        absolute, sign, floor, ceil, trunc, round, square, log2, log10,
                        reciprocal, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
                        arcsin, arccos, arctan, arcsinh, arccosh, arctanh, lgamma, digamma,
                        polygamma, logit, nan_to_num, fix)
from .ops.pointwise_binary import atan2, arctan2, hypot, xlogy
from .ops.special import erf
from .ops.activations import tanh, sigmoid, relu, gelu, silu, softplus, clamp, clip
from .ops.pointwise_ternary import addcmul, addcdiv, lerp
from .ops.comparison import (eq, ne, lt, le, gt, ge, greater, greater_equal, less, less_equal,
                             not_equal, logical_and, logical_or, logical_xor, logical_not,
                             bitwise_and, bitwise_or, bitwise_xor, bitwise_not, isnan, isinf,
                             isfinite, isclose, allclose, equal, maximum, minimum, where,
                             signbit, isposinf, isneginf, isreal)
from .ops.reductions import (sum, mean, prod, amax, amin, max, min, argmax, argmin, var, std,
                             var_mean, std_mean, logsumexp, norm, all, any, count_nonzero,
                             nansum, nanmean, aminmax)
from .ops.cumulative import cumsum, cumprod, cummax, cummin
from .ops.order_statistics import median, nanmedian, kthvalue, mode, quantile, nanquantile
from .ops.counting import bincount, histc
from .ops.sets import unique, unique_consecutive, searchsorted, bucketize
from .ops.diagonals import diagonal, diag, diag_embed, tril, triu, trace
from .ops.repeating import roll, tile, repeat_interleave
from .ops.rotation import rot90
from .ops.softmax import softmax, log_softmax
from .ops.sorting import sort, argsort, topk
from .ops.linalg import (matmul, mm, bmm, dot, outer, ger, cross, cdist, mv, addmm, baddbmm,
                         addmv, addbmm)
from .ops.tensordot import tensordot
from .ops.einsum import einsum
from .ops.shape import (reshape, permute, transpose, swapaxes, swapdims, t, squeeze, unsqueeze,
                        flatten, unflatten, broadcast_to, narrow, clone, flip, movedim, moveaxis,
                        ravel, fliplr, flipud, atleast_1d, atleast_2d, atleast_3d)
from .ops.grids import broadcast_tensors, meshgrid, cartesian_prod, take, dist
from .ops.joining import cat, concat, concatenate, stack, split, chunk, unbind, hstack, vstack
from .ops.indexing import (select, gather, scatter, scatter_add, scatter_reduce, index_select,
                           index_add, index_put, masked_fill, masked_select, nonzero,
                           take_along_dim)
from .ops.broadcast import broadcast_shapes
from ._type_info import finfo, iinfo
from ._tensor_repr import set_printoptions
from ._threads import set_num_threads, get_num_threads
from .ops.padding import pad as _pad  # noqa: F401  (nn.functional.pad, later)
from . import utils, distributed  # (nn.parallel's DistributedDataParallel needs distributed)
from ._quantized_tensor import (qscheme, per_tensor_affine, per_tensor_symmetric,
                                per_channel_affine, per_channel_symmetric,
                                per_channel_affine_float_qparams)
from ._quantize import quantize_per_tensor, quantize_per_channel, dequantize
from . import amp
from .amp import autocast
from .amp.autocast_mode import (is_autocast_enabled, set_autocast_enabled, get_autocast_dtype,
                                set_autocast_dtype, is_autocast_cache_enabled,
                                set_autocast_cache_enabled, clear_autocast_cache,
                                autocast_increment_nesting, autocast_decrement_nesting)
from . import tiers
tiers._from_environment()  # the fast tier, unless LEARNTORCH_REFERENCE=1

bool_ = bool
__version__ = "0.1.0"

# The parts a course reaches in its later chapters are imported the first time they are
# named (``learntorch.compile``, ``learntorch.distributed``, ...), not with learntorch: a
# fifth of the engine's modules, which every notebook kernel would otherwise wait for.
_ON_FIRST_USE = ("ao", "compiler", "datasets", "fx", "onnx", "profiler", "_dynamo", "_logging")


def __getattr__(name):
    if name == "compile":
        from .compiler import compile
        return compile
    if name in _ON_FIRST_USE:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'learntorch' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ON_FIRST_USE) | {"compile"})


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def expand_copy(input, size):
    return input.expand(size).clone()


def result_type(tensor, other):
    """The dtype an operation on ``tensor`` and ``other`` gives (torch's promotion rules)."""
    from . import _dtypes
    return _dtypes.result_type(tensor, other)


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


_quantized_tensor._refuse_the_rest()  # now that every Tensor method exists
