"""The losses of ``nn.functional``: per-element (or per-row) losses, their reduction, and the
fused derivatives of the class losses.

The loss Functions (``nn/_functional/loss_*.py``) call these on arrays; the Numba backend
overrides the cross-entropy rows with one-pass kernels (``numba_cpu/losses_backend.py``).

**Rows.**  The class losses see one layout: a 2-D (M, C) array with the classes last and
one row per sample or position (the Function moves an (N, C, d1, ..., dk) input there
with views), and ``target`` as M class numbers (int64 or uint8).  A class number equal
to ``ignore_index`` marks a row that takes no part: its loss and its gradient are 0 and
it counts for nothing in the 'mean'.  Any other class number outside [0, C) is torch's
IndexError.

**Cross-entropy** of one row x with a *target distribution* q over its classes is
``-sum_c q_c * log_softmax(x)_c``, where (eps = label_smoothing, w = class weights, all 1
without a weight, t = the row's class number):

    q_c = (1 - eps) * w_t * [c == t]  +  eps / C * w_c        (0 for an ignored row)

'mean' divides the summed loss by ``sum_r w[t_r]`` over the rows not ignored.  With
p = softmax(x) and a = sum_c q_c, the gradient of a row's loss is ``a * p - q``.
"""
import numpy as np

from .. import reference as _reference


