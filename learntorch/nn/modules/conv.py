"""``nn.Conv1d`` and ``nn.Conv2d``: a convolution with its own weight and bias.

The weight has shape (out_channels, in_channels / groups, *kernel_size): one
small filter per output channel, seeing ``in_channels / groups`` input
channels.  Default initialisation is torch's, the same as ``nn.Linear``'s with
fan_in = in_channels / groups * kernel area: weight and bias uniform in
+-1/sqrt(fan_in) (written as ``kaiming_uniform_(a=sqrt(5))`` for the weight).

The arithmetic lives in ``nn/_functional/conv.py``; this file holds the
parameters, checks the constructor arguments and prints the layer like torch.
"""
import numbers

from ... import factories
from .. import init
from .._functional.conv import conv1d, conv2d
from ..parameter import Parameter
from .module import Module

_PADDING_STRINGS = {"valid", "same"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _tuple(value, n):
    """torch's ``_ntuple``: an iterable becomes a tuple as it is, anything else is repeated."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What Conv1d and Conv2d share: arguments, parameters, initialisation, repr."""

    _dims = None  # 1 or 2, set by the subclasses

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self._dims
        kernel_size, stride, dilation = (_tuple(kernel_size, n), _tuple(stride, n),
                                         _tuple(dilation, n))
        for what, value in (("in_channels", in_channels), ("out_channels", out_channels),
                            ("groups", groups)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{type(self).__name__}(): {what} must be an int, got "
                                f"{value!r}")
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"padding_mode='{padding_mode}' is not supported by learntorch yet, only "
                "'zeros'; pad the input yourself first (F.pad) and use padding=0")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.groups, self.padding_mode = dilation, groups, padding_mode
        self.transposed, self.output_padding = False, (0,) * n  # torch's attributes
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size,
                                                                  dilation)
        self.weight = Parameter(factories.empty(
            (out_channels, in_channels // groups) + kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(factories.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._default_layer_init_(self.weight, self.bias)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        # a padding string ('same') is never equal to a tuple of zeros, so it is shown
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _reversed_padding(padding, kernel_size, dilation):
    """torch's F.pad-order padding (last dimension first, before and after each)."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0, 0] * len(kernel_size)
        out = []
        for k, d in zip(reversed(kernel_size), reversed(dilation)):
            total = d * (k - 1)
            out += [total // 2, total - total // 2]
        return out
    return tuple(p for p in reversed(padding) for _ in range(2))  # a tuple here, as torch


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) inputs -> (N, C_out, L_out)."""

    _dims = 1

    def forward(self, input):
        return conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) inputs -> (N, C_out, H_out, W_out)."""

    _dims = 2

    def forward(self, input):
        return conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)
