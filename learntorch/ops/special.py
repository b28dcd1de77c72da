"""Special functions used by activations (erf, for exact GELU and its derivatives)."""
import math

from .. import backends
from ..autograd.function import Function
from ._helpers import float_array, wrap
from .unary import _check_tensor


class Erf(Function):
    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(backends.current.erf(float_array(x)))

    @staticmethod
    def backward(ctx, grad):
        # d erf(x)/dx = 2/sqrt(pi) * e^(-x^2): the bell curve erf integrates
        x, = ctx.saved_tensors
        return grad * (2 / math.sqrt(math.pi)) * (-(x * x)).exp()


def erf(input):
    _check_tensor(input, "erf")
    return Erf.apply(input)