class LossFamily:
    # ------------------------------------------------------------------ reduction
    def loss_reduction(self, loss, reduction, count=None):
        """'none': ``loss`` itself; 'sum': its sum; 'mean': the sum divided by ``count``
        (default: the number of elements).  The mean of nothing (count 0) is NaN, as torch."""
        if reduction == "none":
            return loss
        total = _reference.as_array(loss.sum(), dtype=loss.dtype)
        if reduction == "sum":
            return total
        count = loss.size if count is None else count
        if count == 0 or count != count:  # 0 / 0 (or a NaN count): NaN, without numpy's warning
            return _reference.as_array(np.nan, dtype=loss.dtype)
        return _reference.as_array(total / count, dtype=loss.dtype)

    # ------------------------------------------------------------------ regression
    def mse_loss(self, input, target):
        """(input - target)^2, element by element (broadcast)."""
        d = _reference.as_array(input - target)
        return _reference.as_array(d * d)

    def mse_loss_backward(self, input, target, grad):
        """d/d input of (input - target)^2, times ``grad``: 2 * (input - target) * grad."""
        return _reference.as_array(2 * (input - target) * grad)

    def huber_loss(self, input, target, delta):
        """d^2 / 2 where |d| < delta, else delta * (|d| - delta / 2), for d = input - target."""
        d = _reference.as_array(input - target)
        z = np.abs(d)
        return np.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta)).astype(d.dtype)

    def smooth_l1_loss(self, input, target, beta):
        """d^2 / (2 beta) where |d| < beta, else |d| - beta / 2: Huber(beta) / beta."""
        d = _reference.as_array(input - target)
        z = np.abs(d)
        return np.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta).astype(d.dtype)

    # ------------------------------------------------------------------ binary
    def binary_cross_entropy(self, input, target, weight):
        """-w * (y log p + (1 - y) log(1 - p)) for probabilities p = input, y = target.

        As torch: each log is clamped to >= -100 (p = 0 or 1 gives a large finite loss),
        and a p or y outside [0, 1] is a RuntimeError.
        """
        _check_unit_interval(input, "input")
        _check_unit_interval(target, "target")
        log_p = np.maximum(np.log(input), -100)
        log_1mp = np.maximum(np.log1p(-input), -100)
        loss = -(target * log_p + (1 - target) * log_1mp)
        if weight is not None:
            loss = loss * weight
        return _reference.as_array(loss, dtype=input.dtype)

    def binary_cross_entropy_with_logits(self, input, target, weight, pos_weight):
        """Binary cross-entropy of logits x = input (p = sigmoid(x)), never forming p:

            loss = w * ((1 - y) * x - (1 + (pw - 1) * y) * log_sigmoid(x))

        with log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), finite for any x (the
        activation family's ``log_sigmoid``).
        """
        log_sig = self.log_sigmoid(input)
        if pos_weight is not None:
            loss = (1 - target) * input - (1 + (pos_weight - 1) * target) * log_sig
        else:
            loss = (1 - target) * input - log_sig
        if weight is not None:
            loss = loss * weight
        return _reference.as_array(loss, dtype=input.dtype)

    # ------------------------------------------------------------------ class targets (rows)
    def nll_loss_rows(self, logp, target, weight, ignore_index):
        """Per-row ``-w[t] * logp[r, t]`` (0 for an ignored row), and the 'mean' denominator
        ``sum_r w[t_r]`` over the rows not ignored (a Python float)."""
        n_rows, n_classes = logp.shape
        t, valid = class_rows(target, n_classes, ignore_index)
        wt = target_weights(weight, t, valid, logp.dtype)
        picked = logp[np.arange(n_rows), t]
        loss = np.where(valid, -wt * picked, 0).astype(logp.dtype, copy=False)
        return loss, float(wt.sum())

    def nll_loss_rows_backward(self, target, weight, ignore_index, row_grad, n_classes):
        """The (M, C) gradient of ``nll_loss_rows``' losses: ``-w[t_r] * row_grad[r]`` at each
        row's class, 0 elsewhere and in ignored rows (even where ``row_grad`` is NaN)."""
        t, valid = class_rows(target, n_classes, ignore_index)
        dtype = row_grad.dtype
        wt = target_weights(weight, t, valid, dtype)
        out = np.zeros((len(t), n_classes), dtype)
        out[np.arange(len(t)), t] = np.where(valid, -wt * row_grad, 0)
        return out

    def cross_entropy_rows(self, x, target, weight, ignore_index, label_smoothing):
        """Cross-entropy of each row of logits ``x`` (M, C) with class-number targets.

        Returns ``(logp, losses, total_weight)``: log_softmax of every row (computed as
        ``(x - max) - log(sum(exp(x - max)))``, finite for logits of +-1000), each row's
        loss, and the 'mean' denominator.  ``label_smoothing`` spreads eps / C of q over
        every class (see the module docstring).
        """
        n_rows, n_classes = x.shape
        t, valid = class_rows(target, n_classes, ignore_index)
        logp = self.log_softmax(x, 1) if x.size else x.copy()
        wt = target_weights(weight, t, valid, logp.dtype)
        loss = -wt * logp[np.arange(n_rows), t]
        eps = label_smoothing
        if eps > 0:
            spread = logp.sum(axis=1) if weight is None else logp @ weight
            loss = (1 - eps) * loss - (eps / n_classes) * spread
        # (where, not a product: 0 * -inf would be NaN where an ignored row has a -inf logit)
        loss = np.where(valid, loss, 0).astype(logp.dtype, copy=False)
        return logp, loss, float(wt.sum())

    def cross_entropy_rows_backward(self, logp, target, weight, ignore_index, label_smoothing,
                                    row_grad):
        """The (M, C) gradient of ``cross_entropy_rows``' losses: ``row_grad[r] * (a_r * p[r]
        - q[r])`` with p = exp(logp) = softmax(x); 0 in ignored rows (even where
        ``row_grad`` is NaN).  q is never built densely: its one-hot part is subtracted
        at each row's class, its spread part (label smoothing) from the whole row."""
        n_rows, n_classes = logp.shape
        t, valid = class_rows(target, n_classes, ignore_index)
        g = np.where(valid, row_grad, 0).astype(logp.dtype, copy=False)
        eps = label_smoothing
        onehot = (1 - eps) * target_weights(weight, t, valid, logp.dtype) * g  # q's one-hot part
        a = onehot                                                            # per row: sum q
        if eps > 0:
            spread = (eps / n_classes) * valid * g                            # q's spread part
            a = onehot + spread * (n_classes if weight is None else float(weight.sum()))
        gx = np.exp(logp) * a[:, None]
        gx[np.arange(n_rows), t] -= onehot
        if eps > 0:
            gx -= spread[:, None] * (1.0 if weight is None else weight)
        if not valid.all():  # (0 * exp(nan) would be nan in an ignored row of nan logits)
            gx = np.where(valid[:, None], gx, 0)
        return gx.astype(logp.dtype, copy=False)

    def class_target_distribution(self, target, weight, ignore_index, label_smoothing,
                                  n_classes, dtype):
        """The (M, C) target distribution q of each row (the module docstring), densely:
        what the second derivatives of cross-entropy are written with."""
        t, valid = class_rows(target, n_classes, ignore_index)
        eps = label_smoothing
        q = np.zeros((len(t), n_classes), dtype)
        q[np.arange(len(t)), t] = (1 - eps) * target_weights(weight, t, valid, dtype)
        if eps > 0:
            q += (eps / n_classes) * valid[:, None] * (1.0 if weight is None else weight)
        return q

    def soft_cross_entropy_rows(self, x, target, weight, label_smoothing):
        """Cross-entropy of rows of logits ``x`` with class *probabilities* ``target`` (M, C):
        q = ((1 - eps) * y + eps / C) * w.  Returns ``(logp, losses)``."""
        n_classes = x.shape[1]
        logp = self.log_softmax(x, 1) if x.size else x.copy()
        eps = label_smoothing
        q = target * (1 - eps) + eps / n_classes if eps > 0 else target
        if weight is not None:
            q = q * weight
        return logp, _reference.as_array(-(logp * q).sum(axis=1), dtype=logp.dtype)

    # ------------------------------------------------------------------ distributions
    def kl_div(self, input, target, log_target):
        """Pointwise KL divergence with ``input`` = log q: ``y * (log y - input)`` (0 where
        y = 0, as torch's xlogy), or ``exp(t) * (t - input)`` when the target t is a log too."""
        if log_target:
            return _reference.as_array(np.exp(target) * (target - input))
        safe = np.where(target == 0, 1, target)  # log(0) is never taken: y = 0 gives 0
        return _reference.as_array(np.where(target == 0, 0, target * (np.log(safe) - input))
                                   .astype(np.result_type(input, target), copy=False))


