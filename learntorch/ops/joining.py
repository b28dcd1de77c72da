"""Joining and splitting: cat, stack, split, chunk, unbind.

``cat``'s backward hands each input the slice of the gradient that came from
it; ``split``/``chunk``/``unbind`` return views, so their backward is that of
slicing.
"""
import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import check_same_device, wrap


class Cat(Function):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        # a legacy empty vector (shape [0]) is skipped, as in torch: its size is None
        ctx.sizes = [None if _skipped(t, tensors) else t.shape[dim] for t in tensors]
        dtype = _dtypes.result_type(*tensors)  # torch promotes mixed dtypes (skipped ones too)
        arrays = [t._data.astype(dtype.np, copy=False)
                  for t, size in zip(tensors, ctx.sizes) if size is not None]
        if not arrays:
            return wrap(backends.current.full((0,), 0, dtype.np, like=tensors[0]._data))
        return wrap(backends.current.concatenate(arrays, dim))

    @staticmethod
    def backward(ctx, grad):
        # each input gets the slice of the gradient where its values went
        out, start = [None], 0
        for size in ctx.sizes:
            if size is None:
                out.append(grad.new_zeros(0))
                continue
            out.append(grad.narrow(ctx.dim, start, size))
            start += size
        return tuple(out)


def _skipped(t, tensors):
    """torch.cat ignores 1-D empty tensors when another input has real contents."""
    legacy_empty = t.ndim == 1 and t.shape[0] == 0
    return legacy_empty and not all(u.ndim == 1 and u.shape[0] == 0 for u in tensors)


def _check_tensor_list(tensors, name, empty_error=RuntimeError):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' must be a sequence of Tensors, not a "
                        "Tensor; wrap it in a list")
    tensors = list(tensors)
    if not tensors:
        raise empty_error(f"{name}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    check_same_device(*tensors)
    return tensors


def cat(tensors, dim=0):
    tensors = _check_tensor_list(tensors, "cat", empty_error=ValueError)
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated; make it 1-D first (t.reshape(1) or "
                               "t.unsqueeze(0)), or use torch.stack for numbers")
    joined = [t for t in tensors if not _skipped(t, tensors)]
    ref = joined[0]
    d = ref._wrap_dim(dim)
    for i, t in enumerate(joined):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                               f"{t.ndim} (tensor {i} has shape {list(t.shape)})")
        for j in range(ref.ndim):
            if j != d and t.shape[j] != ref.shape[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[j]} but got size {t.shape[j]} for tensor number {i} in the list "
                    f"(shapes {[list(x.shape) for x in joined]})")
    return Cat.apply(d, *tensors)


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = _check_tensor_list(tensors, "stack")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
    d = tensors[0]._wrap_dim(dim, tensors[0].ndim + 1)
    return Stack.apply(d, *tensors)


class Stack(Function):
    """Equal-shaped tensors side by side along a new dimension ``dim``.

    One node for the whole stack (not an unsqueeze per input and a cat, which
    made collating a batch of 64 samples record 65 ops); input i's gradient is
    slice i of the gradient along the new dimension.
    """

    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        dtype = _dtypes.result_type(*tensors)  # mixed dtypes promote, as in cat
        return wrap(backends.current.stack([t._data.astype(dtype.np, copy=False)
                                            for t in tensors], dim))

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(grad.select(ctx.dim, i) for i in range(grad.shape[ctx.dim]))


def split(tensor, split_size_or_sections, dim=0):
    d = tensor._wrap_dim(dim)
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor (got a 0-d tensor)")
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        step = int(split_size_or_sections)
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"split_size {step} for dimension {d} of size {size}")
        sections = [min(step, size - s) for s in range(0, size, step)] if size else [0]
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sections}")
    out, start = [], 0
    for s in sections:
        out.append(tensor.narrow(d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = input._wrap_dim(dim)
    size = input.shape[d]
    if size == 0:  # torch hands back `chunks` empty pieces
        return tuple(input.narrow(d, 0, 0) for _ in range(chunks))
    # pieces of ceil(size / chunks): the last may be smaller, and there may be fewer pieces
    return split(input, -(-size // chunks), d)


def unbind(input, dim=0):
    d = input._wrap_dim(dim)
    return tuple(input.select(d, i) for i in range(input.shape[d]))


def hstack(tensors):
    """Join side by side: along dim 1, or dim 0 for vectors (scalars count as vectors)."""
    tensors = [t if t.ndim else t.reshape(1) for t in _check_tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join on top of each other along dim 0; vectors (and scalars) become rows first."""
    tensors = _check_tensor_list(tensors, "vstack")
    return cat([t if t.ndim >= 2 else t.reshape(1, -1) for t in tensors], 0)
