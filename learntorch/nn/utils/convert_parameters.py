"""A model's parameters as one flat vector, and back.

``parameters_to_vector(model.parameters())`` concatenates every parameter,
flattened, in order: handy for second-order methods, for measuring how far
the weights moved, or for plotting a loss along a line in weight space.  It
is an ordinary differentiable op (``view`` + ``cat``), so gradients flow back.

``vector_to_parameters(vec, model.parameters())`` is the inverse: each
parameter's ``.data`` becomes the matching slice of ``vec``, as in torch --
the parameters then *share memory* with ``vec`` (change one and the other
changes).  Clone ``vec`` first if that is not what you want.
"""
from ..._tensor import Tensor


def _check_param_device(param, old_param_device):
    """The device index shared by all parameters (-1 for the CPU); TypeError if they differ."""
    device = param.get_device()
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters):
    """Flatten and concatenate ``parameters`` into one 1-D tensor."""
    from ...ops.joining import cat
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Make each parameter (in order) a view of its slice of the 1-D tensor ``vec``."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _typename(obj):
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"
