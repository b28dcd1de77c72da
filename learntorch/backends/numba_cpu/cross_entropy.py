"""Cross-entropy with class-number targets: one pass over the logits forward, one backward.

The numpy reference of ``nn.functional.cross_entropy`` (``LossFamily.cross_entropy_rows``
and its backward, ``backends/numpy_families/losses.py``) runs about twenty
whole-array operations: log_softmax (max, subtract, exp,
sum, log, subtract), the checks of the targets, the pick of each row's target
and the sums.  On a classifier's output -- a (batch, classes) array of a few
thousand numbers -- each costs about a microsecond of call overhead and almost
no arithmetic.  These kernels do the common case in one loop each:

* ``cross_entropy_rows(x, target, ignore_index, logp, losses)`` -- for every
  row r of x (N, C): ``logp[r] = log_softmax(x[r])`` computed as
  ``(x - max) - log(sum(exp(x - max)))`` (finite for logits of +-1000), and
  ``losses[r] = -logp[r, target[r]]``, 0 for a row whose target is
  ``ignore_index``.  Returns the number of rows not ignored, or ``-1 - r`` for
  the first row r whose target is not a class number (the caller raises
  torch's IndexError naming it).
* ``cross_entropy_rows_backward(logp, target, ignore_index, row_grad, out)`` --
  ``out[r, c] = row_grad[r] * (exp(logp[r, c]) - [c == target[r]])``: softmax
  minus the one-hot target, scaled by the gradient of the row's loss; 0 for
  an ignored row.

Contract: x / logp / out are C-contiguous (N, C) float32 or float64 arrays of
one dtype, target a 1-D int64 array of N class numbers, row_grad a 1-D array
of N gradients of that float dtype.  One thread (no ``prange``): a batch of a
classifier is far too small to repay waking a second one (``loader.py``).
Class weights and label smoothing stay with the numpy reference (``losses_backend.py``
decides).
"""
import math

from numba import njit

_KERNEL = dict(cache=True, error_model="numpy", boundscheck=False)


@njit(**_KERNEL)
def cross_entropy_rows(x, target, ignore_index, logp, losses):
    n_rows, n_classes = x.shape
    counted = 0
    for r in range(n_rows):
        t = target[r]
        ignored = t == ignore_index
        if not ignored and (t < 0 or t >= n_classes):
            return -1 - r
        top = x[r, 0]
        for c in range(1, n_classes):
            if x[r, c] > top or x[r, c] != x[r, c]:  # NaN wins, so the row stays NaN
                top = x[r, c]
        total = 0.0
        for c in range(n_classes):
            total += math.exp(x[r, c] - top)
        shift = top + math.log(total)
        for c in range(n_classes):
            logp[r, c] = x[r, c] - shift
        if ignored:
            losses[r] = 0.0
        else:
            losses[r] = -logp[r, t]
            counted += 1
    return counted


@njit(**_KERNEL)
def cross_entropy_rows_backward(logp, target, ignore_index, row_grad, out):
    n_rows, n_classes = logp.shape
    for r in range(n_rows):
        t = target[r]
        if t == ignore_index:
            for c in range(n_classes):
                out[r, c] = 0.0
            continue
        g = row_grad[r]
        for c in range(n_classes):
            out[r, c] = g * math.exp(logp[r, c])
        out[r, t] -= g
