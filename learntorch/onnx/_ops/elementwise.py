"""Converters of the elementwise ops: arithmetic, unary functions, activations, casts.

Type promotion happened in learntorch already: the captured result's dtype says
what it was, so every operand is cast to that dtype (a Python number becomes a
constant of it) and the ONNX op computes in it, as the engine did.
"""
import math

from .._builder import element_type
from .._registry import converts

# learntorch op -> the ONNX op computing the same thing on one tensor
UNARY = {"Neg": "Neg", "Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt", "Abs": "Abs", "Sin": "Sin",
         "Cos": "Cos", "Floor": "Floor", "Ceil": "Ceil", "Erf": "Erf", "Tanh": "Tanh",
         "Sigmoid": "Sigmoid", "Relu": "Relu", "Reciprocal": "Reciprocal", "Sign": "Sign",
         "Round": "Round"}


def _unary(ctx):
    (x,) = ctx.args
    return ctx.op(UNARY[ctx.matched], ctx.value(x), last=True)


converts(*UNARY)(_unary)


def _binary_operands(ctx, a, b):
    dtype = ctx.out.dtype
    return ctx.operand(a, dtype), ctx.operand(b, dtype)


def _scaled(ctx, value, alpha):
    """``alpha * value`` (``add``/``sub``'s alpha=), no node for alpha = 1."""
    if alpha == 1:
        return value
    return ctx.op("Mul", value, ctx.scalar(alpha, ctx.out.dtype))


@converts("Add")
def add(ctx):
    a, b, *alpha = ctx.args
    x, y = _binary_operands(ctx, a, b)
    return ctx.op("Add", x, _scaled(ctx, y, alpha[0] if alpha else 1), last=True)


@converts("Sub")
def sub(ctx):  # Rsub (2 - x) records (2, x): the same a - alpha * b
    a, b, *alpha = ctx.args
    x, y = _binary_operands(ctx, a, b)
    return ctx.op("Sub", x, _scaled(ctx, y, alpha[0] if alpha else 1), last=True)


@converts("Mul", "Div", "Pow", "Maximum", "Minimum")
def binary(ctx):
    a, b = ctx.args
    op_type = {"Mul": "Mul", "Div": "Div", "Pow": "Pow", "Maximum": "Max",
               "Minimum": "Min"}[ctx.matched]
    return ctx.op(op_type, *_binary_operands(ctx, a, b), last=True)


@converts("Where")
def where(ctx):
    condition, a, b = ctx.args
    x, y = _binary_operands(ctx, a, b)
    return ctx.op("Where", ctx.value(condition), x, y, last=True)


@converts("Rsqrt")
def rsqrt(ctx):
    (x,) = ctx.args
    return ctx.op("Reciprocal", ctx.op("Sqrt", ctx.value(x)), last=True)


@converts("Log2", "Log10")
def log_base(ctx):
    (x,) = ctx.args
    base = 2.0 if ctx.matched == "Log2" else 10.0
    return ctx.op("Div", ctx.op("Log", ctx.value(x)), ctx.scalar(math.log(base), ctx.out.dtype),
                  last=True)


@converts("Log1p")
def log1p(ctx):
    (x,) = ctx.args
    one = ctx.scalar(1, ctx.out.dtype)
    return ctx.op("Log", ctx.op("Add", ctx.value(x), one), last=True)


@converts("Expm1")
def expm1(ctx):
    (x,) = ctx.args
    return ctx.op("Sub", ctx.op("Exp", ctx.value(x)), ctx.scalar(1, ctx.out.dtype), last=True)


@converts("Gelu")
def gelu(ctx):
    x, approximate = ctx.args
    if ctx.opset >= 20:
        return ctx.op("Gelu", ctx.value(x), approximate=approximate, last=True)
    dtype, v = ctx.out.dtype, ctx.value(x)
    half = ctx.scalar(0.5, dtype)
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = ctx.op("Mul", ctx.op("Mul", v, v), v)
        inner = ctx.op("Add", v, ctx.op("Mul", cube, ctx.scalar(0.044715, dtype)))
        t = ctx.op("Tanh", ctx.op("Mul", inner, ctx.scalar(math.sqrt(2 / math.pi), dtype)))
    else:
        # 0.5 x (1 + erf(x / sqrt(2)))
        t = ctx.op("Erf", ctx.op("Div", v, ctx.scalar(math.sqrt(2.0), dtype)))
    one_plus = ctx.op("Add", t, ctx.scalar(1, dtype))
    return ctx.op("Mul", ctx.op("Mul", v, half), one_plus, last=True)


@converts("Silu")
def silu(ctx):
    (x,) = ctx.args
    v = ctx.value(x)
    return ctx.op("Mul", v, ctx.op("Sigmoid", v), last=True)


@converts("Softplus")
def softplus(ctx):
    x, beta, threshold = ctx.args
    dtype, v = ctx.out.dtype, ctx.value(x)
    # torch: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold
    scaled = v if beta == 1 else ctx.op("Mul", v, ctx.scalar(beta, dtype))
    soft = ctx.op("Softplus", scaled)
    if beta != 1:
        soft = ctx.op("Div", soft, ctx.scalar(beta, dtype))
    linear = ctx.op("Greater", scaled, ctx.scalar(threshold, dtype))
    return ctx.op("Where", linear, v, soft, last=True)


@converts("LeakyRelu")
def leaky_relu(ctx):
    x, negative_slope = ctx.args
    return ctx.op("LeakyRelu", ctx.value(x), alpha=float(negative_slope), last=True)


@converts("Clamp")
def clamp(ctx):
    x, low, high = ctx.args
    dtype = ctx.out.dtype
    if hasattr(low, "tensor_meta") or hasattr(high, "tensor_meta"):  # ClampTensor
        v = ctx.operand(x, dtype)
        if low is not None:
            v = ctx.op("Max", v, ctx.operand(low, dtype), last=high is None)
        if high is not None:
            v = ctx.op("Min", v, ctx.operand(high, dtype), last=True)
        return v
    return ctx.op("Clip", ctx.value(x), ctx.operand(low, dtype), ctx.operand(high, dtype),
                  last=True)


@converts("ToDtype")
def to_dtype(ctx):
    x, dtype = ctx.args
    return ctx.op("Cast", ctx.value(x), to=element_type(dtype), last=True)


@converts("Softmax", "LogSoftmax")
def softmax(ctx):
    x, dim = ctx.args
    return ctx.op(ctx.matched, ctx.value(x), axis=int(dim), last=True)
