"""``nn.Unfold`` and ``nn.Fold``: the sliding windows of ``F.unfold`` / ``F.fold`` as layers.

No parameters: each keeps its arguments as given (torch prints ``kernel_size=2``,
not ``(2, 2)``) and calls the functional form in ``nn/_functional/fold.py``.
"""
from .._functional.fold import fold, unfold
from .module import Module


class Unfold(Module):
    """Every (kH, kW) window of an (N, C, H, W) input as a column: (N, C*kH*kW, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns (N, C*kH*kW, L) summed back into an (N, C, *output_size) image."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
