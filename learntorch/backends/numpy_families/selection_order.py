"""Which of several equal elements torch's CPU kernels pick: their selection algorithms, replayed.

``topk`` and ``kthvalue`` return *indices*, and where values tie the index depends on
the algorithm that partitioned the row.  torch's CPU ``topk`` runs the C++ standard
library's ``std::nth_element`` + ``std::sort`` (or ``std::partial_sort`` when k is at
most 1/64 of the row), from GCC's libstdc++ on Linux; ``kthvalue`` runs Sedgewick's
quickselect (aten/src/ATen/native/Sorting.cpp).  The index matters to a learner: the
gradient of ``topk`` goes to the element picked.  So, for rows with ties only (a row of
distinct values has one answer, which numpy's sort gives much faster), the code below
replays those algorithms step for step on a Python list of ``(value, index)`` pairs.

``less(x, y)`` compares pairs by value only, as torch's comparators do; NaN counts as
larger than any number and equal to another NaN.
"""
import math

_SORT_THRESHOLD = 16  # libstdc++'s _S_threshold: below it, sorting is by insertion


def _lg(n):
    return n.bit_length() - 1


def _swap(a, i, j):
    a[i], a[j] = a[j], a[i]


# ---------------------------------------------------------------- libstdc++ building blocks
def _move_median_to_first(a, result, x, y, z, less):
    if less(a[x], a[y]):
        if less(a[y], a[z]):
            _swap(a, result, y)
        elif less(a[x], a[z]):
            _swap(a, result, z)
        else:
            _swap(a, result, x)
    elif less(a[x], a[z]):
        _swap(a, result, x)
    elif less(a[y], a[z]):
        _swap(a, result, z)
    else:
        _swap(a, result, y)


def _unguarded_partition(a, first, last, pivot, less):
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        _swap(a, first, last)
        first += 1


def _unguarded_partition_pivot(a, first, last, less):
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(a, first + 1, last, first, less)


def _unguarded_linear_insert(a, last, less):
    value = a[last]
    prev = last - 1
    while less(value, a[prev]):
        a[last] = a[prev]
        last = prev
        prev -= 1
    a[last] = value


def _insertion_sort(a, first, last, less):
    if first == last:
        return
    for i in range(first + 1, last):
        if less(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _unguarded_linear_insert(a, i, less)


def _push_heap(a, first, hole, top, value, less):
    parent = (hole - 1) // 2
    while hole > top and less(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a, first, hole, length, value, less):
    top = second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if less(a[first + second], a[first + second - 1]):
            second -= 1
        a[first + hole] = a[first + second]
        hole = second
    if length % 2 == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        a[first + hole] = a[first + second - 1]
        hole = second - 1
    _push_heap(a, first, hole, top, value, less)


def _make_heap(a, first, last, less):
    length = last - first
    if length < 2:
        return
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, length, a[first + parent], less)


def _pop_heap(a, first, last, result, less):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, less)


def _heap_select(a, first, middle, last, less):
    _make_heap(a, first, middle, less)
    for i in range(middle, last):
        if less(a[i], a[first]):
            _pop_heap(a, first, middle, i, less)


def _sort_heap(a, first, last, less):
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, less)


# ---------------------------------------------------------------- the std:: algorithms
def partial_sort(a, middle, less):
    """``std::partial_sort(a.begin(), a.begin() + middle, a.end(), less)``."""
    _heap_select(a, 0, middle, len(a), less)
    _sort_heap(a, 0, middle, less)


def nth_element(a, nth, less):
    """``std::nth_element(a.begin(), a.begin() + nth, a.end(), less)`` (introselect)."""
    first, last = 0, len(a)
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, less)
            _swap(a, first, nth)
            return
        depth -= 1
        cut = _unguarded_partition_pivot(a, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, less)


