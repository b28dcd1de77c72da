"""Sum of each row of a 2-D array: ``out[r] = x[r, 0] + x[r, 1] + ...``.

The backend hands over a **C-contiguous (rows, n)** array whose rows are the
groups to sum: the reduced dimensions are the trailing ones, so each group is
one contiguous run of memory.  (For a single long row, as in ``x.sum()``, the
backend first cuts the row into equal chunks, makes each chunk a row, and adds
the few chunk sums afterwards, so that every core still gets work.)

Thread layout: ``prange`` over rows; each thread owns whole rows, keeps the
running sum in a local variable (a register) and writes only ``out[r]``.

Accuracy and speed come from the same two choices:

* the running sum is float64 even for float32 input (``s = 0.0``), rounded
  once when stored;
* the loop is compiled with ``fastmath={"reassoc"}``: it allows the compiler to
  reorder the additions, i.e. to keep several running sums at once in the
  lanes of a SIMD register and combine them at the end.  Without it the loop
  must add one element at a time in order, and numpy (which already sums in
  SIMD lanes, pairwise) is faster.  Measured at float32 on one core, 10^4 rows
  of 100: 370 us in order, 55 us reassociated, numpy 260 us.  Results agree
  with numpy's to rounding, not bit for bit.  No other fast-math flag is set,
  so NaN and inf still propagate.
"""
from numba import njit, prange


@njit(parallel=True, cache=True, error_model="numpy", fastmath={"reassoc"})
def sum_rows(x, out):
    rows, n = x.shape
    for r in prange(rows):
        s = 0.0
        for j in range(n):
            s += x[r, j]
        out[r] = s
