"""Broadcasting, and its mirror image in backward: summing a gradient back to shape.

Forward: two shapes broadcast by aligning them on the right; a dimension of
size 1 (or a missing one) is *reused* along the other operand's size.

Backward: an input element that was reused k times received k gradient
contributions, so its gradient is the **sum over the broadcast dimensions**.
``sum_to_shape`` is that step.  The autograd engine applies it to every
gradient an operation sends back whose shape is larger than its input's, so
each backward rule can be written as if no broadcasting had happened.
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


def broadcast_dims(grad_shape, shape):
    """Which dimensions of ``grad_shape`` were created or stretched by broadcasting ``shape``.

    Returns ``(leading, stretched)``: the leading dims that ``shape`` lacks, and
    the dims (counted in ``grad_shape``) where ``shape`` has size 1 but the gradient has more.
    """
    lead = len(grad_shape) - len(shape)
    leading = tuple(range(lead))
    stretched = tuple(lead + i for i, size in enumerate(shape)
                      if size == 1 and grad_shape[lead + i] != 1)
    return leading, stretched


def sum_to_shape(grad, shape):
    """Sum ``grad`` over the dimensions that broadcasting added to reach ``shape``."""
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    leading, stretched = broadcast_dims(grad.shape, shape)
    if stretched:
        grad = grad.sum(dim=leading + stretched, keepdim=True)
    elif leading:
        grad = grad.sum(dim=leading)
    if grad.shape != shape:
        grad = grad.reshape(shape)
    return grad


def is_expandable_to(shape, target):
    """True when ``shape`` broadcasts to ``target`` without changing ``target``."""
    if len(shape) > len(target):
        return False
    for size, t in zip(reversed(shape), reversed(target)):
        if size != t and size != 1:
            return False
    return True
