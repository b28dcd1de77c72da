"""``learntorch.device``: where a tensor's storage lives ('cpu' or 'cuda:N')."""


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'cuda:0', got {type!r}")
        if ":" in type:
            if index is not None:
                raise ValueError(f"device string {type!r} already has an index; do not pass index={index}")
            type, _, idx = type.partition(":")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'") from None
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}")
        self.type, self.index = type, index

    def __eq__(self, other):
        # as torch: a device never equals a string (compare ``t.device.type == "cpu"``)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")


def to_device(d):
    if d is None:
        return CPU
    if isinstance(d, device):
        return d
    if isinstance(d, int):
        return device("cuda", d)
    return device(d)
