"""A quantized model's state dict loads into a quantized model, as in torch 2.13: the keys
are torch's (``<layer>.scale``, ``.zero_point``, ``._packed_params.dtype``,
``._packed_params._packed_params``), each module loads its own entries
(``Module._load_from_state_dict``), and a round trip through ``learntorch.save`` /
``learntorch.load`` gives back a model whose outputs are the original's, bit for bit."""
import io

import numpy as np
import pytest

import learntorch as lt
from learntorch import nn
from learntorch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
from oracle import require_torch
from test_quantize_dynamic_matches_torch import linears, quantized_pair

WIDTHS = (16, 32, 5)


def fresh(per_channel=False, seed=1):
    lt.manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5))
    spec = {nn.Linear: per_channel_dynamic_qconfig} if per_channel else {nn.Linear}
    return quantize_dynamic(model, spec, dtype=lt.qint8)


def through_a_file(obj):
    buffer = io.BytesIO()
    lt.save(obj, buffer)
    buffer.seek(0)
    return lt.load(buffer)


@pytest.mark.parametrize("per_channel", [False, True])
def test_state_dict_keys_are_torchs(per_channel):
    ours, theirs = quantized_pair(WIDTHS, per_channel=per_channel)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("per_channel", [False, True])
def test_round_trip_through_save_and_load_gives_the_same_outputs(per_channel):
    source, target = fresh(per_channel, seed=0), fresh(per_channel, seed=1)
    x = lt.randn(7, 16)
    assert not lt.equal(source(x), target(x))
    result = target.load_state_dict(through_a_file(source.state_dict()))
    assert repr(result) == "<All keys matched successfully>"
    assert lt.equal(source(x), target(x))
    for mine, other in zip(linears(source), linears(target)):
        assert lt.equal(mine.weight().int_repr(), other.weight().int_repr())
        assert lt.equal(mine.weight().dequantize(), other.weight().dequantize())
        assert lt.equal(mine.bias(), other.bias())
        assert (mine.scale, mine.zero_point) == (other.scale, other.zero_point)


def test_a_torch_quantized_state_dict_loads_and_gives_torchs_outputs():
    """torch's state dict, entry by entry in learntorch's types, into a learntorch model."""
    torch = require_torch()
    ours, theirs = quantized_pair(WIDTHS, seed=3)
    target = fresh(seed=4)
    converted = {}
    for key, value in theirs.state_dict().items():
        if isinstance(value, tuple):
            weight, bias = value
            value = (lt.quantize_per_tensor(lt.from_numpy(weight.dequantize().numpy()),
                                            weight.q_scale(), weight.q_zero_point(), lt.qint8),
                     lt.from_numpy(bias.detach().numpy().copy()))
        elif isinstance(value, torch.dtype):
            value = lt.qint8
        else:
            value = lt.tensor(value.item())
        converted[key] = value
    target.load_state_dict(converted)
    x = np.random.default_rng(0).standard_normal((9, 16)).astype(np.float32)
    got = target(lt.from_numpy(x)).numpy()
    want = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(got, want)


def test_missing_and_unexpected_entries_are_reported_as_torch():
    torch = require_torch()
    results = []
    ours, theirs = quantized_pair(WIDTHS)
    for model in (ours, theirs):
        lib = lt if model is ours else torch
        state = model.state_dict()  # (torch reads its versions from state._metadata)
        state["extra"] = lib.ones(1)
        with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
            model.load_state_dict(state)
        results.append(sorted(model.load_state_dict(state, strict=False).unexpected_keys))
        del state["1.scale"]
        with pytest.raises(KeyError, match="1.scale"):  # torch reads it without a check
            model.load_state_dict(state)
    assert results[0] == results[1] == ["extra"]


def test_a_float_state_dict_into_a_quantized_model_is_refused_naming_keys():
    lt.manual_seed(0)
    float_model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5))
    with pytest.raises(KeyError):  # torch: KeyError '1.scale' as well
        fresh().load_state_dict(float_model.state_dict())
