"""The activations of ``nn.functional`` beyond the core ones (relu, tanh, sigmoid, gelu,
silu, softplus live in ``reference.py`` and the ops' families), with the derivatives
that are one pass each: ``<name>_backward(x, grad, ...)`` is ``grad * f'(x)``.

Each is torch's CPU formula, element by element; a piecewise one decides at the
boundaries as torch does (noted per method).  float16 arithmetic is done in float32 and
rounded once, as torch's kernels do ("opmath").
"""
import numpy as np

from .. import reference as _reference


_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def _opmath(x):
    """float16 is computed in float32 (rounded once at the end), other dtypes as they are."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _result(out, like):
    return _reference.as_array(out, dtype=like.dtype)


class NnActivationFamily:
    def leaky_relu(self, x, negative_slope):
        """x where x > 0, else negative_slope * x."""
        return _result(np.where(x > 0, x, _opmath(x) * negative_slope), x)

    def leaky_relu_backward(self, x, grad, negative_slope):
        """grad where x > 0, else negative_slope * grad (at x = 0 too, as torch)."""
        return _result(np.where(x > 0, grad, _opmath(grad) * negative_slope), grad)

    def elu(self, x, alpha, scale, input_scale):
        """scale * x where x > 0, else alpha * scale * (exp(input_scale * x) - 1).

        ELU is (alpha, 1, 1); SELU (1.6733..., 1.0507..., 1); CELU(alpha) (alpha, 1, 1/alpha).
        """
        a = _opmath(x)
        return _result(np.where(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale)),
                       x)

    def elu_backward(self, x, grad, alpha, scale, input_scale):
        """grad * scale where x > 0, else grad * alpha * scale * input_scale * exp(input_scale x)."""
        a, g = _opmath(x), _opmath(grad)
        negative = g * (input_scale * alpha * scale) * np.exp(a * input_scale)
        return _result(np.where(a > 0, g * scale, negative), grad)

    def hardtanh(self, x, min_val, max_val):
        """x clamped into [min_val, max_val] (relu6 is hardtanh(x, 0, 6))."""
        return _result(np.minimum(np.maximum(x, min_val), max_val), x)

    def hardtanh_backward(self, x, grad, min_val, max_val):
        """grad strictly inside (min_val, max_val), 0 at and beyond the bounds (torch's)."""
        return _result(np.where((x > min_val) & (x < max_val), grad, 0), grad)

    def hardsigmoid(self, x):
        """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between."""
        a = _opmath(x)
        return _result(np.minimum(np.maximum(a + 3, 0), 6) / 6, x)

    def hardsigmoid_backward(self, x, grad):
        """grad / 6 strictly inside (-3, 3), else 0 -- as torch computes it: grad times 1/6
        rounded to float32 (its kernel's ``1.0f / 6.0f``), in every dtype."""
        return _result(np.where((x > -3) & (x < 3), _opmath(grad) * _ONE_SIXTH, 0), grad)

    def hardswish(self, x):
        """x * relu6(x + 3) / 6."""
        a = _opmath(x)
        return _result(a * np.minimum(np.maximum(a + 3, 0), 6) / 6, x)

    def hardswish_backward(self, x, grad):
        """0 up to -3, grad * (x / 3 + 1/2) strictly between, grad from 3 on (torch's)."""
        a, g = _opmath(x), _opmath(grad)
        return _result(np.where(a <= -3, 0, np.where(a < 3, g * (a / 3 + 0.5), g)), grad)

    def log_sigmoid(self, x):
        """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow for any x."""
        a = _opmath(x)
        return _result(np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))), x)

    def mish(self, x):
        """x * tanh(softplus(x)), softplus(x) = log(1 + e^x) (as logaddexp: no overflow)."""
        a = _opmath(x)
        return _result(a * np.tanh(np.logaddexp(0, a)), x)

    def prelu(self, x, weight):
        """x where x > 0, else weight * x; ``weight`` already shaped to broadcast along the
        channel dim (dim 1)."""
        return _result(np.where(x > 0, x, weight * x), x)
