"""Converters of the reductions: sum, mean, max/min (with indices), logsumexp, var/std.

ONNX moved the ``axes`` of ReduceSum to an input in opset 13 and of the other
Reduce ops in opset 18; ``_reduce`` writes whichever the target opset wants.
"""
import math

from .._builder import element_type
from .._registry import converts


def _reduce(ctx, op_type, value, dims, keepdim, last=True):
    axes = [int(d) for d in dims]
    keep = int(bool(keepdim))
    if op_type == "ReduceSum" or ctx.opset >= 18:
        return ctx.op(op_type, value, ctx.ints(axes, "axes"), keepdims=keep, last=last)
    return ctx.op(op_type, value, axes=axes, keepdims=keep, last=last)


@converts("Sum", "Mean")
def sum_mean(ctx):
    x, dims, keepdim, dtype = ctx.args
    v = ctx.value(x)
    if ctx.meta(x).dtype is not ctx.out.dtype:  # an integer sum is int64; dtype= given
        v = ctx.op("Cast", v, to=element_type(ctx.out.dtype))
    return _reduce(ctx, "ReduceSum" if ctx.matched == "Sum" else "ReduceMean", v, dims, keepdim)


@converts("_Extreme")
def amax_amin(ctx):
    x, dims, keepdim = ctx.args
    is_max = any(k.__name__ == "Amax" for k in ctx.node.target.__mro__)  # amax, max()
    op_type = "ReduceMax" if is_max else "ReduceMin"
    return _reduce(ctx, op_type, ctx.value(x), dims, keepdim)


@converts("_ExtremeWithIndices")
def max_min_dim(ctx):
    x, dim, keepdim = ctx.args
    is_max = ctx.node.target.__name__ == "MaxDim"
    values = _reduce(ctx, "ReduceMax" if is_max else "ReduceMin", ctx.value(x), [dim], keepdim,
                     last=False)
    indices = ctx.op("ArgMax" if is_max else "ArgMin", ctx.value(x), axis=int(dim),
                     keepdims=int(bool(keepdim)))
    return [values, indices]


@converts("Logsumexp")
def logsumexp(ctx):
    x, dims, keepdim = ctx.args
    return _reduce(ctx, "ReduceLogSumExp", ctx.value(x), dims, keepdim)


@converts("Var", "Std")
def var_std(ctx):
    """sum((x - mean)^2) / (n - correction), and its square root: the two-pass formula."""
    x, dims, correction, keepdim = ctx.args
    shape, dtype = ctx.meta(x).shape, ctx.out.dtype
    n = math.prod(shape[d] for d in dims)
    v = ctx.value(x)
    centred = ctx.op("Sub", v, _reduce(ctx, "ReduceMean", v, dims, True, last=False))
    squares = _reduce(ctx, "ReduceSum", ctx.op("Mul", centred, centred), dims, keepdim,
                      last=False)
    is_std = ctx.matched == "Std"
    var = ctx.op("Div", squares, ctx.scalar(max(n - correction, 0), dtype), last=not is_std)
    return ctx.op("Sqrt", var, last=True) if is_std else var
