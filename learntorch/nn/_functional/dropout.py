"""``F.dropout``: zero each element with probability p while training.

*Inverted* dropout: the kept elements are scaled by 1/(1-p), so the expected
value of every element is unchanged and evaluation needs no rescaling -- in
eval mode (``training=False``) dropout is the identity and returns its input.

The mask comes from learntorch's default generator, so ``torch.manual_seed``
makes it reproducible.  The result is ``input * mask`` with the mask a constant
(as torch computes it, the node is a ``MulBackward0``): the gradient is
``grad * mask``, zero exactly where an element was dropped.
"""
import numpy as np

from ... import random
from ..._tensor import Tensor


def dropout(input, p=0.5, training=True, inplace=False):
    if not isinstance(input, Tensor):
        raise TypeError(f"dropout(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input  # nothing is dropped: torch hands back the very same tensor
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype}: dropout scales by 1/(1-p), so it needs a floating "
                           "point input; convert it first, e.g. x.float()")
    mask = Tensor._wrap(_scaled_mask(input.shape, p, input.dtype.np))
    return input.mul_(mask) if inplace else input * mask


def _scaled_mask(shape, p, dtype):
    """1/(1-p) where an element is kept (probability 1-p), 0 where it is dropped."""
    if p == 1:
        return np.zeros((), dtype=dtype)  # everything dropped (and no division by 0)
    keep = random.default_generator.random(shape) < 1 - p
    mask = keep.astype(dtype)
    mask /= 1 - p  # divided in the input's dtype, as torch does, so the scale is the same
    return mask
