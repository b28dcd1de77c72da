"""``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention`` against torch 2.13.

sdpa: values and the gradients of query, key, value (and of a float mask) over hypothesis
shapes with broadcast batch dims and non-contiguous views, every mask kind (none, bool, float,
causal; a mask with the causal flag is an error), ``scale``, grouped-query attention; a row
with every key masked out (zeros, finite gradients, as torch's); dropout; errors; the CPU
autocast dtype.

MultiheadAttention: torch's module and ours with the same weights (torch's state dict loaded
into ours) give the same outputs, attention weights and input gradients, in every layout
(batch_first, unbatched, self-attention, kdim/vdim, add_bias_kv, add_zero_attn, no bias) with
every mask; the parameter names and initialisation are torch's; errors; autocast.
"""
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
import learntorch.nn.functional as F
from tests.oracle import arrays, both_raise, check_against_torch, require_torch, torch


# ---------------------------------------------------------------- scaled_dot_product_attention
@st.composite
def attention_inputs(draw):
    """query (..., L, E), key (..., S, E), value (..., S, Ev) whose batch dims broadcast."""
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    def dims_like():  # each batch dim kept, or 1 (broadcast)
        return tuple(b if draw(st.booleans()) else 1 for b in batch)
    length, source = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    e, ev = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    q = draw(arrays(shape=tuple(batch) + (length, e)))
    k = draw(arrays(shape=dims_like() + (source, e)))
    v = draw(arrays(shape=dims_like() + (source, ev)))
    return q, k, v


@given(attention_inputs(), st.sampled_from([None, 0.3]), st.booleans())
def test_sdpa_values_and_gradients_are_torchs(qkv, scale, causal):
    check_against_torch(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale),
        lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=scale),
        *qkv, rtol=1e-9, atol=1e-11)


@given(attention_inputs(), st.data())
def test_sdpa_with_a_float_mask_gives_its_gradient_too(qkv, data):
    q, k, _ = qkv
    mask = data.draw(arrays(shape=(q.shape[-2], k.shape[-2])))
    check_against_torch(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda q, k, v, m: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=m), *qkv, mask, rtol=1e-9, atol=1e-11)


@given(attention_inputs(), st.data())
def test_sdpa_with_a_bool_mask_even_all_masked_rows_is_torchs(qkv, data):
    q, k, _ = qkv
    # True = the key takes part; rows with no True get zeros (torch's safe softmax)
    mask = data.draw(arrays(shape=(q.shape[-2], k.shape[-2]), dtype=np.bool_))
    check_against_torch(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda q, k, v, m: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=m), *qkv, mask, rtol=1e-9, atol=1e-11)


def test_sdpa_row_with_every_key_masked_is_zeros_with_finite_gradients():
    require_torch()
    rs = np.random.RandomState(0)
    q = rs.randn(1, 2, 3, 4)
    mask = np.ones((3, 3), bool)
    mask[1] = False
    results = []
    for lib in (learntorch, torch):
        t = lib.tensor(q, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(t, t, t, attn_mask=lib.tensor(mask))
        out.sum().backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    assert (results[0][0][:, :, 1] == 0).all()
    assert np.isfinite(results[0][1]).all()
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_sdpa_grouped_query_attention_shares_key_heads_as_torch():
    rs = np.random.RandomState(1)
    q, k, v = rs.randn(2, 4, 3, 5), rs.randn(2, 2, 6, 5), rs.randn(2, 2, 6, 3)
    check_against_torch(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                         enable_gqa=True),
        q, k, v, rtol=1e-10, atol=1e-12)


def test_sdpa_dropout_drops_whole_weights_and_is_reproducible():
    rs = np.random.RandomState(2)
    q, k, v = (learntorch.tensor(rs.randn(2, 3, 5, 4)) for _ in range(3))
    plain = F.scaled_dot_product_attention(q, k, v)
    learntorch.manual_seed(5)
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    learntorch.manual_seed(5)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert np.array_equal(first.numpy(), again.numpy())
    assert not np.allclose(first.numpy(), plain.numpy())
    assert (F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0).all()


