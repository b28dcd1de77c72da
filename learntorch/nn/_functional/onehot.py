"""``F.one_hot(tensor, num_classes=-1)``: class indices as rows of 0s with one 1.

For an int64 tensor of shape (*) the result has shape (*, num_classes) and
dtype int64, with ``out[..., k] = 1`` where ``tensor[...] == k``.  With the
default ``num_classes=-1`` the number of classes is ``tensor.max() + 1``.
It is a lookup, not a differentiable operation (integer output).
"""
from ... import _dtypes
from ... import backends
from ..._tensor import Tensor


def one_hot(tensor, num_classes=-1):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.dtype is not _dtypes.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor "
                           f"(got {tensor.dtype}); convert it first: tensor.long()")
    a = tensor._data
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor: pass "
                               "num_classes explicitly")
        num_classes = int(a.max()) + 1
    if a.size and a.min() < 0:
        raise RuntimeError(f"Class values must be non-negative (found {a.min()} in a tensor of "
                           f"shape {list(tensor.shape)})")
    if a.size and a.max() >= num_classes:
        raise RuntimeError(f"Class values must be smaller than num_classes (found {a.max()}, "
                           f"num_classes={num_classes})")
    return Tensor._wrap(backends.current.one_hot(a, num_classes))
