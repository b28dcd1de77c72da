"""quantize_dynamic against torch 2.13's: the same float weights give the same int8 weights
and scales, and the same outputs on random inputs -- bit for bit, since every step (range,
scale, codes, integer sums, final rounding) follows fbgemm's arithmetic."""
import numpy as np
import pytest

import learntorch
from oracle import require_torch


def models(widths, seed=0):
    """A learntorch MLP and a torch MLP holding the same float weights."""
    torch = require_torch()

    def build(lib):
        layers = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers += [lib.nn.Linear(a, b)] + ([lib.nn.ReLU()] if i < len(widths) - 2 else [])
        return lib.nn.Sequential(lib.nn.Flatten(), *layers)
    ours, theirs = build(learntorch), build(torch)
    rng = np.random.default_rng(seed)
    for mine, other in zip(ours.state_dict().values(), theirs.state_dict().values()):
        values = (rng.standard_normal(tuple(mine.shape)) * 0.2).astype(np.float32)
        mine.copy_(learntorch.from_numpy(values))
        other.copy_(torch.from_numpy(values.copy()))
    return ours, theirs


def quantized_pair(widths, seed=0, per_channel=False):
    torch = require_torch()
    ours, theirs = models(widths, seed)
    if per_channel:
        ours = learntorch.ao.quantization.quantize_dynamic(
            ours, {learntorch.nn.Linear: learntorch.ao.quantization.per_channel_dynamic_qconfig})
        theirs = torch.ao.quantization.quantize_dynamic(
            theirs, {torch.nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig})
    else:
        ours = learntorch.ao.quantization.quantize_dynamic(ours, {learntorch.nn.Linear},
                                                           dtype=learntorch.qint8)
        theirs = torch.ao.quantization.quantize_dynamic(theirs, {torch.nn.Linear},
                                                        dtype=torch.qint8)
    return ours, theirs


def linears(model):
    return [m for m in model.modules() if hasattr(m, "weight") and callable(m.weight)]


@pytest.mark.parametrize("per_channel", [False, True])
def test_int8_weights_and_scales_equal_torchs_exactly(per_channel):
    ours, theirs = quantized_pair((64, 128, 10), per_channel=per_channel)
    for mine, other in zip(linears(ours), linears(theirs)):
        w, t = mine.weight(), other.weight()
        np.testing.assert_array_equal(w.int_repr().numpy(), t.int_repr().numpy())
        assert w.qscheme().name == str(t.qscheme()).removeprefix("torch.")
        if per_channel:
            np.testing.assert_array_equal(w.q_per_channel_scales().numpy(),
                                          t.q_per_channel_scales().numpy())
            np.testing.assert_array_equal(w.q_per_channel_zero_points().numpy(),
                                          t.q_per_channel_zero_points().numpy())
            assert w.q_per_channel_axis() == t.q_per_channel_axis()
        else:
            assert w.q_scale() == t.q_scale() and w.q_zero_point() == t.q_zero_point()
        np.testing.assert_array_equal(mine.bias().detach().numpy(), other.bias().detach().numpy())


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("shape, spread, shift", [
    ((256, 1, 8, 8), 1.0, 0.0),      # the digits MLP's batch
    ((7, 64), 30.0, 5.0),            # wide range, all positive-shifted
    ((3, 64), 1e-3, 0.0),            # a tiny range: the smallest-scale rule
    ((5, 64), 2.0, -4.0),            # mostly negative
    ((1, 64), 0.0, 0.0),             # all zeros: scale 0.1
])
def test_outputs_equal_torchs_bit_for_bit(quantized_backend, per_channel, shape, spread, shift):
    torch = require_torch()
    ours, theirs = quantized_pair((64, 128, 10), seed=1, per_channel=per_channel)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = (rng.standard_normal(shape) * spread + shift).astype(np.float32)
        mine = ours(learntorch.from_numpy(x)).numpy()
        other = theirs(torch.from_numpy(x.copy())).numpy()
        np.testing.assert_array_equal(mine, other)


def test_outputs_of_a_deeper_mlp_and_3d_inputs_equal_torchs(quantized_backend):
    torch = require_torch()
    ours, theirs = quantized_pair((20, 256, 256, 10), seed=3)
    ours[0], theirs[0] = learntorch.nn.Identity(), torch.nn.Identity()  # keep (B, T, 20)
    x = (np.random.default_rng(4).standard_normal((4, 6, 20)) * 3).astype(np.float32)
    mine, other = ours(learntorch.from_numpy(x)), theirs(torch.from_numpy(x.copy()))
    assert tuple(mine.shape) == tuple(other.shape) == (4, 6, 10)
    np.testing.assert_array_equal(mine.numpy(), other.numpy())


def test_empty_batches_give_empty_outputs_as_torch():
    torch = require_torch()
    ours, theirs = quantized_pair((64, 16, 10))
    x = np.zeros((0, 64), np.float32)
    assert tuple(ours(learntorch.from_numpy(x)).shape) == tuple(
        theirs(torch.from_numpy(x)).shape) == (0, 10)


def test_the_quantized_model_prints_and_saves_its_state_like_torchs():
    ours, theirs = quantized_pair((64, 128, 10))
    assert repr(ours).replace("learntorch.", "torch.") == repr(theirs)
    mine, other = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(other)
    for key in mine:
        if key.endswith("_packed_params._packed_params"):
            (w, b), (tw, tb) = mine[key], other[key]
            np.testing.assert_array_equal(w.int_repr().numpy(), tw.int_repr().numpy())
            np.testing.assert_array_equal(b.detach().numpy(), tb.detach().numpy())
        elif key.endswith("dtype"):
            assert repr(mine[key]).replace("learntorch.", "torch.") == repr(other[key])
        else:
            assert mine[key].item() == other[key].item()
            assert str(mine[key].dtype).split(".")[1] == str(other[key].dtype).split(".")[1]
    assert list(ours.parameters()) == [] and list(theirs.parameters()) == []


def test_the_module_has_torchs_class_path_and_name():
    torch = require_torch()
    ours, theirs = quantized_pair((64, 10))
    mine, other = ours[1], theirs[1]
    assert type(mine).__module__.replace("learntorch.", "torch.") == type(other).__module__
    assert type(mine).__name__ == type(other).__name__ == "Linear"
    assert mine._get_name() == other._get_name() == "DynamicQuantizedLinear"
    assert learntorch.ao.nn.quantized.dynamic.Linear is type(mine)
    assert torch.ao.nn.quantized.dynamic.Linear is type(other)
