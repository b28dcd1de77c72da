"""bfloat16 in the numpy backend: store in 16 bits, compute in float32, round once.

numpy has no bfloat16; ``ml_dtypes`` adds it as a numpy dtype whose ufuncs compute
each element in float32 and round the result -- right for one ufunc (``a + b``,
``exp(x)``), wrong for anything longer: numpy's ``sum`` of a bfloat16 array rounds
every partial sum to 8 bits of mantissa (the sum of 100000 numbers near 0.5 comes out
as 256), ``sigmoid`` written as three ufuncs rounds three times, and ``matmul`` answers
in float32.  torch's kernels instead load 16-bit numbers into float32 registers, do
the whole computation there (its "opmath" type) and round once when they store the
result.  This module gives the backend methods that compute more than one ufunc the
same shape: bfloat16 arrays in are widened to float32, the method runs unchanged, and
its float32 arrays out are rounded back to bfloat16.

The methods named in ``FLOAT32_METHODS`` are wrapped once, on ``NumpyBackend``
(``backends/reference.py``); a Numba override that does not serve bfloat16 calls
``super()`` and lands here.  Methods that take a dtype to produce (``cast``, ``full``),
the in-place writes and the optimizer updates, and the elementwise arithmetic whose
Python-number operand torch rounds to the tensor's dtype first (``add``: ``256 + 1.004``
is 256 in bfloat16) stay as they are.

``ml_dtypes`` is slow to import, so learntorch imports it on the first use of bfloat16
(``_dtypes.py``); this module never imports it: a bfloat16 array exists only once it is
imported, and ``is_bfloat16`` recognises one by its numpy dtype alone.
"""
import functools

import numpy as np

_FLOAT32 = np.dtype(np.float32)


_seen_bfloat16 = None  # ml_dtypes' bfloat16 numpy dtype (one object), once one was asked about


def is_bfloat16(dtype):
    """Whether numpy ``dtype`` is ``ml_dtypes.bfloat16``.  numpy's own dtypes are kinds
    "b", "i", "u", "f"; ml_dtypes' are kind "V" (numpy's kind for user-defined types), so
    the common case is settled by one one-letter comparison.  A dtype's ``name`` is
    computed by Python code in numpy (~1.4 us, autocast asks some twenty times a step),
    so it is read once: numpy keeps one dtype object per type, remembered here."""
    global _seen_bfloat16
    if dtype is _seen_bfloat16:
        return True
    if dtype.kind != "V" or dtype.name != "bfloat16":
        return False
    _seen_bfloat16 = dtype
    return True


#: the dtype ``NumpyBackend.sum`` adds in, where numpy's own would round every partial sum
#: (the one core method that is not wrapped: it is on the path every learner reads first),
#: keyed by numpy kind: bfloat16 is the engine's only dtype of kind "V" (see ``is_bfloat16``)
SUM_DTYPES = {"V": _FLOAT32}


#: backend methods that compute in float32 when given bfloat16 arrays
FLOAT32_METHODS = (
    # core: composite activations, the softmax family, sum, matmul
    "tanh_backward", "sigmoid", "sigmoid_backward", "gelu", "gelu_backward", "silu",
    "silu_backward", "softmax", "log_softmax", "softmax_backward", "log_softmax_backward",
    "logsumexp", "matmul",
    # reductions and scans accumulate in float32
    "mean", "amax", "amin", "argmax", "argmin", "max_along", "min_along", "var_mean",
    "vector_norm", "cumsum", "cumprod", "cummax", "cummin", "norm_of_arrays",
    # formulas of several steps
    "rsqrt", "logit", "softplus", "gelu_tanh", "lerp", "xlogy", "hypot", "atan2", "erf",
    "lgamma", "digamma", "polygamma", "dot", "einsum", "cross",
    "argsort", "topk", "kthvalue", "median_index", "mode", "unique", "unique_dim",
    "unique_consecutive", "scatter_add", "index_add", "scatter_reduce",
    # the layers' kernels
    "im2col", "col2im", "conv2d", "conv2d_backward_input", "conv2d_backward_weight",
    "max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward", "norm_statistics", "inverse_std", "normalize",
    "normalize_backward", "normalize_affine_backward", "upsample_linear",
    "upsample_linear_backward", "linear", "embedding_backward",
    "loss_reduction", "mse_loss", "mse_loss_backward", "huber_loss", "smooth_l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss_rows",
    "nll_loss_rows_backward", "cross_entropy_rows", "cross_entropy_rows_backward",
    "soft_cross_entropy_rows", "kl_div",
    "leaky_relu", "leaky_relu_backward", "elu", "elu_backward", "hardsigmoid",
    "hardsigmoid_backward", "hardswish", "hardswish_backward", "log_sigmoid", "mish", "prelu",
)


def _is_bfloat16(x):
    return x.__class__ is np.ndarray and is_bfloat16(x.dtype)


def _widen(backend, x):
    # (through the backend's ``cast``, which the Numba backend serves with a kernel)
    if _is_bfloat16(x):
        return backend.cast(x, _FLOAT32)
    if isinstance(x, (list, tuple)):
        return x.__class__(_widen(backend, item) for item in x)
    return x


def _round(backend, out, bfloat16):
    # (through the backend's ``cast``, as ``_widen``)
    if out.__class__ is np.ndarray and out.dtype is _FLOAT32:
        return backend.cast(out, bfloat16)
    if isinstance(out, tuple):
        return tuple(_round(backend, item, bfloat16) for item in out)
    return out


def _bfloat16_among(args):
    """The bfloat16 numpy dtype when an argument (or an array in a list argument) has it."""
    for a in args:
        if a.__class__ is np.ndarray:
            if is_bfloat16(a.dtype):
                return a.dtype
        elif isinstance(a, (list, tuple)):
            for item in a:
                if _is_bfloat16(item):
                    return item.dtype
    return None


def computes_in_float32(method):
    """``method`` as it is for other dtypes; with a bfloat16 array among its arguments,
    run in float32 and its float32 results rounded to bfloat16 once.

    The common case (a float32 array first) costs two attribute reads and the comparison
    of one letter, the dtype's kind (``is_bfloat16``).  A first argument that is an array
    decides -- the ops cast the floating operands of a backend call to one dtype before
    calling it; otherwise (``einsum``'s equation,
    ``norm_of_arrays``'s list) every argument is looked at."""
    @functools.wraps(method)
    def opmath(self, first, *args, **kwargs):
        if first.__class__ is np.ndarray and first.dtype.kind != "V":  # not bfloat16
            return method(self, first, *args, **kwargs)
        bfloat16 = _bfloat16_among((first,) + args)
        if bfloat16 is None:
            return method(self, first, *args, **kwargs)
        return _round(self, method(self, _widen(self, first),
                                   *[_widen(self, a) for a in args], **kwargs), bfloat16)
    return opmath


def install(backend_class):
    """Wrap ``FLOAT32_METHODS`` of ``backend_class`` (the numpy reference backend)."""
    for name in FLOAT32_METHODS:
        setattr(backend_class, name, computes_in_float32(getattr(backend_class, name)))
