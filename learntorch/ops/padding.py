"""Padding: ``F.pad`` in its four modes, and their backward.

``pad(x, (left, right, top, bottom, front, back))`` lists (before, after) pairs
from the *last* dim backwards.  The modes differ in what the new border holds::

    x = [a b c d], pad (2, 2)
    constant   0 0 | a b c d | 0 0     a fixed value (negative widths crop)
    reflect    c b | a b c d | c b     a mirror that does not repeat the edge
    replicate  a a | a b c d | d d     the edge, repeated
    circular   c d | a b c d | a b     the other end, as if the row were a ring

The arithmetic is the backend's (``backends/numpy_families/padding.py``): every
non-constant mode is a *gather* -- each output position copies one input position
-- so its backward is the matching *scatter-add*: an input element copied to
several places (a border element of a reflect or replicate pad) receives the sum of
their gradients.  ``Pad`` and ``PadBackward`` are each other's backward, so
gradients of gradients work too; a constant pad's backward is a pad by the
opposite widths (a crop).
"""
import numbers

from .. import backends
from ..autograd.function import Function
from ._helpers import wrap


# ---------------------------------------------------------------- mode 'constant'
class ConstantPad(Function):
    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.widths = widths
        return wrap(backends.current.pad(x._data, widths, "constant", value))

    @staticmethod
    def backward(ctx, grad):
        # padding by w and padding by -w undo each other (up to the border values), so the
        # gradient goes back through the opposite padding: added borders are cut off,
        # cropped borders get a zero gradient
        undo = tuple((-lo, -hi) for lo, hi in ctx.widths)
        return ConstantPad.apply(grad, undo, 0), None, None


def constant_pad(input, widths, value=0.0):
    """Pad with ``widths`` = [(before, after)] per dimension, first dimension first."""
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    for d, ((lo, hi), size) in enumerate(zip(widths, input.shape)):
        if size + lo + hi < 0:
            raise RuntimeError(f"The input size {size}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input (shape {list(input.shape)}).")
    return ConstantPad.apply(input, widths, value)


# ---------------------------------------------------------------- the other modes: a gather
class GatherPad(Function):
    """Reflect, replicate or circular padding; subclasses carry torch's node names."""

    @staticmethod
    def forward(ctx, x, widths, mode, names):
        ctx.widths, ctx.mode, ctx.names, ctx.shape = widths, mode, names, x.shape
        return wrap(backends.current.pad(x._data, widths, mode))

    @staticmethod
    def backward(ctx, grad):
        names = ctx.names[1:]
        return (_pad_node(ScatterPad, names).apply(grad, ctx.widths, ctx.mode, names, ctx.shape),
                None, None, None)


class ScatterPad(Function):
    """The adjoint of GatherPad: each output gradient is added to the input it was copied from."""

    @staticmethod
    def forward(ctx, grad, widths, mode, names, shape):
        ctx.widths, ctx.mode, ctx.names = widths, mode, names
        return wrap(backends.current.pad_backward(grad._data, widths, mode, shape))

    @staticmethod
    def backward(ctx, grad):
        names = ctx.names[1:]
        return (_pad_node(GatherPad, names).apply(grad, ctx.widths, ctx.mode, names),
                None, None, None, None)


_NODES = {}


def _pad_node(kind, names):
    """The Function class named ``names[0]`` (torch's node name) doing ``kind``'s work."""
    key = (kind, names[0])
    if key not in _NODES:
        _NODES[key] = type(kind.__name__, (kind,), {"node_name": names[0]})
    return _NODES[key]


def _node_names(mode, k):
    # torch: ReflectionPad2DBackward0, and ReflectionPad2DBackwardBackward0 for its backward.
    # torch builds circular padding from slice copies (grad_fn CopySlices); here it is one
    # gather like the others, named in the same style.
    stem = {"reflect": "ReflectionPad", "replicate": "ReplicationPad",
            "circular": "CircularPad"}[mode] + f"{k}DBackward"
    return tuple(stem + "Backward" * i + "0" for i in range(4))


def _check_gather_pad(input, mode, widths, k):
    """torch's rules for reflect/replicate/circular: ranks, sizes and widths."""
    shape = list(input.shape)
    if not (input.ndim == k + 1 or input.ndim == k + 2) or k > 3:
        raise NotImplementedError(
            f"Padding size {2 * k} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    padded = range(input.ndim - k, input.ndim)
    if mode == "circular":
        for d in padded:
            (lo, hi), size = widths[d], shape[d]
            kept = size + min(lo, 0) + min(hi, 0)
            if size + lo + hi < 0 or kept < 0:
                raise RuntimeError(f"Negative padding value is resulting in an empty dimension: "
                                   f"padding ({lo}, {hi}) at dimension {d} of input {shape}")
            if max(lo, hi) > kept:
                raise RuntimeError(
                    f"Padding value causes wrapping around more than once: padding ({lo}, {hi})"
                    f" at dimension {d} of input {shape} (after cropping, size {kept}); "
                    "circular padding can add at most the size of the dimension on each side")
        return
    batched = input.ndim == k + 2
    if any(s == 0 for s in shape[1 if batched else 0:]):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {shape}")
    if mode == "reflect":
        for i, d in enumerate(reversed(padded)):
            (lo, hi), size = widths[d], shape[d]
            if lo >= size or hi >= size:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{shape} (a reflection never repeats the edge, so it can add at most "
                    "size - 1 elements on each side; use mode='replicate' or 'circular')")
    outputs = [shape[d] + widths[d][0] + widths[d][1] for d in padded]
    if min(outputs) < 0 or max(outputs) < 1:
        raise RuntimeError(f"input (sizes {[shape[d] for d in padded]}) is too small. "
                           f"Calculated output sizes: {outputs} (the negative padding crops more "
                           "than the input has)")


# ---------------------------------------------------------------- torch.nn.functional.pad
_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: ``pad`` lists (left, right) pairs from the *last* dim backwards.

    ``mode='constant'`` pads any dims with ``value`` (default 0); 'reflect', 'replicate'
    and 'circular' pad the last 1, 2 or 3 dims of a (batch, channels, ...) or
    (channels, ...) input, as the padding layers of convolutions do.
    """
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}: use one of "
                                  f"{', '.join(map(repr, _MODES))}")
    pad = list(pad)
    for p in pad:
        if not isinstance(p, numbers.Integral) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' must be a tuple of ints, but got "
                            f"{type(p).__name__} in {tuple(pad)}")
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2: got {len(pad)} numbers; "
                           "give a (before, after) pair for each padded dim")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim} (shape {list(input.shape)})")
    k = len(pad) // 2
    widths = [(0, 0)] * input.ndim
    for i in range(k):
        widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    if mode == "constant":
        return constant_pad(input, widths, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument: the border "
                           "is copied from the input; use mode='constant' to pad with a value")
    if mode != "circular" and input.dtype.name == "bool":
        raise NotImplementedError(f"\"{'reflection' if mode == 'reflect' else 'replication'}"
                                  f"_pad{k}d\" not implemented for 'Bool': convert first, e.g. "
                                  "x.float()")
    _check_gather_pad(input, mode, widths, k)
    names = _node_names(mode, k)
    return _pad_node(GatherPad, names).apply(input, tuple(widths), mode, names)
