"""Converters of the ops that move, view or copy elements: reshape, transpose, index, cat.

A captured ``view`` recorded concrete sizes (``x.view(x.size(0), -1)`` ran as
``View(x, (64, 256))``).  With a dynamic batch dimension those numbers would be
wrong for another batch, so ``Reshape`` gets 0 ("keep this dimension of the
input") wherever the target keeps the input's leading dimensions, and -1 for a
single remaining one -- exactly what the model computed on the example, and what
it computes on any batch.  ``nn.Flatten``'s reshape becomes ONNX's ``Flatten``.
"""
import math

from .._registry import converts


def alias(ctx):
    """Ops whose result has the values of their input (contiguous, clone): no ONNX node."""
    return ctx.value(ctx.args[0]) if ctx.matched != "_Identity" else _identity(ctx)


def _identity(ctx):
    # a module's backward hooks wrap its inputs/outputs in _Identity(state, side, *tensors)
    names = [ctx.value(t) for t in ctx.args[2:]]
    return names[0] if len(names) == 1 and not isinstance(ctx.out, tuple) else names


converts("Contiguous", "Clone", "_Identity")(alias)


@converts("View", "UnsafeView")
def view(ctx):
    x, shape = ctx.args
    source = ctx.meta(x).shape
    target = tuple(shape)
    if (len(target) == 2 and len(source) > 2 and target[0] == source[0]
            and target[1] == math.prod(source[1:])):
        return ctx.op("Flatten", ctx.value(x), axis=1, last=True)  # nn.Flatten's reshape
    if 0 in target:  # an empty tensor: 0 must mean "size 0", not "keep" (opset 14's allowzero)
        if ctx.opset < 14:
            ctx.unsupported("reshaping to a size of 0 needs Reshape's allowzero (opset 14)",
                            "Export with opset_version=14 or later.")
        return ctx.op("Reshape", ctx.value(x), ctx.ints(target), allowzero=1, last=True)
    kept = 0
    while kept < min(len(source), len(target)) and source[kept] == target[kept]:
        kept += 1
    spec = [0] * kept + list(target[kept:])
    if len(target) - kept == 1:
        spec[-1] = -1
    return ctx.op("Reshape", ctx.value(x), ctx.ints(spec), last=True)


@converts("Permute")
def permute(ctx):
    x, dims = ctx.args
    return ctx.op("Transpose", ctx.value(x), perm=[int(d) for d in dims], last=True)


@converts("Transpose")
def transpose(ctx):
    x, d0, d1 = ctx.args
    perm = list(range(len(ctx.meta(x).shape)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ctx.op("Transpose", ctx.value(x), perm=perm, last=True)


@converts("T")
def t(ctx):
    (x,) = ctx.args
    if len(ctx.meta(x).shape) < 2:
        return ctx.value(x)
    return ctx.op("Transpose", ctx.value(x), perm=[1, 0], last=True)


@converts("Squeeze")
def squeeze(ctx):
    x, dims = ctx.args
    if not dims:
        return ctx.value(x)
    return ctx.op("Squeeze", ctx.value(x), ctx.ints(sorted(dims), "axes"), last=True)


@converts("Unsqueeze")
def unsqueeze(ctx):
    x, dim = ctx.args
    return ctx.op("Unsqueeze", ctx.value(x), ctx.ints([dim], "axes"), last=True)


@converts("Expand")
def expand(ctx):
    x, shape, strides = ctx.args
    source = ctx.meta(x).shape
    # ONNX's Expand broadcasts both ways: 1 keeps an input dimension as it is, so that a
    # dynamic batch dimension of the input is not pinned to the example's size
    offset = len(shape) - len(source)
    spec = [1 if i >= offset and source[i - offset] == size else size
            for i, size in enumerate(shape)]
    return ctx.op("Expand", ctx.value(x), ctx.ints(spec), last=True)


@converts("Cat")
def cat(ctx):
    dim, *tensors = ctx.args
    return ctx.op("Concat", *[ctx.value(t) for t in tensors], axis=int(dim), last=True)


@converts("Stack")
def stack(ctx):
    dim, *tensors = ctx.args
    axes = ctx.ints([dim], "axes")
    parts = [ctx.op("Unsqueeze", ctx.value(t), axes) for t in tensors]
    return ctx.op("Concat", *parts, axis=int(dim), last=True)


@converts("Narrow")
def narrow(ctx):
    x, dim, start, length = ctx.args
    return ctx.op("Slice", ctx.value(x), ctx.ints([start], "starts"),
                  ctx.ints([start + length], "ends"), ctx.ints([dim], "axes"), last=True)


@converts("Repeat")
def repeat(ctx):
    x, repeats = ctx.args
    v, rank = ctx.value(x), len(ctx.meta(x).shape)
    if len(repeats) > rank:  # torch prepends dimensions of size 1 first
        v = ctx.op("Reshape", v, ctx.ints((1,) * (len(repeats) - rank) + ctx.meta(x).shape))
    return ctx.op("Tile", v, ctx.ints(repeats, "repeats"), last=True)


@converts("ConstantPad")
def constant_pad(ctx):
    x, widths, value = ctx.args
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        ctx.unsupported("negative padding (cropping)", "Slice the input instead.")
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    return ctx.op("Pad", ctx.value(x), ctx.ints(pads, "pads"), ctx.scalar(value, ctx.out.dtype),
                  mode="constant", last=True)


@converts("SliceView")
def basic_index(ctx):
    """``x[1:3, 0, None, ...]``: one Slice, then Squeeze the integer-indexed dims, then
    Unsqueeze where ``None`` adds one."""
    x, index = ctx.args
    shape = ctx.meta(x).shape
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    items = []
    for i in index:
        items.extend([slice(None)] * (len(shape) - consumed) if i is Ellipsis else [i])
    starts, ends, axes, steps, squeezed, unsqueezed = [], [], [], [], [], []
    dim = out_dim = 0
    for item in items:
        if item is None:
            unsqueezed.append(out_dim)
            out_dim += 1
            continue
        size = shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if (start, stop, step) != (0, size, 1):
                starts.append(start), ends.append(stop), axes.append(dim), steps.append(step)
            out_dim += 1
        else:
            position = item + size if item < 0 else item
            starts.append(position), ends.append(position + 1), axes.append(dim)
            steps.append(1)
            squeezed.append(dim)
        dim += 1
    v = ctx.value(x)
    if axes:
        v = ctx.op("Slice", v, ctx.ints(starts, "starts"), ctx.ints(ends, "ends"),
                   ctx.ints(axes, "axes"), ctx.ints(steps, "steps"),
                   last=not squeezed and not unsqueezed)
    if squeezed:
        v = ctx.op("Squeeze", v, ctx.ints(squeezed, "axes"), last=not unsqueezed)
    if unsqueezed:
        v = ctx.op("Unsqueeze", v, ctx.ints(unsqueezed, "axes"), last=True)
    return v
