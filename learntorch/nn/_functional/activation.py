"""Activations in ``nn.functional``: relu, leaky_relu, the ELU family, hardtanh/relu6,
hardsigmoid, hardswish, mish, logsigmoid, softsign, tanhshrink, prelu, gelu, silu, tanh,
sigmoid, softplus, softmax, softmin, log_softmax.

Each function checks its arguments as torch does and hands over to a Function: the
ops of ``learntorch/ops`` (relu, gelu, ...) or this package's own
(``activation_functions.py``).  What only the functional forms have: an ``inplace=``
flag (the result is written into the input, which is returned) and softmax's legacy
*implicit dim* (omitting ``dim`` picks one, with torch's deprecation warning).
softsign and tanhshrink are compositions of tensor ops, as in torch.
"""
from ..._tensor import Tensor
from ...ops import activations as _act
from ...ops import softmax as _softmax
from ...ops._inplace import apply_inplace
from ...ops.activations import gelu, sigmoid, softplus, tanh  # noqa: F401  (F.gelu, ...)
from . import activation_functions as _fn

# SELU's constants (Klambauer et al., 2017), as torch writes them
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _require_tensor(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}; convert it first with torch.tensor(...)")


def _require_floating(input, kernel):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype}': convert "
                                  "the tensor first, e.g. x.float()")


def _maybe_inplace(input, inplace, recorded, inplace_recorded=None):
    """``recorded(input)``, or the same written into ``input`` (returned) when ``inplace``."""
    if inplace:
        return apply_inplace(input, inplace_recorded or recorded)
    return recorded(input)


def relu(input, inplace=False):
    _require_tensor(input, "relu")
    return input.relu_() if inplace else _act.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _require_tensor(input, "leaky_relu")
    _require_floating(input, "leaky_relu_cpu")
    negative_slope = float(negative_slope)
    return _maybe_inplace(input, inplace,
                          lambda src: _fn.LeakyRelu.apply(src, negative_slope),
                          lambda src: _fn.LeakyReluInplace.apply(src, negative_slope))


def _elu(name, input, alpha, scale, input_scale, inplace, cls=_fn.Elu,
         inplace_cls=_fn.EluInplace):
    _require_tensor(input, name)
    _require_floating(input, "elu_cpu")
    return _maybe_inplace(input, inplace,
                          lambda src: cls.apply(src, alpha, scale, input_scale),
                          lambda src: inplace_cls.apply(src, alpha, scale, input_scale))


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _elu("elu", input, float(alpha), 1.0, 1.0, inplace)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with torch's fixed alpha and scale (self-normalizing)."""
    return _elu("selu", input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU (it divides x)")
    return _elu("celu", input, float(alpha), 1.0, 1.0 / alpha, inplace, _fn.Celu,
                _fn.CeluInplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped into [min_val, max_val]."""
    _require_tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(input, inplace, lambda src: _fn.Hardtanh.apply(src, min_val, max_val))


def relu6(input, inplace=False):
    """min(max(0, x), 6): hardtanh between 0 and 6 (torch records a Hardtanh node too)."""
    _require_tensor(input, "relu6")
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6: a piecewise-linear sigmoid."""
    _require_tensor(input, "hardsigmoid")
    _require_floating(input, "hardsigmoid_cpu")
    return _maybe_inplace(input, inplace, _fn.Hardsigmoid.apply)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (MobileNetV3's cheap swish)."""
    _require_tensor(input, "hardswish")
    _require_floating(input, "hardswish_cpu")
    return _maybe_inplace(input, inplace, _fn.Hardswish.apply)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    _require_tensor(input, "mish")
    _require_floating(input, "mish_cpu")
    return _maybe_inplace(input, inplace, _fn.Mish.apply)


def logsigmoid(input):
    """log(sigmoid(x)), without overflow for any x."""
    _require_tensor(input, "log_sigmoid")
    _require_floating(input, "log_sigmoid_cpu")
    return _fn.LogSigmoid.apply(input)


def softsign(input):
    """x / (1 + |x|) (torch's composition of ops)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x) (torch's composition of ops)."""
    return input - input.tanh()


def prelu(input, weight):
    """x where x > 0, else weight * x, with a learned weight per channel (dim 1) or one."""
    _require_tensor(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weight.numel()} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    _require_floating(input, "prelu_cpu")
    return _fn.Prelu.apply(input, weight)


def silu(input, inplace=False):
    _require_tensor(input, "silu")
    return _maybe_inplace(input, inplace, _act.silu)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    _require_tensor(input, "softmax")
    if dim is None:
        dim = _softmax.implicit_dim("softmax", input.ndim, _stacklevel)
    return _softmax.softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x): weights that favour the smallest values."""
    _require_tensor(input, "softmin")
    if dim is None:
        dim = _softmax.implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax.softmax(-input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    _require_tensor(input, "log_softmax")
    if dim is None:
        dim = _softmax.implicit_dim("log_softmax", input.ndim, _stacklevel)
    return _softmax.log_softmax(input, dim, dtype=dtype)

