"""``nn.Linear`` (y = x W^T + b) and ``nn.Identity``.

Linear's default initialisation is torch's: W ~ U(-1/sqrt(in), 1/sqrt(in)),
written as ``kaiming_uniform_(a=sqrt(5))`` (the same bound: gain^2 = 2/(1+5) =
1/3, times 3/in), and b ~ U(-1/sqrt(in), 1/sqrt(in)).  That keeps the output
of a fresh layer about as large as its input, whatever in_features is.
"""

from ... import factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Identity(Module):
    """Returns its input unchanged; takes (and ignores) any arguments, as torch's."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias, for x of shape (*, in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(factories.empty((out_features, in_features), device=device,
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(factories.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init._default_layer_init_(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` that ``quantize_dynamic`` leaves in float (it swaps exact ``nn.Linear``
    types only): ``MultiheadAttention.out_proj``, whose weight its forward reads directly."""
