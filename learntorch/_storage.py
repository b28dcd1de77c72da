"""``Tensor.untyped_storage()``: the bytes behind a tensor and all of its views.

As in torch, a storage is untyped -- a flat run of bytes -- and a tensor is a
*view* of it: dtype, shape, strides and an offset say how to read the bytes.
Two tensors share memory exactly when their storages have the same
``data_ptr()``.  Reading the elements back in storage order is a matter of
reinterpreting the bytes with the tensor's dtype::

    >>> t = learntorch.arange(6.).reshape(2, 3).T          # a transposed view
    >>> s = t.untyped_storage()
    >>> s.nbytes(), s.data_ptr() == t.reshape(-1).untyped_storage().data_ptr()
    (24, False)
    >>> np.frombuffer(bytes(s.tolist()), dtype=np.float32)  # storage order, not t's order
    array([0., 1., 2., 3., 4., 5.], dtype=float32)
"""
import numpy as np


class UntypedStorage:
    """A read-only window on the bytes of one storage (torch.UntypedStorage's reading API)."""

    __slots__ = ("_bytes", "device")

    def __init__(self, byte_view, device):
        self._bytes = byte_view  # a 1-D uint8 numpy view of the whole root buffer
        self.device = device

    def data_ptr(self):
        return self._bytes.__array_interface__["data"][0]

    def nbytes(self):
        return self._bytes.size

    def size(self):
        return self._bytes.size

    def __len__(self):
        return self._bytes.size

    def element_size(self):
        return 1

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise NotImplementedError("slicing an UntypedStorage is not supported; index one "
                                      "byte, or use tolist()")
        return int(self._bytes[index])

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes.tolist()

    def __array__(self, dtype=None, copy=None):
        # numpy interop (np.shares_memory, np.frombuffer(...)): the bytes themselves
        return self._bytes if dtype is None else self._bytes.astype(dtype)

    def __repr__(self):
        shown = "\n".join(f" {b}" for b in self._bytes[:16].tolist())
        more = "\n ..." if self._bytes.size > 16 else ""
        return (f"{shown}{more}\n[learntorch.storage.UntypedStorage(device={self.device}) "
                f"of size {self._bytes.size}]")


def bytes_of(root):
    """A read-only 1-D uint8 view of ``root``, the numpy array that owns a tensor's memory
    (owning arrays are one contiguous block, in C or Fortran order: no copy either way)."""
    block = root if root.flags["C_CONTIGUOUS"] else root.T  # Fortran order: its transpose is C
    byte_view = block.reshape(-1).view(np.uint8)
    byte_view.flags.writeable = False
    return byte_view
