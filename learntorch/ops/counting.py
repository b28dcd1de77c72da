"""Counting values: bincount (how often each small integer occurs) and histc (a histogram of
equal-width bins).  Neither is differentiable: a count does not change when a value moves
a little."""
import numpy as np

from .. import _dtypes, backends
from ._helpers import require_tensors, wrap


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ..., max(input) occurs in the 1-D non-negative integer
    ``input`` (at least ``minlength`` counts); with ``weights``, their sums instead."""
    require_tensors("bincount", ("input", input))
    if input._dtype.is_floating_point:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{_FLOAT_NAMES[input._dtype.name]}': bincount counts "
                                  "integers; convert first, e.g. x.long()")
    if input.ndim != 1 or input._dtype is _dtypes.bool_ or (
            input.numel() and int(input.min()) < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got "
                           f"{input._dtype} of shape {list(input.shape)})")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0, got {minlength}")
    w = None
    if weights is not None:
        require_tensors("bincount", ("weights", weights))
        if weights.shape != input.shape:
            raise RuntimeError(f"weights should be 1-d and have the same length as input (input "
                               f"{list(input.shape)}, weights {list(weights.shape)})")
        # torch keeps float32 weights in float32 and sums every other dtype as float64
        out_dtype = np.float32 if weights._dtype is _dtypes.float32 else np.float64
        w = backends.current.cast(weights._data, out_dtype)
    if input.numel() == 0:  # (torch counts nothing in int64, weights or not)
        w = None
    counts = backends.current.bincount(input._data, w, int(minlength))
    return wrap(backends.current.cast(counts, np.int64 if w is None else w.dtype))


def histc(input, bins=100, min=0, max=0):
    """Counts of ``input`` in ``bins`` equal-width bins over [min, max] (the data's own
    range when both are 0); values outside, and nan, are not counted."""
    require_tensors("histc", ("input", input))
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{_TORCH_NAMES.get(input._dtype.name, input._dtype)}': "
                                  "histc takes floating tensors, e.g. x.float()")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi == 0 and input.numel():  # the data's own range
        finite = input[input.isfinite()]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.numel() else (0.0, 0.0)
    if lo == hi:  # one value everywhere: a range of width 2 around it
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"torch.histc(): max must be larger than min, but got min {lo} and "
                           f"max {hi}")
    return wrap(backends.current.histc(input._data, int(bins), lo, hi))


_FLOAT_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}
_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}
