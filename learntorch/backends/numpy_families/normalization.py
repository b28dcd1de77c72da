"""Normalisation: the statistics, the normalising step and its derivative, for batch, layer
and group norm alike.

Each of them computes, over some dims of ``x`` ("the group" of each element)::

    x_hat = (x - mean) * inv_std,   inv_std = 1 / sqrt(var + eps)     y = x_hat * w + b

with the *biased* variance (divided by n, not n - 1).  They differ only in the group
(batch norm: the batch and spatial dims of each channel; layer norm: the last dims of
each sample; group norm: a group of channels of each sample), which the layer picks
by viewing ``x`` and the parameters in shapes where the group is a set of dims.

The derivative, with g = dLoss/dx_hat and means taken over the group::

    dx = inv_std * (g - mean(g) - x_hat * mean(g * x_hat))

The two subtracted terms are what flows back through ``mean`` and ``var``, which
depend on every x of the group.  With fixed statistics (batch norm in eval mode:
the running averages) only ``dx = g * inv_std`` is left.  The parameters' gradients
are sums over the dims the parameters were broadcast along:
``dw = sum(dLoss/dy * x_hat)``, ``db = sum(dLoss/dy)``.

Every method keeps the statistics as size-1 dims, so they broadcast against ``x``.
"""
import numpy as np

from .. import reference as _reference


class NormalizationFamily:
    def norm_statistics(self, x, dims):
        """(mean, var) of ``x`` over ``dims``, kept as size-1 dims; var is the biased one,
        computed in two passes (the mean first, so no cancellation)."""
        if x.size == 0:  # an empty batch: nothing to normalise, and no means of nothing
            shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
            return (np.zeros(shape, dtype=x.dtype, like=x), np.ones(shape, dtype=x.dtype, like=x))
        mean = x.mean(axis=dims, keepdims=True)
        var = np.square(x - mean).mean(axis=dims, keepdims=True)
        return mean, var

    def inverse_std(self, var, eps):
        """1 / sqrt(var + eps)."""
        return _reference.as_array(1 / np.sqrt(var + eps))

    def normalize(self, x, mean, inv_std, weight=None, bias=None):
        """(x - mean) * inv_std, times ``weight`` and plus ``bias`` when given (each already
        shaped to broadcast against ``x``)."""
        out = (x - mean) * inv_std
        if weight is not None:
            out *= weight
        if bias is not None:
            out += bias
        return out

    def normalize_backward(self, grad, x, mean, inv_std, dims, batch_statistics=True):
        """dLoss/dx of ``normalize`` (without its weight and bias) for ``grad`` = dLoss/dx_hat;
        with ``batch_statistics`` the mean and var were computed from ``x`` over ``dims``."""
        if not batch_statistics or grad.size == 0:
            return _reference.as_array(grad * inv_std)
        x_hat = (x - mean) * inv_std
        return inv_std * (grad - grad.mean(axis=dims, keepdims=True)
                          - x_hat * (grad * x_hat).mean(axis=dims, keepdims=True))

    def normalize_affine_backward(self, grad, x, mean, inv_std, shape):
        """(dLoss/dweight, dLoss/dbias) for ``grad`` = dLoss/dy: sum(grad * x_hat) and
        sum(grad) over the dims where a weight of ``shape`` was broadcast."""
        x_hat = (x - mean) * inv_std
        dims = _broadcast_dims(grad.shape, shape)
        return (_reference.as_array(np.sum(grad * x_hat, axis=dims).reshape(shape)),
                _reference.as_array(np.sum(grad, axis=dims).reshape(shape)))

    def running_average(self, running, batch, momentum):
        """(1 - momentum) * running + momentum * batch, in ``running``'s dtype (batch norm's
        running statistics)."""
        return (1 - momentum) * running + momentum * batch.astype(running.dtype, copy=False)


def _broadcast_dims(shape, small):
    """The dims of ``shape`` along which an array of shape ``small`` was broadcast to it."""
    lead = len(shape) - len(small)
    return tuple(range(lead)) + tuple(lead + d for d, n in enumerate(small)
                                      if n == 1 and shape[lead + d] != 1)
