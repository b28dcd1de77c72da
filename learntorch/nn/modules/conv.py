"""``nn.Conv1d``, ``nn.Conv2d`` and their transposes: a convolution with its own weight and bias.

The weight has shape (out_channels, in_channels / groups, *kernel_size): one
small filter per output channel, seeing ``in_channels / groups`` input
channels (a transposed convolution's weight is (in_channels, out_channels /
groups, *kernel_size): the weight of the convolution it transposes).  Default
initialisation is torch's, the same as ``nn.Linear``'s with fan_in = the weight's
dim 1 * kernel area: weight and bias uniform in +-1/sqrt(fan_in) (written as
``kaiming_uniform_(a=sqrt(5))`` for the weight).

``padding_mode`` other than 'zeros' pads the input with ``F.pad`` in that mode
('reflect', 'replicate', 'circular') and then convolves without padding, as torch does.

The arithmetic lives in ``nn/_functional/conv.py``; this file holds the
parameters, checks the constructor arguments and prints the layer like torch.
"""
import numbers

from ... import factories
from ...ops.padding import pad
from .. import init
from .._functional.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
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
    """What the convolutions share: arguments, parameters, initialisation, repr."""

    _dims = None  # 1 or 2, set by the subclasses
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        self._build(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                    bias, padding_mode, device, dtype, output_padding=0)

    def _build(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
               bias, padding_mode, device, dtype, output_padding):
        """Check the arguments and make the parameters (a transposed one has output_padding)."""
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
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.groups, self.padding_mode = dilation, groups, padding_mode
        # torch's attributes
        self.transposed, self.output_padding = self._transposed, _tuple(output_padding, n)
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size,
                                                                  dilation)
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(factories.empty(shape + kernel_size, device=device, dtype=dtype))
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

    def _padded(self, input):
        """(input, padding): the input padded in ``padding_mode`` and no more padding, or
        the input as it is and the layer's padding (mode 'zeros': the convolution pads)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return (pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                0)


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
        input, padding = self._padded(input)
        return conv1d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                      self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) inputs -> (N, C_out, H_out, W_out)."""

    _dims = 2

    def forward(self, input):
        input, padding = self._padded(input)
        return conv2d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                      self.groups)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: ``output_padding``, and the
    ``output_size`` argument of forward that picks it (strides make several output
    sizes map to one input size)."""

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if isinstance(padding, str):
            raise TypeError(f"{type(self).__name__}(): padding must be an int or a tuple of "
                            f"ints, not {padding!r}: a transposed convolution has no "
                            "'same'/'valid' padding")
        Module.__init__(self)
        self._build(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                    bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """torch's rule: the output_padding that makes the output ``output_size``."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        batched = input.dim() == n + 2
        leading = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == leading + n:
            output_size = output_size[leading:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {leading + n} elements (got {len(output_size)})")
        min_sizes = [(input.shape[d + leading] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{list(input.shape[leading:])})")
        return tuple(size - low for size, low in zip(output_size, min_sizes))


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out)."""

    _dims = 1

    def forward(self, input, output_size=None):
        return conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(input, output_size), self.groups,
                                self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution ("deconvolution"): (N, C_in, H, W) -> (N, C_out, H_out, W_out),
    H_out = (H - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1."""

    _dims = 2

    def forward(self, input, output_size=None):
        return conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(input, output_size), self.groups,
                                self.dilation)