def _check_unit_interval(a, what):
    """torch's RuntimeError for a probability outside [0, 1] (NaN included)."""
    inside = (a >= 0) & (a <= 1)
    if not inside.all():
        outside = a[~inside]
        raise RuntimeError(f"all elements of {what} should be between 0 and 1 "
                           f"(binary_cross_entropy got {outside.size} outside, e.g. "
                           f"{outside.flat[0]}); pass probabilities, e.g. torch.sigmoid(logits), "
                           "or use binary_cross_entropy_with_logits on the logits")


def class_rows(target, n_classes, ignore_index):
    """The M class numbers as array indices, and which rows count (are not ``ignore_index``).

    Ignored rows get class 0, a valid index, so every row can be gathered in one
    vectorized step; ``valid`` masks them out afterwards.  A class number outside
    [0, C) is torch's IndexError, naming it.
    """
    t = target.reshape(-1).astype(np.intp, copy=False)
    valid = t != ignore_index
    all_valid = valid.all()
    bad = (t < 0) | (t >= n_classes)
    if not all_valid:
        bad &= valid
    if bad.any():
        first = t[np.argmax(bad)]
        raise IndexError(f"Target {first} is out of bounds. Class numbers must be in [0, "
                         f"{n_classes - 1}] for an input with {n_classes} classes (or equal to "
                         f"ignore_index={ignore_index})")
    if not all_valid:
        t = np.where(valid, t, 0)
    return t, valid


def target_weights(weight, t, valid, dtype):
    """The weight of each row's class, w[t] (1 without a weight); 0 where ignored.

    Their sum is what a 'mean' divides by: the count of rows that were not
    ignored, or, with class weights, the total weight of their classes.
    """
    if weight is None:
        return valid.astype(dtype)
    return np.where(valid, weight[t], 0).astype(dtype, copy=False)