@pytest.mark.parametrize("call, message", [
    (lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(1, 3, 4, dtype=m.float64), m.ones(1, 3, 4), m.ones(1, 3, 4)),
     "Expected query, key, and value to have the same dtype"),
    (lambda m: m.nn.functional.scaled_dot_product_attention(m.ones(4), m.ones(4), m.ones(4)),
     "at least 2 dimensional"),
    (lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(2, 3, 4), m.ones(2, 5, 4), m.ones(2, 5, 4),
        attn_mask=m.ones(3, 5, dtype=m.int64)), "Expected attn_mask dtype to be bool or float"),
    (lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(1, 3, 3, 4), m.ones(1, 2, 3, 4), m.ones(1, 2, 3, 4), enable_gqa=True),
     "Number of heads in key and value must divide the number of heads in"),
    (lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(1, 3, 4, requires_grad=True), m.ones(1, 3, 4), m.ones(1, 3, 4),
        attn_mask=m.ones(3, 3, dtype=m.bool), is_causal=True),
     "Explicit attn_mask should not be set when is_causal=True"),
])
def test_sdpa_errors_are_torchs(call, message):
    assert message in both_raise(call)


def test_sdpa_under_cpu_autocast_is_bfloat16_as_torch():
    require_torch()
    rs = np.random.RandomState(3)
    arrays_in = [rs.randn(2, 3, 4).astype(np.float32) for _ in range(3)]
    mask = rs.randn(3, 3).astype(np.float32)
    seen = []
    for lib in (learntorch, torch):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays_in)
        with lib.autocast("cpu"):
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                 attn_mask=lib.tensor(mask))
        out.float().sum().backward()
        seen.append((str(out.dtype), str(q.grad.dtype), out.float().detach().numpy()))
    assert seen[0][:2] == tuple(s.replace("torch.", "learntorch.") for s in seen[1][:2])
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=3e-2, atol=3e-2)


# ---------------------------------------------------------------- MultiheadAttention
CONFIGS = {
    "plain": {},
    "batch_first": {"batch_first": True},
    "add_bias_kv": {"add_bias_kv": True},
    "add_zero_attn": {"add_zero_attn": True},
    "kdim_vdim": {"kdim": 6, "vdim": 5},
    "no_bias": {"bias": False},
}
MASKS = ["none", "key_padding_bool", "key_padding_float", "attn_bool", "attn_float",
         "attn_3d", "both"]


