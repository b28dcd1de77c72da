"""``F.dropout``, ``F.dropout1d`` and ``F.dropout2d``: zero elements (or whole channels)
with probability p while training.

*Inverted* dropout: the kept elements are scaled by 1/(1-p), so the expected
value of every element is unchanged and evaluation needs no rescaling -- in
eval mode (``training=False``) dropout is the identity and returns its input.

The mask comes from learntorch's default generator (cuda's for a cuda input), so
``torch.manual_seed`` makes it reproducible; the backend turns those uniform
samples into the scaled 0/(1/(1-p)) mask (``dropout_mask``).  The result is
``input * mask`` with the mask a constant (as torch computes it, the node is a
``MulBackward0``): the gradient is ``grad * mask``, zero exactly where an element
was dropped.

``dropout2d`` / ``dropout1d`` drop whole channels: one draw per (sample, channel),
broadcast over the channel's pixels, so a feature map is kept or dropped entirely
-- the neighbouring pixels of a feature map are strongly correlated, and dropping
single pixels of it regularises little.
"""
import warnings

from ... import backends, factories
from ..._dtypes import float64
from ..._tensor import Tensor


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p)."""
    _check("dropout", input, p)
    return _dropped(input, p, training, inplace, input.shape)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) or (C, H, W) input with probability ``p``."""
    _check("dropout2d", input, p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", UserWarning,
                      stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p``."""
    _check("dropout1d", input, p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    # one unbatched sample (C, L): one draw per channel
    return _feature_dropout(input, p, training, inplace, channels=input.ndim - 2)


def _feature_dropout(input, p, training, inplace, channels=1):
    """Dropout with one draw per (sample, channel) -- dims up to ``channels`` -- broadcast
    over the rest."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    kept = channels + 1
    return _dropped(input, p, training, inplace, input.shape[:kept] + (1,) * (input.ndim - kept))


def _check(name, input, p):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropped(input, p, training, inplace, mask_shape):
    if not training or p == 0 or input.numel() == 0:
        return input  # nothing is dropped: torch hands back the very same tensor
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype}: dropout scales by 1/(1-p), so it needs a floating "
                           "point input; convert it first, e.g. x.float()")
    if p == 1:  # everything dropped (and no division by 0): no samples needed
        mask = factories.zeros((), dtype=input.dtype, device=input.device)
    else:
        uniform = factories.rand(mask_shape, dtype=float64, device=input.device)._data
        mask = Tensor._wrap(backends.current.dropout_mask(uniform, p, input.dtype.np))
    return input.mul_(mask) if inplace else input * mask
