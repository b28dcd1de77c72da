"""Class-index targets: the shapes, dtypes and values ``nll_loss`` and ``cross_entropy`` accept.

The input holds one score (or log-probability) per class along dim 1:

=====================  ==================  =======================================
input                  target              meaning
=====================  ==================  =======================================
(C,)                   () or (1,)          one unbatched sample
(N, C)                 (N,)                a batch of N samples
(N, C, d1, ..., dk)    (N, d1, ..., dk)    one class per position (e.g. per pixel)
=====================  ==================  =======================================

A target is an int64 (or uint8) class number in [0, C), or ``ignore_index``:
that position then contributes nothing, not even to the denominator of the mean
(the backend checks the values: ``backends/numpy_families/losses.py``).

The backend sees a single layout, *rows*: a 2-D (M, C) array with the classes
last and one row per sample/position (M = N * d1 * ... * dk).  ``to_rows`` and
``from_rows`` move between the two with views; for (N, C) input they cost nothing.
"""
import numpy as np

from ..._dtypes import float16, float32

TARGET_DTYPES = ("int64", "uint8")


def class_dim(input):
    return 0 if input.ndim == 1 else 1


def check_index_target(name, input, target):
    """Torch's errors for an index target whose dtype or shape does not fit ``input``."""
    in_shape, t_shape = input._data.shape, target._data.shape  # (plain tuples are faster)
    if target._dtype.name in TARGET_DTYPES and len(in_shape) == 2 and t_shape == in_shape[:1]:
        return  # the common case, (N, C) with (N,), needs no more checks
    shapes = f"input of shape {list(in_shape)} and target of shape {list(t_shape)}"
    if target._dtype.name not in TARGET_DTYPES:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {short_name(target)} ({name} with "
            f"{shapes}). Class-index targets are int64 class numbers: convert with "
            "target.long(); class probabilities need a float target of the input's shape.")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got 0): {name} needs scores for each "
                         f"class, an input of shape [C] or [N, C, ...]; got {shapes}")
    if input.ndim == 1:
        if target.ndim > 1 or target.numel() != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: "
                f"{target.numel()} ({shapes}); an unbatched input of shape [C] takes one class "
                "number, target of shape [] or [1]")
        return
    if target.ndim == 0 or input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0}): {name} got {shapes}; the target needs "
            f"one class per sample, shape {expected_target_shape(input)}")
    if input.ndim == 2 and target.ndim != 1:
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported: {name} got {shapes}; "
            f"index targets need shape {expected_target_shape(input)}, class probabilities the "
            "input's shape")
    if input.ndim > 2 and tuple(target.shape) != expected_target_shape(input, as_list=False):
        raise RuntimeError(
            f"Expected target size {expected_target_shape(input)}, got {list(target.shape)}: "
            f"{name} got {shapes}; the target drops the class dim 1 of the input")


def expected_target_shape(input, as_list=True):
    shape = tuple(input.shape[:1]) + tuple(input.shape[2:])
    return list(shape) if as_list else shape


def check_class_weight(name, weight, input, same_dtype=True):
    """A class weight is a 1-D tensor of C floats (of the input's dtype, for index targets)."""
    if weight is None:
        return
    n_classes = input.shape[class_dim(input)] if input.ndim else 1
    if weight.ndim != 1 or weight.shape[0] != n_classes:
        prefix = "" if same_dtype else "cross_entropy: "
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {list(weight.shape)} ({name} with input of "
            f"shape {list(input.shape)}: pass one weight per class, shape [{n_classes}])")
    if same_dtype and weight._dtype is not input._dtype:
        raise RuntimeError(
            f"expected scalar type {short_name(input)} but found {short_name(weight)}: {name}'s "
            f"weight must have the input's dtype {input.dtype}; convert it with "
            f"weight.to({input.dtype})")


def short_name(t):
    """torch's short dtype name: Float, Double, Long, ..."""
    return t._type_name().replace("torch.", "").replace("Tensor", "")


def working_dtype(a):
    """float16 is computed in float32 (sums of many float16 terms lose too much), like torch."""
    return float32.np if a.dtype == float16.np else a.dtype


def to_rows(a):
    """(N, C, d1, ..., dk) -> (M, C) with classes last; (C,) -> (1, C); (N, C) unchanged.

    (A reshape, which copies only when the moved classes are not already last.)"""
    if a.ndim == 1:
        return a.reshape(1, -1)
    if a.ndim == 2:
        return a
    return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1])


def from_rows(rows, shape):
    """The inverse of ``to_rows`` for an input of ``shape``."""
    if len(shape) <= 2:
        return rows.reshape(shape)
    moved = rows.reshape((shape[0],) + tuple(shape[2:]) + (shape[1],))
    return np.moveaxis(moved, -1, 1)


def loss_shape(input_shape):
    """The shape of reduction='none': the input's without its class dim."""
    return input_shape[:1] + input_shape[2:] if len(input_shape) > 1 else ()
