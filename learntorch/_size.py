"""``learntorch.Size``: a tuple of dimension sizes, as ``torch.Size``.

It is a plain tuple (``x.shape == (2, 3)`` is True) that stays a Size through
slicing, ``+`` and ``*``, and prints as ``learntorch.Size([2, 3])``.
"""
import operator


class Size(tuple):
    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for i, s in enumerate(sizes):
            try:
                operator.index(s)  # ints, numpy ints and one-element integer tensors
            except TypeError:
                raise TypeError(f"Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        return super().__new__(cls, (operator.index(s) for s in sizes))

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"learntorch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__