def sort(a, last, less):
    """``std::sort(a.begin(), a.begin() + last, less)`` (introsort, then insertion sort)."""
    if last <= 0:
        return

    def introsort_loop(first, last, depth):
        while last - first > _SORT_THRESHOLD:
            if depth == 0:
                _heap_select(a, first, last, last, less)
                _sort_heap(a, first, last, less)
                return
            depth -= 1
            cut = _unguarded_partition_pivot(a, first, last, less)
            introsort_loop(cut, last, depth)
            last = cut

    introsort_loop(0, last, 2 * _lg(last))
    if last > _SORT_THRESHOLD:
        _insertion_sort(a, 0, _SORT_THRESHOLD, less)
        for i in range(_SORT_THRESHOLD, last):
            _unguarded_linear_insert(a, i, less)
    else:
        _insertion_sort(a, 0, last, less)


def sedgewick_select(a, k, greater):
    """torch's ``quick_select_template`` (Sedgewick 1978): puts the (k+1)-th smallest of
    ``a`` at position k, for ``kthvalue``; ``greater(x, y)`` is torch's gt_or_nan."""
    lo, hi = 0, len(a) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if greater(a[lo], a[hi]):
                _swap(a, lo, hi)
            return
        _swap(a, (lo + hi) >> 1, lo + 1)  # median of three as the pivot
        if greater(a[lo + 1], a[hi]):
            _swap(a, lo + 1, hi)
        if greater(a[lo], a[hi]):
            _swap(a, lo, hi)
        if greater(a[lo + 1], a[lo]):
            _swap(a, lo + 1, lo)
        i, j = lo + 1, hi
        pivot = a[lo]
        while True:
            i += 1
            while greater(pivot, a[i]):
                i += 1
            j -= 1
            while greater(a[j], pivot):
                j -= 1
            if j < i:
                break
            _swap(a, i, j)
        _swap(a, lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


# ---------------------------------------------------------------- torch's comparators
def nan_largest_greater(x, y):
    """x > y on the values of two pairs, NaN above every number (torch's gt_or_nan)."""
    xv, yv = x[0], y[0]
    return (math.isnan(xv) and not math.isnan(yv)) or xv > yv


def nan_largest_less(x, y):
    xv, yv = x[0], y[0]
    return (not math.isnan(xv) and math.isnan(yv)) or xv < yv


def topk_row(values, k, largest, sorted):
    """The indices torch's CPU ``topk`` returns for one row (a list of Python numbers)."""
    pairs = [(v, i) for i, v in enumerate(values)]
    less = nan_largest_greater if largest else nan_largest_less
    if k * 64 <= len(pairs):
        partial_sort(pairs, k, less)
    else:
        nth_element(pairs, k - 1, less)
        if sorted:
            sort(pairs, k - 1, less)
    return [i for _, i in pairs[:k]]


def sort_row(values, descending):
    """The order torch's CPU ``sort(stable=False)`` gives one row: ``std::sort``'s."""
    pairs = [(v, i) for i, v in enumerate(values)]
    sort(pairs, len(pairs), nan_largest_greater if descending else nan_largest_less)
    return [i for _, i in pairs]


def kthvalue_row(values, k):
    """The index torch's CPU ``kthvalue`` returns for the k-th smallest (k from 1)."""
    pairs = [(v, i) for i, v in enumerate(values)]
    sedgewick_select(pairs, k - 1, nan_largest_greater)
    return pairs[k - 1][1]


def _less_by_value(x, y):
    return x[0] < y[0]  # torch's mode compares with < alone (NaN is then "equal" to all)


def mode_row(values):
    """(value, index) torch's CPU ``mode`` returns for one row: the most frequent value
    (the smallest of equally frequent ones), at the index that ends its run after an
    (unstable) ``std::sort`` of the row by value."""
    pairs = [(v, i) for i, v in enumerate(values)]
    sort(pairs, len(pairs), _less_by_value)
    best, best_count, count = pairs[0], 0, 0
    for i, pair in enumerate(pairs):
        count += 1
        if i == len(pairs) - 1 or pair[0] != pairs[i + 1][0]:
            if count > best_count:
                best, best_count = pair, count
            count = 0
    return best
