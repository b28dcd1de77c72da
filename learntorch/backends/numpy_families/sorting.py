"""Sorting and order statistics along one dim, in numpy: the *indices* that sort, select the k
largest, or pick a median, k-th value or mode; and ``unique``, ``searchsorted``.

Order rules, as torch's: NaN is larger than every number, -0.0 equals 0.0.  Where
values tie, torch's CPU kernels decide which index comes first by the algorithm they
run; the rows with ties replay it (``selection_order.py``), the others take numpy's
sort, which gives the one possible answer.  Index results are int64 arrays.
"""
import numpy as np

from . import selection_order


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


def _rows_with_ties(a, dim):
    """A bool per row along ``dim`` (keepdims): True where two elements are equal (NaNs
    count as equal to each other), the rows whose answer depends on the algorithm."""
    s = np.sort(a, axis=dim)
    first, rest = np.take(s, np.arange(s.shape[dim] - 1), axis=dim), np.take(
        s, np.arange(1, s.shape[dim]), axis=dim)
    same = first == rest
    if a.dtype.kind == "f":
        same |= np.isnan(first) & np.isnan(rest)
    return same.any(axis=dim, keepdims=True)


def _each_row(a, dim, fn, width):
    """``fn(list of the row's values) -> list of width ints`` for every row along ``dim``."""
    moved = np.moveaxis(a, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.array([fn(row.tolist()) for row in rows], dtype=np.int64).reshape(
        moved.shape[:-1] + (width,))
    return np.moveaxis(out, -1, dim)


# the most elements (rows with ties, all together) an unstable sort replays in Python;
# beyond it, the stable order (docs/api.md, "Known differences")
REPLAY_LIMIT = 100_000


class Sorting:
    def argsort(self, a, dim, descending, stable=True):
        """Indices that sort ``a`` along ``dim``, equal elements in input order (stable).

        numpy's stable sort already puts NaN last.  A descending sort that is still
        stable sorts the *reversed* array ascending and reverses the answer (negating
        would not work for bools, unsigned ints or NaN).  ``stable=False`` is torch's
        default sort, libstdc++'s ``std::sort``: the rows with ties replay it, so equal
        elements come in torch's order (and so do their gradients)."""
        if not descending:
            order = _arr(np.argsort(a, axis=dim, kind="stable"), dtype=np.int64)
        else:
            n = a.shape[dim]
            reversed_order = np.argsort(np.flip(a, dim), axis=dim, kind="stable")
            order = _arr((n - 1) - np.flip(reversed_order, dim), dtype=np.int64)
        if stable or a.__class__ is not np.ndarray or a.shape[dim] <= 16:
            return order  # (up to 16 elements std::sort is an insertion sort: stable)
        ties = _rows_with_ties(a, dim)
        if not ties.any() or ties.sum() * a.shape[dim] > REPLAY_LIMIT:
            return order
        moved, moved_ties = np.moveaxis(order, dim, -1).copy(), np.moveaxis(ties, dim, -1)
        rows = np.moveaxis(a, dim, -1)[moved_ties[..., 0]]
        moved[moved_ties[..., 0]] = [selection_order.sort_row(row.tolist(), descending)
                                     for row in rows]
        return np.moveaxis(moved, -1, dim)

    def topk(self, a, k, dim, largest, sorted):
        """Indices of the k largest (smallest) along ``dim``, in torch's order."""
        n = a.shape[dim]
        if k == 0 or n == 0:
            shape = list(a.shape)
            shape[dim] = k
            return np.zeros(shape, np.int64)
        order = np.take(self.argsort(a, dim, largest), np.arange(k), axis=dim)
        if a.__class__ is not np.ndarray or (sorted or k * 64 <= n) and not _rows_with_ties(
                a, dim).any():
            return order  # one possible answer (or a device array: its own sort)
        replayed = _each_row(a, dim, lambda row: selection_order.topk_row(row, k, largest,
                                                                          sorted), k)
        return replayed

    def kthvalue(self, a, k, dim):
        """Index of the k-th smallest along ``dim`` (k from 1), keepdims, in torch's choice."""
        order = np.take(self.argsort(a, dim, False), [k - 1], axis=dim)
        ties = _rows_with_ties(a, dim)
        if not ties.any():
            return order
        replayed = _each_row(a, dim, lambda row: [selection_order.kthvalue_row(row, k)], 1)
        return np.where(ties, replayed, order)

    def median_index(self, a, dim):
        """Index of the lower median along ``dim`` (keepdims): the ((n - 1) // 2)-th in a
        stable sort, or the first NaN of a row that has one (torch.median's rules)."""
        n = a.shape[dim]
        order = np.take(self.argsort(a, dim, False), [(n - 1) // 2], axis=dim)
        if a.dtype.kind != "f":
            return order
        nan = np.isnan(a)
        first_nan = np.argmax(nan, axis=dim, keepdims=True)
        return np.where(nan.any(axis=dim, keepdims=True), first_nan, order)

    def mode(self, a, dim):
        """(values, indices) keepdims: the most frequent value of each row (the smallest
        of equally frequent ones) and the index torch's CPU kernel reports for it."""
        moved = np.moveaxis(a, dim, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        picked = [selection_order.mode_row(row.tolist()) for row in rows]
        shape = moved.shape[:-1] + (1,)
        values = np.array([v for v, _ in picked], dtype=a.dtype).reshape(shape)
        indices = np.array([i for _, i in picked], dtype=np.int64).reshape(shape)
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)

    def unique(self, a, return_inverse, return_counts):
        """The sorted distinct values of ``a`` (flattened), each NaN distinct as in torch,
        with the inverse indices (a's shape) and counts when asked."""
        flat = a.reshape(-1)
        order = np.argsort(flat, kind="stable")
        s = flat[order]
        new = np.ones(s.shape, bool)
        if s.size:
            new[1:] = s[1:] != s[:-1]  # NaN != NaN: every NaN starts a group of its own
        values = s[new]
        group = np.cumsum(new) - 1
        inverse = np.empty(flat.shape, np.int64)
        inverse[order] = group
        counts = np.bincount(group, minlength=values.size).astype(np.int64)
        return values, inverse.reshape(a.shape), counts

    def unique_dim(self, a, dim, return_inverse, return_counts):
        """The distinct slices of ``a`` along ``dim``, sorted lexicographically."""
        moved = np.moveaxis(a, dim, 0)
        rows = moved.reshape(moved.shape[0], -1)
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
        s = rows[order]
        new = np.ones(s.shape[0], bool)
        if s.shape[0]:
            new[1:] = (s[1:] != s[:-1]).any(axis=1)
        group = np.cumsum(new) - 1
        inverse = np.empty(rows.shape[0], np.int64)
        inverse[order] = group
        counts = np.bincount(group, minlength=int(new.sum())).astype(np.int64)
        values = np.moveaxis(s[new].reshape((-1,) + moved.shape[1:]), 0, dim)
        return np.ascontiguousarray(values), inverse, counts

    def unique_consecutive(self, a, dim):
        """(values, inverse, counts) of runs of equal elements (slices along ``dim``, or
        elements of the flattened array when ``dim`` is None)."""
        if dim is None:
            rows = a.reshape(-1, 1)
        else:
            moved = np.moveaxis(a, dim, 0)
            rows = moved.reshape(moved.shape[0], -1)
        new = np.ones(rows.shape[0], bool)
        if rows.shape[0]:
            new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        inverse = (np.cumsum(new) - 1).astype(np.int64)
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, rows.shape[0])).astype(np.int64)
        if dim is None:
            return a.reshape(-1)[new].copy(), inverse.reshape(a.shape), counts
        values = np.moveaxis(moved[new], 0, dim)
        return np.ascontiguousarray(values), inverse, counts

    def searchsorted(self, sorted_sequence, values, right):
        """For each value, where it would go in the sorted last dim of ``sorted_sequence``
        (a 1-D sequence serves every value; else row i serves row i of ``values``)."""
        side = "right" if right else "left"
        if sorted_sequence.ndim == 1:
            return _arr(np.searchsorted(sorted_sequence, values, side=side), dtype=np.int64)
        seq = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
        vals = values.reshape(seq.shape[0], -1)
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, vals)])
        return _arr(out.reshape(values.shape), dtype=np.int64)
