"""``learntorch.Size``: a tuple of dimension sizes, as ``torch.Size``."""


class Size(tuple):
    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"learntorch.Size({list(self)})"

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out