def _pair(config, seed=0):
    """torch's module and ours, in float64, with torch's (random) weights copied into ours."""
    theirs = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64, **config)
    ours = learntorch.nn.MultiheadAttention(8, 2, dtype=learntorch.float64, **config)
    ours.load_state_dict({k: learntorch.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _masks(kind, batch, length, source, rs):
    masks = {}
    padding = rs.rand(batch, source) > 0.6
    padding[:, 0] = False       # every sample keeps a key: no all-masked row (NaN in torch too)
    attn = rs.rand(length, source) > 0.7
    attn[:, 0] = False
    if kind in ("key_padding_bool", "both"):
        masks["key_padding_mask"] = padding
    if kind == "key_padding_float":
        masks["key_padding_mask"] = np.where(padding, -np.inf, 0.0)
    if kind in ("attn_bool", "both"):
        masks["attn_mask"] = attn
    if kind == "attn_float":
        masks["attn_mask"] = rs.randn(length, source)
    if kind == "attn_3d":
        masks["attn_mask"] = rs.randn(batch * 2, length, source)
    return masks


# (need_weights, average_attn_weights): averaging matters only when weights are returned
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_multihead_attention_matches_torch(name, mask_kind, need_weights, average):
    require_torch()
    config = CONFIGS[name]
    ours, theirs = _pair(config)
    rs = np.random.RandomState(hash((name, mask_kind)) % 2**31)
    batch, length, source = 3, 4, 5
    first = (batch, length) if config.get("batch_first") else (length, batch)
    first_kv = (batch, source) if config.get("batch_first") else (source, batch)
    q = rs.randn(*first, 8)
    k, v = rs.randn(*first_kv, config.get("kdim", 8)), rs.randn(*first_kv, config.get("vdim", 8))
    masks = _masks(mask_kind, batch, length, source, rs)  # (add_bias_kv widens them itself)
    results = []
    for lib, module in ((learntorch, ours), (torch, theirs)):
        tq, tk, tv = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        out, weights = module(tq, tk, tv, need_weights=need_weights,
                              average_attn_weights=average,
                              **{n: lib.tensor(m) for n, m in masks.items()})
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum() \
            .backward()
        grads = [t.grad.numpy() for t in (tq, tk, tv)]
        grads += [p.grad.numpy() for _, p in sorted(module.named_parameters())]
        results.append((out.detach().numpy(),
                        None if weights is None else weights.detach().numpy(), grads))
    (out, weights, grads), (want_out, want_weights, want_grads) = results
    np.testing.assert_allclose(out, want_out, rtol=1e-9, atol=1e-11)
    assert (weights is None) == (want_weights is None)
    if weights is not None:
        np.testing.assert_allclose(weights, want_weights, rtol=1e-9, atol=1e-11)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_self_attention_and_unbatched_inputs_match_torch(batch_first, need_weights):
    require_torch()
    ours, theirs = _pair({"batch_first": batch_first})
    rs = np.random.RandomState(4)
    for shape in ((3, 4, 8), (4, 8)):          # batched, then unbatched (L, E)
        x = rs.randn(*shape)
        results = []
        for lib, module in ((learntorch, ours), (torch, theirs)):
            t = lib.tensor(x, requires_grad=True)
            out, weights = module(t, t, t, need_weights=need_weights)
            out.sum().backward()
            results.append((out.detach().numpy(), t.grad.numpy(),
                            None if weights is None else weights.detach().numpy()))
        for got, want in zip(*results):
            if want is None:
                assert got is None
            else:
                assert got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("need_weights", [True, False])
def test_causal_hint_with_its_mask_matches_torch(need_weights):
    require_torch()
    ours, theirs = _pair({"batch_first": True})
    x = np.random.RandomState(5).randn(2, 4, 8)
    results = []
    for lib, module in ((learntorch, ours), (torch, theirs)):
        causal = lib.nn.Transformer.generate_square_subsequent_mask(4, dtype=lib.float64) \
            if lib is torch else lib.tensor(np.triu(np.full((4, 4), -np.inf), 1))
        t = lib.tensor(x)
        results.append(module(t, t, t, attn_mask=causal, is_causal=True,
                              need_weights=need_weights)[0].detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-11)


def test_parameters_state_dict_and_repr_are_torchs():
    require_torch()
    for config in CONFIGS.values():
        ours = learntorch.nn.MultiheadAttention(8, 2, **config)
        theirs = torch.nn.MultiheadAttention(8, 2, **config)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape), name
        assert repr(ours) == repr(theirs)
    module = learntorch.nn.MultiheadAttention(8, 2, add_bias_kv=True)
    assert (module.in_proj_bias.detach().numpy() == 0).all()
    assert (module.out_proj.bias.detach().numpy() == 0).all()
    bound = np.sqrt(6 / (8 + 24))    # Xavier-uniform over the (24, 8) stacked projection
    w = module.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound


def test_dropout_acts_in_training_only():
    module = learntorch.nn.MultiheadAttention(8, 2, dropout=0.5)
    x = learntorch.tensor(np.random.RandomState(6).randn(4, 3, 8), dtype=learntorch.float32)
    module.eval()
    first, _ = module(x, x, x)
    again, _ = module(x, x, x)
    assert np.array_equal(first.detach().numpy(), again.detach().numpy())
    module.train()
    dropped, _ = module(x, x, x)
    assert not np.allclose(dropped.detach().numpy(), first.detach().numpy())


def test_mismatched_mask_types_warn_as_torch():
    require_torch()
    seen = []
    for lib in (learntorch, torch):
        module = lib.nn.MultiheadAttention(8, 2)
        x = lib.ones(4, 3, 8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module(x, x, x, key_padding_mask=lib.zeros(3, 4, dtype=lib.bool),
                   attn_mask=lib.zeros(4, 4))
        seen.append([str(w.message) for w in caught if "mismatched" in str(w.message)])
    assert seen[0] == seen[1] and seen[0]


@pytest.mark.parametrize("call, message", [
    (lambda m: m.nn.MultiheadAttention(8, 3), "divisible by num_heads"),
    (lambda m: m.nn.MultiheadAttention(8, 2)(m.ones(4, 3, 8), m.ones(4, 3, 8), m.ones(4, 3, 8),
                                             attn_mask=None, is_causal=True),
     "Need attn_mask if specifying the is_causal hint"),
    (lambda m: m.nn.MultiheadAttention(8, 2)(m.ones(4, 3, 8), m.ones(5, 3, 8), m.ones(5, 3, 8),
                                             attn_mask=m.zeros(4, 4)),
     "The shape of the 2D attn_mask is"),
    (lambda m: m.nn.MultiheadAttention(8, 2)(m.ones(4, 3, 8), m.ones(5, 3, 8), m.ones(5, 8)),
     "expected `key` and `value` to be 3-D"),
    (lambda m: m.nn.MultiheadAttention(8, 2)(m.ones(4, 3, 8), m.ones(5, 3, 8), m.ones(5, 3, 8),
                                             key_padding_mask=m.zeros(3, 5, dtype=m.int64)),
     "only bool and floating types of key_padding_mask are supported"),
    (lambda m: m.nn.MultiheadAttention(8, 2)(m.ones(4, 3, 6), m.ones(5, 3, 6), m.ones(5, 3, 6)),
     "was expecting embedding dimension of 8, but got 6"),
])
def test_multihead_attention_errors_are_torchs(call, message):
    assert re.search(re.escape(message), both_raise(call))


def test_multihead_attention_under_cpu_autocast_is_bfloat16_as_torch():
    require_torch()
    ours, theirs = _pair({})
    ours.float(), theirs.float()
    x = np.random.RandomState(7).randn(4, 3, 8).astype(np.float32)
    seen = []
    for lib, module in ((learntorch, ours), (torch, theirs)):
        t = lib.tensor(x)
        with lib.autocast("cpu"):
            out, weights = module(t, t, t)
        seen.append((str(out.dtype).split(".")[-1], str(weights.dtype).split(".")[-1],
                     out.float().detach().numpy()))
    assert seen[0][:2] == seen[1][:2] == ("bfloat16", "bfloat16")
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=5e-2, atol=5e-2)


def test_quantize_dynamic_leaves_the_output_projection_in_float_as_torch():
    module = learntorch.nn.Sequential(learntorch.nn.Linear(8, 8),
                                      learntorch.nn.MultiheadAttention(8, 2))
    quantized = learntorch.ao.quantization.quantize_dynamic(module, {learntorch.nn.Linear})
    kept = learntorch.nn.modules.linear.NonDynamicallyQuantizableLinear
    assert type(quantized[1].out_proj) is kept
    assert type(quantized[0]) is learntorch.ao.nn.quantized.dynamic.Linear


@pytest.mark.parametrize("need_weights", [True, False])
def test_functional_form_with_static_key_and_value_matches_torch(need_weights):
    require_torch()
    ours, theirs = _pair({})
    rs = np.random.RandomState(8)
    q = rs.randn(4, 3, 8)
    static_k, static_v = rs.randn(3 * 2, 5, 4), rs.randn(3 * 2, 5, 4)   # (N * heads, S, E/heads)
    results = []
    for lib, module in ((learntorch, ours), (torch, theirs)):
        tq, tk, tv = (lib.tensor(a, requires_grad=True) for a in (q, static_k, static_v))
        out, weights = lib.nn.functional.multi_head_attention_forward(
            tq, tq, tq, 8, 2, module.in_proj_weight, module.in_proj_bias, None, None, False,
            0.0, module.out_proj.weight, module.out_proj.bias, need_weights=need_weights,
            static_k=tk, static_v=tv)
        out.sum().backward()
        results.append([out.detach().numpy(), tq.grad.numpy(), tk.grad.numpy(), tv.grad.numpy()]
                       + ([weights.detach().numpy()] if need_weights else []))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
