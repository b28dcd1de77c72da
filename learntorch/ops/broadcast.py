"""Broadcasting: which shape two (or more) shapes make together.

Two shapes broadcast by aligning them on the right; a dimension of size 1 (or a
missing one) is *reused* along the other operand's size.  Its mirror image in
backward -- an element reused k times receives the sum of its k gradients -- is
``Tensor.sum_to_size`` (``reductions.SumToSize``), which the engine applies to every
gradient sent to a broadcast input.
"""
from .._size import Size


def broadcast_shapes(*shapes):
    """The shape that all ``shapes`` broadcast to (torch.broadcast_shapes): a ``Size``.

    As in torch, an int counts as a 1-D shape: ``broadcast_shapes(5, (2, 1))`` is (2, 5).
    """
    return Size(_broadcast_tuple(*((s,) if isinstance(s, int) else tuple(s) for s in shapes)))


def _broadcast_tuple(*shapes):
    """``broadcast_shapes`` as a plain tuple: what the ops use internally (no Size to build)."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for s in shapes:
        for i, size in enumerate(s):
            j = ndim - len(s) + i
            if size == result[j] or size == 1:
                continue
            if result[j] == 1:
                result[j] = size
            else:
                raise RuntimeError(
                    f"The size of tensor a ({result[j]}) must match the size of tensor b ({size}) "
                    f"at non-singleton dimension {j}: shapes {[list(x) for x in shapes]} cannot "
                    "be broadcast together. Dimensions are aligned from the right and must be "
                    "equal or 1; use unsqueeze/reshape to line them up.")
    return tuple(result)


def is_expandable_to(shape, target):
    """True when ``shape`` broadcasts to ``target`` without changing ``target``."""
    if len(shape) > len(target):
        return False
    for size, t in zip(reversed(shape), reversed(target)):
        if size != t and size != 1:
            return False
    return True
