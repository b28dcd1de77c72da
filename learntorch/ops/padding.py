"""Constant padding (``F.pad`` with mode='constant'); its backward slices the border off."""
import numpy as np

from ..autograd.function import Function
from ._helpers import wrap


class ConstantPad(Function):
    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.widths = widths
        # negative widths crop, as in torch
        crop = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for (lo, hi), s in zip(widths, x.shape))
        a = x._data[crop]
        pos = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
        return wrap(np.pad(a, pos, mode="constant", constant_values=value))

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


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: ``pad`` lists (left, right) pairs from the *last* dim backwards."""
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number "
                           f"of dimensions of the input; got {len(pad)} for a {input.ndim}-D input")
    if mode != "constant":
        raise NotImplementedError(f"pad mode {mode!r} is not supported yet; only 'constant'")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return constant_pad(input, widths, 0.0 if value is None else value)
