"""``F.embedding(input, weight)``: look up rows of a table by integer index.

The output is ``weight[input]``: for indices of shape (*), an output of shape
(*, embedding_dim).  Backward sends each output row's gradient back to the
row it was read from; a row read several times gets the sum.  Two options
change that gradient:

* ``padding_idx``: that row gets no gradient at all (it stays a fixed "pad");
* ``scale_grad_by_freq``: each row's gradient is divided by how often it was
  read in this batch.

``max_norm`` rescales, *in place* and before the lookup, every row read here
whose norm exceeds it (torch's ``embedding_renorm_``).
"""
from ... import _dtypes
from ... import backends
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import check_same_device, wrap

_INDEX_DTYPES = (_dtypes.int64, _dtypes.int32)


class Embedding(Function):
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(indices)
        ctx.num_weights = weight.shape[0]
        ctx.padding_idx, ctx.scale_grad_by_freq = padding_idx, scale_grad_by_freq
        return wrap(backends.current.embedding(weight._data, indices._data))  # a fresh copy

    @staticmethod
    def backward(ctx, grad):
        indices, = ctx.saved_tensors
        return (EmbeddingDenseBackward.apply(grad, indices, ctx.num_weights, ctx.padding_idx,
                                             ctx.scale_grad_by_freq), None, None, None)


class EmbeddingDenseBackward(Function):
    """The table's gradient: each lookup's gradient row added into the row it was read from.

    A Function of its own so that it can be differentiated again
    (``create_graph=True``): its derivative is a lookup of the rows, as in
    torch, which leaves the scaling by frequency to this first backward only.
    """

    node_name = "EmbeddingDenseBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(indices)
        ctx.padding_idx = padding_idx
        return wrap(backends.current.embedding_backward(grad._data, indices._data, num_weights,
                                                        padding_idx, scale_grad_by_freq))

    @staticmethod
    def backward(ctx, grad_table):
        indices, = ctx.saved_tensors
        rows = Embedding.apply(grad_table, indices, None, False)
        if ctx.padding_idx is not None:
            rows = rows.masked_fill((indices == ctx.padding_idx).unsqueeze(-1), 0)
        return rows, None, None, None, None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    for position, (name, value) in enumerate((("indices", input), ("weight", weight)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"embedding(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    check_same_device(input, weight)
    if weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D: a table of shape (num_embeddings, "
                           f"embedding_dim), but got shape {list(weight.shape)}")
    if input.dtype not in _INDEX_DTYPES:
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead (while checking arguments for "
            "embedding). Convert the indices first, e.g. x.long()")
    if sparse:
        raise NotImplementedError("embedding(sparse=True): learntorch has no sparse tensors, so "
                                  "it cannot return a sparse gradient; use sparse=False (the "
                                  "dense gradient has the same values)")
    num = weight.shape[0]
    padding_idx = _padding_index(padding_idx, num)
    a = input._data
    if a.size and (a.min() < 0 or a.max() >= num):
        bad = a[(a < 0) | (a >= num)].reshape(-1)[0]
        raise IndexError(f"index out of range in self: index {bad} for an embedding table of "
                         f"{num} rows (valid indices are 0 to {num - 1})")
    if max_norm is not None:
        _renorm_rows(weight, a, max_norm, norm_type)
    return Embedding.apply(weight, input, padding_idx, bool(scale_grad_by_freq))


def _padding_index(padding_idx, num):
    """A non-negative padding index (negative ones count from the end), or None."""
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        raise AssertionError(f"Padding_idx must be within num_embeddings (got padding_idx="
                             f"{padding_idx} for {num} embeddings)")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _renorm_rows(weight, indices, max_norm, norm_type):
    """Scale each row that is looked up and whose norm exceeds max_norm down to max_norm."""
    with grad_mode.no_grad():
        rows, values = backends.current.embedding_renorm(weight._data, indices, max_norm,
                                                         norm_type)
        weight._data[rows] = values
        weight._version_counter[0] += 1
