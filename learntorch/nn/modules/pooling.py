"""Pooling layers: max and average pooling over 1-D and 2-D windows, and the adaptive forms.

They have no parameters: each keeps its window arguments exactly as given
(torch prints ``kernel_size=2``, not ``(2, 2)``; ``AvgPool1d`` keeps 1-tuples, as
torch's does) and calls the functional form in ``nn/_functional/pooling.py`` (the
class attribute ``pool``).  A stride left out means stride = kernel_size: windows
side by side, not overlapping.
"""
from .._functional.pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d,
                                   adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d,
                                   avg_pool2d, max_pool1d, max_pool2d)
from .module import Module


class _MaxPoolNd(Module):
    pool = None  # the functional form, set by each subclass

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self).pool(input, self.kernel_size, self.stride, self.padding,
                               self.dilation, ceil_mode=self.ceil_mode,
                               return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Maximum over windows of every channel of (N, C, L) inputs."""

    pool = staticmethod(max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Maximum over (kH, kW) windows of every channel; ``return_indices`` also gives argmaxes."""

    pool = staticmethod(max_pool2d)


class AvgPool1d(Module):
    """Mean over windows of every channel of (N, C, L) inputs."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class AvgPool2d(Module):
    """Mean over (kH, kW) windows of every channel."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePoolNd(Module):
    """Pooling to a fixed ``output_size`` whatever the input size (windows adapt to it)."""

    pool = None  # the functional form, set by each subclass

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self).pool(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self).pool(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Mean pooling of (N, C, L) inputs to ``output_size`` positions."""

    pool = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Mean pooling to a fixed output size (out_H, out_W)."""

    pool = staticmethod(adaptive_avg_pool2d)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) inputs to ``output_size`` positions."""

    pool = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size (out_H, out_W)."""

    pool = staticmethod(adaptive_max_pool2d)
