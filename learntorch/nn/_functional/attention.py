"""Attention: ``F.scaled_dot_product_attention`` and ``F.multi_head_attention_forward``.

Each query asks "which keys am I like?"; the answer weights the values:

    scores  = q @ k^T * scale            (..., L, S)   scale = 1/sqrt(head size) by default
    weights = softmax(scores + mask)      each row sums to 1 over the S keys
    out     = weights @ v                 (..., L, Ev)

Both are written with ops the engine already has (matmul, softmax, masked_fill, dropout,
linear), as torch's "math" implementation is: no Function of their own, so the graph shows
every step and backward needs nothing new.  torch's fused CPU and GPU kernels compute the
same values in another order (the results agree to rounding).

Masks, the two conventions torch has:

* ``scaled_dot_product_attention(attn_mask=bool)``: True means *take part* (a causal mask is
  ``tril(ones)``); a float mask is *added* to the scores (-inf removes a key);
* ``MultiheadAttention(key_padding_mask=bool, attn_mask=bool)``: True means *masked out*
  (padding); float masks are added, as above.

A row whose keys are all masked out has no softmax (every score is -inf): sdpa gives zeros
there (torch's "safe softmax"); multi-head attention with ``need_weights=True`` gives NaN, as
torch's does.
"""
import math
import warnings

