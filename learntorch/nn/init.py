"""``nn.init``: fill a tensor in place with a starting distribution for training.

Every function works under ``no_grad`` (initialising a Parameter is not part
of any computation to differentiate), changes the tensor in place and returns
it.  The random ones take ``generator=`` like torch (default: the generator
that ``torch.manual_seed`` seeds).

Why the scales: a layer computing y = W x sums fan_in products, so with
weights of variance s^2 the output's variance is fan_in * s^2 times the
input's.  Keeping it 1 layer after layer needs s^2 = gain^2 / fan_in
(Kaiming/He; the *gain* makes up for what the nonlinearity removes, e.g.
ReLU zeroes half its inputs: gain^2 = 2).  Xavier/Glorot compromises between
the forward (fan_in) and the backward (fan_out) pass: s^2 = 2 / (fan_in + fan_out).
A uniform distribution on [-b, b] has variance b^2 / 3, hence the sqrt(3) below.
"""
import math
import warnings

from .. import backends as _backends
from .. import factories as _factories
from .. import random as _random
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad as _no_grad


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (its ``nn.functional`` name)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param  # (True is an int in Python: refused above)
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # found empirically by torch (pytorch/pytorch#50664)
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Values drawn from U(a, b)."""
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Values drawn from N(mean, std^2)."""
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Values from N(mean, std^2) truncated to [a, b], by the inverse CDF.

    u is drawn uniformly from [0, 1) and mapped through the truncated distribution's
    inverse CDF (the backend's ``trunc_normal_from_uniform``): one pass and exact, however
    far [a, b] lies from the mean -- where redrawing until a value lands inside (torch
    2.13 redraws, with a warning) can take practically forever.
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    u = _random._generator(generator).random(tuple(tensor.shape))
    values = _backends.current.trunc_normal_from_uniform(u, mean, std, a, b)
    return _fill_with(tensor, Tensor._wrap(values))


def constant_(tensor, val):
    """Every value set to ``val``."""
    with _no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with _no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix (ones on the diagonal of a 2-D tensor, which may be rectangular)."""
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported (got shape "
                         f"{list(tensor.shape)})")
    return _fill_with(tensor, _factories.eye(*tensor.shape, dtype=tensor.dtype,
                                             device=tensor.device))


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight shaped (out, in, *kernel): each times the kernel size."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         f"dimensions (got shape {list(tensor.shape)})")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    fan_in = tensor.shape[1] * receptive_field_size
    fan_out = tensor.shape[0] * receptive_field_size
    return fan_in, fan_out


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015); ``a`` is leaky_relu's slope."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0, std, generator)


def _fill_with(tensor, values):
    """Copy the tensor ``values`` into ``tensor``, unrecorded."""
    with _no_grad():
        return tensor.copy_(values)


def _default_layer_init_(weight, bias):
    """torch's default initialisation of Linear and Conv layers: kaiming_uniform_(a=sqrt(5))
    on the weight, uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias (0 when fan_in is 0)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
