"""Reading and writing elements chosen by index arrays or masks, in numpy: gather, scatter (with
its reductions), index_select, index_add, masked_fill, advanced indexing, nonzero.

Index arrays are int64/int32 and already checked (in range, right shape) by the op;
dims are non-negative.  All return new arrays: none writes into its input (the writes
into a tensor's own memory are in ``writes.py``).
"""
import numpy as np


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


def _full_index(index, dim):
    """Index arrays addressing, for every position of ``index``, the element it names along dim."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


# scatter_reduce's reductions: the ufunc that combines, and the value of "nothing yet"
_REDUCE_UFUNC = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce, dtype):
    """The value that leaves ``reduce`` unchanged: 0, 1, or the lowest / highest value."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype) if dtype.kind in "iu" \
        else None
    if info is None:  # bool
        return reduce == "amin"
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    return info.min if reduce == "amax" else info.max


class Indexing:
    def gather(self, a, dim, index):
        """out[i][j][k] = a[index[i][j][k]][j][k] along ``dim`` (0-d counts as 1-d)."""
        a1 = np.atleast_1d(a)
        out = a1[_full_index(np.atleast_1d(index), dim)]
        return _arr(out.reshape(index.shape))

    def scatter(self, a, dim, index, src):
        """A copy of ``a`` with ``src`` (an array, or a number) written at ``index`` along
        ``dim``; where an index repeats, the last write wins."""
        # a row-major copy whatever a's layout, as torch's (its result views like a new tensor)
        out = np.array(np.atleast_1d(a), copy=True, order="C", like=a)  # on a's device
        idx = np.atleast_1d(index)
        out[_full_index(idx, dim)] = self._source(src, idx)
        return out.reshape(a.shape)

    def scatter_add(self, a, dim, index, src):
        """A copy of ``a`` with ``src`` added at ``index`` (repeated indices accumulate)."""
        out = np.array(np.atleast_1d(a), copy=True, order="C", like=a)
        idx = np.atleast_1d(index)
        np.add.at(out, _full_index(idx, dim), self._source(src, idx))
        return out.reshape(a.shape)

    def scatter_reduce(self, a, dim, index, src, reduce, include_self):
        """A copy of ``a`` where each position named by ``index`` becomes the ``reduce``
        ("sum", "prod", "mean", "amax", "amin") of the ``src`` elements sent to it, and of
        its own value when ``include_self``; positions nothing is sent to keep their value.
        (An integer mean rounds down, as torch's.)"""
        out = np.array(np.atleast_1d(a), copy=True, order="C")
        idx = np.atleast_1d(index)
        where = _full_index(idx, dim)
        if not include_self:  # the reached positions start from the reduction's identity
            hit = np.zeros(out.shape, bool)
            hit[where] = True
            out[hit] = _identity(reduce, out.dtype)
        _REDUCE_UFUNC.get(reduce, np.add).at(out, where, self._source(src, idx))
        if reduce == "mean":
            counts = np.full(out.shape, 1 if include_self else 0, np.int64)
            np.add.at(counts, where, 1)
            counts = np.maximum(counts, 1)  # positions nothing reached keep their value
            out = (out / counts if out.dtype.kind == "f" else np.floor_divide(out, counts))
        return _arr(out.reshape(a.shape), dtype=a.dtype)

    @staticmethod
    def _source(src, idx):
        """The part of ``src`` that the index shape covers (a number as it is)."""
        if hasattr(src, "shape") and np.ndim(src):
            return np.atleast_1d(src)[tuple(slice(0, s) for s in idx.shape)]
        if hasattr(src, "shape"):
            return np.atleast_1d(src)[tuple(slice(0, 1) for _ in idx.shape)]
        return src

    def index_select(self, a, dim, index):
        """The slices of ``a`` along ``dim`` at the positions in the 1-D ``index``."""
        if a.ndim == 0:
            return a.copy()
        return _arr(np.take(a, index, axis=dim))

    def index_add(self, a, dim, index, source, alpha):
        """A copy of ``a`` with ``alpha * source``'s slices added at ``index`` along ``dim``."""
        out = np.array(np.atleast_1d(a), copy=True, order="C", like=a)
        moved = np.moveaxis(out, dim, 0)  # a view: writes land in ``out``
        s = np.moveaxis(np.atleast_1d(source), dim, 0)
        np.add.at(moved, index, s * alpha if alpha != 1 else s)
        return out.reshape(a.shape)

    def advanced_index(self, a, index):
        """``a[index]`` for a tuple of slices and index arrays/masks: a new, C-contiguous array."""
        out = a[index]  # (ascontiguousarray would make a 0-d result 1-d)
        return np.ascontiguousarray(out, like=out) if out.ndim else _arr(out)

    def masked_fill(self, a, mask, value):
        """``value`` where ``mask`` is True, else ``a`` (mask broadcast to a's shape)."""
        # (np.where makes a new array of the broadcast shape, 0-d included)
        # (row-major whatever a's layout, as torch's)
        filled = np.where(mask, np.asarray(value, like=a).astype(a.dtype), a)
        return _arr(np.asarray(filled, order="C", like=filled), dtype=a.dtype)  # (0-d stays)

    def nonzero(self, a):
        """The coordinates of the nonzero elements: an int64 array of shape (n, a.ndim)."""
        if a.ndim == 0:  # one element: one empty coordinate row if it is nonzero
            return np.zeros((int(bool(a)), 0), np.int64, like=a)
        coordinates = np.stack(np.nonzero(a), axis=1).astype(np.int64)
        return np.ascontiguousarray(coordinates, like=coordinates)

    def nonzero_tuple(self, a):
        """The coordinates of the nonzero elements, one int64 array per dim (a 0-d input
        counts as 1-d)."""
        return tuple(_arr(i, dtype=np.int64) for i in np.nonzero(np.atleast_1d(a)))
