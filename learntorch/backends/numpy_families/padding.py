"""Padding in its four modes, and gathers along dims (which the other three modes and the
nearest-neighbour upsampling are).

``widths`` lists one (before, after) pair per dim of ``x``, first dim first.  The
modes differ in what the new border holds::

    x = [a b c d], widths (2, 2)
    constant   0 0 | a b c d | 0 0     a fixed value (negative widths crop)
    reflect    c b | a b c d | c b     a mirror that does not repeat the edge
    replicate  a a | a b c d | d d     the edge, repeated
    circular   c d | a b c d | a b     the other end, as if the row were a ring

Every non-constant mode is a *gather*: each output position copies one input
position (``source_positions`` computes which), one dim after the other.  So its
backward is the matching *scatter-add*: an input element copied to several places
(a border element of a reflect or replicate pad) receives the sum of their gradients.
"""
import numpy as np


class PaddingFamily:
    def pad(self, x, widths, mode="constant", value=0):
        """``x`` padded by ``widths`` ((before, after) per dim) in ``mode``."""
        if mode == "constant":
            # negative widths crop, as in torch
            crop = tuple(slice(max(-lo, 0), s - max(-hi, 0))
                         for (lo, hi), s in zip(widths, x.shape))
            grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
            return np.pad(x[crop], grow, mode="constant", constant_values=value)
        return gather_along_dims(x, pad_positions(mode, x.shape, widths))

    def pad_backward(self, grad, widths, mode, input_shape):
        """dLoss/dx of ``pad`` for dLoss/dout = ``grad``: an array of ``input_shape``."""
        if mode == "constant":
            # padding by w and by -w undo each other (up to the border values): added
            # borders are cut off, cropped ones get a zero gradient
            return self.pad(grad, [(-lo, -hi) for lo, hi in widths], "constant", 0)
        return scatter_add_along_dims(grad, pad_positions(mode, input_shape, widths),
                                      input_shape)


def pad_positions(mode, shape, widths):
    """((dim, source positions), ...) of the dims that ``widths`` pads in ``mode``."""
    return tuple((d, source_positions(mode, n, lo, hi))
                 for d, (n, (lo, hi)) in enumerate(zip(shape, widths)) if lo or hi)


def source_positions(mode, size, before, after):
    """For each output position along one dim, the input position it copies.

    ``o`` counts output positions from where the input's first element lands, so
    the left border has o < 0 and the right border o >= size.
    """
    if mode == "circular":
        # torch crops first (negative widths) and then wraps around what is left
        kept = size + min(before, 0) + min(after, 0)
        o = np.arange(kept + max(before, 0) + max(after, 0)) - max(before, 0)
        return o % kept + max(-before, 0) if kept else o
    o = np.arange(size + before + after) - before
    if mode == "replicate":
        return np.clip(o, 0, size - 1)
    if mode != "reflect":
        raise ValueError(f"unknown padding mode {mode!r}")
    o = np.abs(o)  # reflect: -1 -> 1, -2 -> 2 (the edge itself is not repeated) ...
    return np.where(o >= size, 2 * (size - 1) - o, o)  # ... and size -> size - 2 at the end


def gather_along_dims(x, positions):
    """out = x[..., index, ...] along each (dim, index) of ``positions`` in turn."""
    for dim, index in positions:
        x = np.take(x, index, axis=dim)
    return x


def scatter_add_along_dims(grad, positions, shape):
    """The adjoint of ``gather_along_dims``: each gradient element is added to the element
    it was copied from; returns an array of ``shape``."""
    for dim, index in reversed(positions):
        sizes = list(grad.shape)
        sizes[dim] = shape[dim]
        summed = np.zeros(sizes, dtype=grad.dtype, like=grad)  # on grad's device
        # add.at, not +=: a position that was copied twice must receive both gradients
        np.add.at(np.moveaxis(summed, dim, 0), index, np.moveaxis(grad, dim, 0))
        grad = summed
    return grad
