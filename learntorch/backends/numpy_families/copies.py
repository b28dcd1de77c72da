"""New arrays made of an array's elements, moved or repeated, in numpy: copies with a chosen
layout, casts, flips, rolls, tiles, repeats, triangles and diagonals, and fresh arrays
filled with one value.

A view (same memory, new shape/strides) is not here: views are array bookkeeping
(``ops/strides.py``).  These all allocate, on the device of their input (``like=``).
"""
import numpy as np

from ..opmath import is_bfloat16
from ..strided import strided_array


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


class Copies:
    def copy(self, a, strides=None):
        """A copy of ``a`` laid out with ``strides`` (in elements; row-major when None)."""
        if strides is None:
            out = np.empty(a.shape, dtype=a.dtype, like=a)
        else:
            span = 0 if 0 in a.shape else 1 + sum((n - 1) * s for n, s in zip(a.shape, strides))
            out = strided_array(np.empty(span, dtype=a.dtype, like=a), a.shape, strides)
        np.copyto(out, a)
        return out

    def cast(self, a, dtype):
        """A copy of ``a`` converted to numpy ``dtype`` (C's conversions: floats to ints
        truncate towards zero, out-of-range integers wrap).  A bfloat16 array goes to an
        integer or bool dtype through float32, as torch's conversion does (``ml_dtypes``'s
        own cast to uint8 saturates where C's wraps: -7.5 becomes 249 in torch)."""
        if is_bfloat16(a.dtype) and np.dtype(dtype).kind in "iub":
            a = a.astype(np.float32)
        out = a.astype(dtype)
        # (autocast casts every weight of every step: the common case costs no call more)
        return out if out.__class__ is np.ndarray else _arr(out, dtype=dtype)

    def full(self, shape, value, dtype, like=None):
        """A new array of ``shape`` with every element ``value``, on ``like``'s device."""
        if like is None or like.__class__ is np.ndarray:
            return np.full(shape, value, dtype=dtype)
        out = np.zeros(shape, dtype=dtype, like=like)  # a device array: made on its device
        if value != 0:
            out.fill(value)
        return out

    def flip(self, a, dims):
        return np.flip(a, axis=dims).copy()

    def tile(self, a, reps):
        """``a`` repeated ``reps[i]`` times along each dim (``Tensor.repeat``)."""
        return _arr(np.tile(a, reps))

    def roll(self, a, shifts, dims):
        """Elements shifted along ``dims`` by ``shifts``, wrapping around (None: flattened)."""
        return _arr(np.roll(a, shifts, axis=dims))

    def repeat_interleave(self, a, repeats, dim):
        """Each element (slice along ``dim``) repeated ``repeats`` times in a row."""
        return _arr(np.repeat(a, repeats, axis=dim))

    def tril(self, a, diagonal):
        """The lower triangle of the last two dims (elements with j - i <= diagonal)."""
        return _arr(np.tril(a, diagonal))

    def triu(self, a, diagonal):
        return _arr(np.triu(a, diagonal))

    def diag_embed(self, a, offset, dim1, dim2):
        """A new array whose (dim1, dim2) planes hold the last dim of ``a`` on the diagonal
        ``offset``, zeros elsewhere."""
        n = a.shape[-1] + abs(offset)
        out_ndim = a.ndim + 1
        batch = a.shape[:-1]
        out = np.zeros(batch + (n, n), dtype=a.dtype)
        i = np.arange(a.shape[-1])
        rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
        out[..., rows, cols] = a
        # the planes were built in the last two dims: move them to dim1 and dim2
        return np.ascontiguousarray(np.moveaxis(out, (out_ndim - 2, out_ndim - 1), (dim1, dim2)))