from ... import factories
from ..._dtypes import bool_
from ..._tensor import Tensor
from ...autograd.function import autocast_inputs
from ...ops import linalg
from ...ops.comparison import where
from ...ops.indexing import masked_fill
from ...ops.joining import cat
from ...ops.padding import pad
from ...ops.repeating import repeat_interleave
from ...ops.softmax import softmax
from .dropout import dropout
from .linear import linear


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, over the last two dims; the leading dims
    (batch, heads) broadcast.  query (..., L, E), key (..., S, E), value (..., S, Ev)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, "
                            f"not {type(t).__name__}")
    # on autocast's 16-bit lists (CPU and cuda): the inputs, a float mask too, go to 16 bits
    query, key, value, attn_mask = autocast_inputs(linalg.Bmm, query, key, value, attn_mask)
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: "
                           f"{value.dtype} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: "
                           f"{value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype is not bool_ and (
            attn_mask.dtype is not query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {attn_mask.dtype} and query.dtype: "
                           f"{query.dtype} instead.")
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        # grouped-query attention: fewer key/value heads than query heads, each shared by a
        # group of query heads
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if heads % kv_heads or heads % value.shape[-3]:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query (query {heads}, key {kv_heads}, value "
                               f"{value.shape[-3]})")
        key = repeat_interleave(key, heads // kv_heads, dim=-3)
        value = repeat_interleave(value, heads // value.shape[-3], dim=-3)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True: pass one or the other (a causal mask is "
                           "ones(L, S, dtype=bool).tril())")
    length, source = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = linalg.matmul(query, key.transpose(-2, -1)) * scale
    keep = None  # where a key takes part (bool), when some do not
    if is_causal:   # query i sees keys 0..i
        keep = factories.ones(length, source, dtype=bool_, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype is bool_:
            keep = attn_mask
        else:
            scores = scores + attn_mask
    if keep is not None:
        scores = masked_fill(scores, keep.logical_not(), float("-inf"))
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:  # sdpa drops whenever asked, in eval mode too (it has no mode)
        weights = dropout(weights, p=dropout_p)
    return linalg.matmul(weights, value)


def _safe_softmax(scores):
    """softmax over the last dim, with 0 (not NaN) in a row that is all -inf, and no gradient
    through such a row: the softmax runs on zeros there, then its result is replaced."""
    dead = (scores == float("-inf")).all(dim=-1, keepdim=True)
    if not dead.any():
        return softmax(scores, dim=-1)
    zeros = factories.zeros((), dtype=scores.dtype, device=scores.device)
    return where(dead, zeros, softmax(where(dead, zeros, scores), dim=-1))


def canonical_mask(mask, name, other, other_name, dtype, check_other=True):
    """A mask as multi-head attention adds it: a bool one (True = masked out) becomes 0 / -inf
    in ``dtype``; a float one is used as it is.  Warns, as torch, when the two masks differ
    in type."""
    if mask is None:
        return None
    if mask.dtype is not bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported (got "
                             f"{mask.dtype}): convert it with .bool() or .float()")
    if check_other and other is not None and other.dtype is not mask.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=3)
    if mask.dtype is bool_:
        return masked_fill(factories.zeros(mask.shape, dtype=dtype, device=mask.device), mask,
                           float("-inf"))
    return mask


def multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
        bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
        training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
        use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
        v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
        is_causal=False):
    """Multi-head attention on (L, N, E) inputs, or unbatched (L, E): project query, key and
    value, split E into ``num_heads`` heads of E/num_heads, attend in each head, join the heads
    and project once more.  Returns (output, weights averaged over heads or per head, or None
    when ``need_weights=False``)."""
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    length, batch, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                      "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None    # sdpa makes the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
        q, k, v = _project(query, key, value, (q_proj_weight, k_proj_weight, v_proj_weight),
                           in_proj_bias)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                                 f"{tuple(value.shape)}")
        if query is key and key is value:   # self-attention: one product, split in three
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            q, k, v = _project(query, key, value, in_proj_weight.chunk(3), in_proj_bias)

    if attn_mask is not None:
        expected = (length, key.shape[0]) if attn_mask.ndim == 2 else (
            batch * num_heads, length, key.shape[0])
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is "
                               f"{tuple(attn_mask.shape)}, but should be {expected}.")
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v are set together or not at all")
    if bias_k is not None:  # one more key and value, learned, seen by every query
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = cat([k, bias_k.repeat(1, batch, 1)])
        v = cat([v, bias_v.repeat(1, batch, 1)])
        attn_mask, key_padding_mask = _one_more_key(attn_mask, key_padding_mask)

    # heads: (L, N, E) -> (N * heads, L, head_dim), every head of every sample a batch entry
    q = _heads(q, batch, num_heads, head_dim)
    k = _heads(k, batch, num_heads, head_dim) if static_k is None else _static(
        static_k, "static_k", batch * num_heads, head_dim)
    v = _heads(v, batch, num_heads, head_dim) if static_v is None else _static(
        static_v, "static_v", batch * num_heads, head_dim)
    if add_zero_attn:       # one more key and value, of zeros
        zeros = factories.zeros((batch * num_heads, 1, head_dim), dtype=k.dtype,
                                device=k.device)
        k, v = cat([k, zeros], dim=1), cat([v, zeros.to(v.dtype)], dim=1)
        attn_mask, key_padding_mask = _one_more_key(attn_mask, key_padding_mask)
    source = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, source):
            raise AssertionError(f"Expected key_padding_mask of shape {(batch, source)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        padding = key_padding_mask.reshape(batch, 1, 1, source).expand(
            -1, num_heads, -1, -1).reshape(batch * num_heads, 1, source)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / head_dim)
        if attn_mask is not None:
            scores = linalg.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            scores = linalg.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = linalg.bmm(weights, v).transpose(0, 1).reshape(length * batch, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(length, batch, -1)
        weights = weights.reshape(batch, num_heads, length, source)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 and attn_mask.ndim == 3
                     else attn_mask.reshape(batch, num_heads, -1, source))
    q, k, v = (x.reshape(batch, num_heads, -1, head_dim) for x in (q, k, v))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(batch * length, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(length, batch, -1)
    return (out if batched else out.squeeze(1)), None


def _heads(x, batch, num_heads, head_dim):
    """(S, N, E) -> (N * heads, S, head_dim)."""
    return x.reshape(x.shape[0], batch * num_heads, head_dim).transpose(0, 1)


def _static(given, name, rows, head_dim):
    """A key or value given already split into heads, (N * heads, S, head_dim), checked."""
    if given.shape[0] != rows or given.shape[2] != head_dim:
        raise AssertionError(f"expecting {name} of shape ({rows}, S, {head_dim}), but got "
                             f"{tuple(given.shape)}")
    return given


def _project(query, key, value, weights, bias):
    """The three input projections, each with its third of the bias."""
    biases = (None, None, None) if bias is None else bias.chunk(3)
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _one_more_key(attn_mask, key_padding_mask):
    """The masks widened by one key (a column of 0: the new key is never masked)."""
    return (None if attn_mask is None else pad(attn_mask, (0, 1)),
            None if key_padding_mask is None else pad(key_padding_mask, (0, 1)))


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-D) or not (2-D), checked as torch checks them."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             "respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.ndim}-D tensor instead")
        if not batched and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{tuple(attn_mask.shape)}")
    return batched
