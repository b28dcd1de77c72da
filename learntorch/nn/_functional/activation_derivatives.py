"""The derivatives of the piecewise activations, as ops of their own (torch's ``*_backward``).

``LeakyRelu.backward`` returns ``LeakyReluBackward.apply(grad, x, slope)``: ``grad *
f'(x)`` in one pass of the backend's ``leaky_relu_backward``.  Because each derivative
is a ``Function``, it has a ``backward`` too -- what ``create_graph=True``
differentiates (torch names those nodes ``LeakyReluBackwardBackward0`` ...):

* by ``grad``: the derivative is linear in grad, so it is the same op applied to ``gg``;
* by ``x``: ``gg * grad * f''(x)`` -- 0 for the piecewise-linear ones (returned as zeros,
  so that a gradient penalty's graph records it, as torch's does), nonzero for ELU's
  exponential part and hardswish's middle piece.
"""
from ... import backends
from ...autograd.function import Function
from ...factories import zeros_like
from ...ops._helpers import wrap
from ...ops.comparison import where


class _PiecewiseLinearBackward(Function):
    """grad * f'(x) where f' is piecewise constant: f'' = 0."""

    backend_method = None

    @classmethod
    def forward(cls, ctx, grad, x, *params):
        ctx.save_for_backward(x)
        ctx.params = params
        return wrap(getattr(backends.current, cls.backend_method)(x._data, grad._data, *params))

    @classmethod
    def backward(cls, ctx, gg):
        x, = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return ((cls.apply(gg, x, *ctx.params) if needs[0] else None),
                (zeros_like(x) if needs[1] else None)) + (None,) * len(ctx.params)


class LeakyReluBackward(_PiecewiseLinearBackward):
    """grad where x > 0, else slope * grad."""

    node_name = "LeakyReluBackwardBackward0"
    backend_method = "leaky_relu_backward"


class HardtanhBackward(_PiecewiseLinearBackward):
    """grad strictly inside (min_val, max_val), else 0."""

    node_name = "HardtanhBackwardBackward0"
    backend_method = "hardtanh_backward"


class HardsigmoidBackward(_PiecewiseLinearBackward):
    """grad / 6 strictly inside (-3, 3), else 0."""

    node_name = "HardsigmoidBackwardBackward0"
    backend_method = "hardsigmoid_backward"


class EluBackward(Function):
    """grad * s where x > 0, else grad * a s i e^(i x)."""

    node_name = "EluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, alpha, scale, input_scale):
        ctx.save_for_backward(grad, x)
        ctx.params = (alpha, scale, input_scale)
        return wrap(backends.current.elu_backward(x._data, grad._data, alpha, scale,
                                                  input_scale))

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        alpha, scale, input_scale = ctx.params
        needs = ctx.needs_input_grad
        d_grad = EluBackward.apply(gg, x, *ctx.params) if needs[0] else None
        d_x = None
        if needs[1]:  # f'' = a s i^2 e^(i x) on the negative side, 0 on the positive one
            curve = (x * input_scale).exp() * (alpha * scale * input_scale * input_scale)
            d_x = where(x > 0, 0.0, gg * grad * curve)
        return d_grad, d_x, None, None, None


class HardswishBackward(Function):
    """0 up to -3, grad * (x / 3 + 1/2) strictly between, grad from 3 on."""

    node_name = "HardswishBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x):
        ctx.save_for_backward(grad, x)
        return wrap(backends.current.hardswish_backward(x._data, grad._data))

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        needs = ctx.needs_input_grad
        d_grad = HardswishBackward.apply(gg, x) if needs[0] else None
        # f'' = 1/3 strictly inside (-3, 3) (torch's), 0 elsewhere
        d_x = where((x > -3) & (x < 3), gg * grad / 3, 0.0) if needs[1] else None
        return d_grad, d_x
