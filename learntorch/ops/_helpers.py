"""Small helpers shared by the op files: unwrap operands, wrap results, pick dtypes."""
import numbers

import numpy as np

from .. import _dtypes
from ..backends.reference import as_array  # noqa: F401  (np.asarray that keeps device arrays)
from .._tensor import Tensor
from ..autograd import grad_mode

wrap = Tensor._wrap


def as_operand(x, name="other"):
    """A Tensor stays a Tensor, a Python/numpy number stays a number, arrays become Tensors."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, (np.generic, numbers.Number)):
        return x.item() if hasattr(x, "item") else float(x)
    if isinstance(x, np.ndarray):
        return Tensor._wrap(x)
    raise TypeError(f"unsupported operand type for a tensor operation: {name} is a "
                    f"{type(x).__name__}; expected a Tensor or a number (wrap lists with "
                    "learntorch.tensor(...))")


def array_of(x, dtype):
    """The raw array of ``x`` cast to ``dtype`` (numbers are left to numpy's weak typing)."""
    if isinstance(x, Tensor):
        a = x._data
        return a if a.dtype == dtype.np else a.astype(dtype.np)
    return x  # a Python number: numpy keeps the array's dtype (NEP 50), as torch does


def float_dtype_of(x):
    """Floating ops (exp, sqrt, ...) on integer tensors compute in the default float type."""
    d = x._dtype
    return d if d.is_floating_point else _dtypes.get_default_dtype()


def float_array(x):
    d = float_dtype_of(x)
    a = x._data
    return a if a.dtype == d.np else a.astype(d.np)


def require_tensors(name, *args):
    """Torch's TypeError for a number or list where a tensor is needed.

    ``args`` are (argument name, value) pairs.
    """
    for position, (arg_name, value) in enumerate(args, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg_name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}; wrap it with "
                            "torch.tensor(...)")


def check_same_device(*tensors):
    devices = {t._device for t in tensors if isinstance(t, Tensor)}
    if len(devices) > 1:
        names = " and ".join(sorted(str(d) for d in devices))
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{names}! Move them with .to(device) first.")


def recording_gradient_graph():
    """True inside backward(create_graph=True): build derivatives from differentiable ops."""
    return grad_mode._state.enabled
