"""``nn.MultiheadAttention``: attention with ``num_heads`` heads, and its learned projections.

Parameters (torch's names, so state dicts load both ways):

* ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E,): the query, key and value projections
  stacked -- or ``q_proj_weight``, ``k_proj_weight`` (E, kdim), ``v_proj_weight`` (E, vdim)
  when key or value have another width than the query;
* ``out_proj``: a Linear(E, E) that mixes the heads' outputs;
* ``bias_k``, ``bias_v`` (1, 1, E) with ``add_bias_kv=True``: one learned key and value more.

The computation is ``F.multi_head_attention_forward`` (nn/_functional/attention.py).
"""
from ... import factories
from .. import init
from .._functional import attention as _attention
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module


class MultiheadAttention(Module):
    """``attn(query, key, value)`` -> (output, attention weights); inputs (L, N, E), or
    (N, L, E) with ``batch_first=True``, or unbatched (L, E)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"embed_dim must be divisible by num_heads (got embed_dim="
                                 f"{embed_dim}, num_heads={num_heads})")
        made = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(factories.empty((3 * embed_dim, embed_dim), **made))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(factories.empty((embed_dim, embed_dim), **made))
            self.k_proj_weight = Parameter(factories.empty((embed_dim, self.kdim), **made))
            self.v_proj_weight = Parameter(factories.empty((embed_dim, self.vdim), **made))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(factories.empty(3 * embed_dim, **made))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **made)
        if add_bias_kv:
            self.bias_k = Parameter(factories.empty((1, 1, embed_dim), **made))
            self.bias_v = Parameter(factories.empty((1, 1, embed_dim), **made))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        # torch's: Xavier-uniform projections, zero biases (out_proj keeps Linear's own weight)
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        key_padding_mask = _attention.canonical_mask(key_padding_mask, "key_padding_mask",
                                                     attn_mask, "attn_mask", query.dtype)
        attn_mask = _attention.canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                              check_other=False)
        if self.batch_first and batched:   # (N, L, E) -> (L, N, E), keeping self-attention's
            if key is value:               # one-tensor identity (one packed projection)
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = _attention.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
