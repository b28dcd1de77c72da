"""What a quantized tensor answers, what it refuses, and how it prints -- as torch's."""
import copy
import pickle

import numpy as np
import pytest

import learntorch
from oracle import require_torch

VALUES = [-1.0, 0.05, 0.15, 0.25, 2.0, -3.0]


def pair(values=VALUES, scale=0.1, zero_point=0, dtype="qint8", shape=None):
    torch = require_torch()
    x = np.array(values, np.float32)
    if shape is not None:
        x = x.reshape(shape)
    return (learntorch.quantize_per_tensor(learntorch.from_numpy(x), scale, zero_point,
                                           getattr(learntorch, dtype)),
            torch.quantize_per_tensor(torch.from_numpy(x.copy()), scale, zero_point,
                                      getattr(torch, dtype)))


def torch_text(text):
    return text.replace("learntorch.", "torch.")


@pytest.mark.parametrize("values, shape, scale, zero_point, dtype", [
    (VALUES, None, 0.1, 0, "qint8"),
    (VALUES, (2, 3), 0.1, 10, "quint8"),
    (list(np.linspace(-50, 50, 2000)), (40, 50), 0.5, 3, "qint8"),   # summarised
    ([1.0], (), 0.25, 0, "qint32"),                                  # 0-d
])
def test_repr_is_torchs(values, shape, scale, zero_point, dtype):
    ours, theirs = pair(values, scale, zero_point, dtype, shape)
    assert torch_text(repr(ours)) == repr(theirs)


def test_per_channel_repr_names_scales_zero_points_and_axis():
    q = learntorch.quantize_per_channel(learntorch.tensor([[0.5, -1.0], [2.0, 4.0]]),
                                        learntorch.tensor([0.5, 0.25]),
                                        learntorch.tensor([0, 1]), 0, learntorch.qint8)
    text = repr(q)
    assert "quantization_scheme=learntorch.per_channel_affine" in text
    assert "scale=tensor([0.5000, 0.2500], dtype=learntorch.float64)" in text
    assert "zero_point=tensor([0, 1])" in text and text.endswith("axis=0)")


def test_metadata_matches_torchs():
    ours, theirs = pair(shape=(2, 3))
    assert ours.is_quantized and theirs.is_quantized
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.element_size() == theirs.element_size() == 1
    assert ours.numel() == theirs.numel() and ours.dim() == theirs.dim()
    assert ours.type() == theirs.type() == "torch.quantized.QInt8Tensor"
    assert isinstance(ours, learntorch.Tensor) and not ours.requires_grad
    assert str(ours.qscheme()) == torch_text(str(ours.qscheme())).replace(
        "torch.", "learntorch.") and repr(ours.qscheme()) == "learntorch.per_tensor_affine"
    assert ours[1, 2].item() == theirs[1, 2].item()


@pytest.mark.parametrize("view", [
    lambda q: q.reshape(3, 2), lambda q: q.view(6), lambda q: q.t(), lambda q: q.T,
    lambda q: q.transpose(0, 1), lambda q: q.permute(1, 0), lambda q: q.unsqueeze(0),
    lambda q: q.flatten(), lambda q: q[1:, ::2], lambda q: q[0], lambda q: q.clone(),
    lambda q: q.detach(), lambda q: q.contiguous(), lambda q: q.expand(4, 2, 3),
])
def test_views_move_codes_and_keep_the_scale_as_torch(view):
    ours, theirs = pair(shape=(2, 3), zero_point=4)
    mine, other = view(ours), view(theirs)
    assert mine.is_quantized and mine.q_scale() == other.q_scale()
    assert mine.q_zero_point() == other.q_zero_point()
    np.testing.assert_array_equal(mine.int_repr().numpy(), other.int_repr().numpy())


@pytest.mark.parametrize("operation", [
    lambda q, x: q + q, lambda q, x: q * 2, lambda q, x: 2 * q, lambda q, x: x - q,
    lambda q, x: q.sum(), lambda q, x: q.abs(), lambda q, x: -q, lambda q, x: q.exp(),
    lambda q, x: q @ q, lambda q, x: q.float(), lambda q, x: q.add_(1),
])
def test_arithmetic_on_codes_is_refused_with_torchs_error(operation):
    ours, theirs = pair()
    with pytest.raises(NotImplementedError, match="with arguments from the 'QuantizedCPU' "
                                                   "backend.*dequantize"):
        operation(ours, learntorch.ones(6))


def test_a_module_level_function_refuses_to_mix_codes_with_floats():
    ours, _ = pair()
    with pytest.raises(NotImplementedError, match="cannot be mixed.*dequantize"):
        learntorch.add(learntorch.ones(6), ours)
    with pytest.raises(RuntimeError, match="same dtype"):
        learntorch.matmul(learntorch.ones(2, 6), ours.t())  # matmul does not promote: refused


def test_per_tensor_accessors_on_per_channel_tensors_raise_torchs_error():
    q = learntorch.quantize_per_channel(learntorch.ones(2, 2), learntorch.tensor([0.5, 0.25]),
                                        learntorch.tensor([0, 1]), 0, learntorch.qint8)
    with pytest.raises(RuntimeError, match="kPerTensorAffine.*q_per_channel_scales"):
        q.q_scale()
    p, _ = pair()
    with pytest.raises(RuntimeError, match="kPerChannelAffine"):
        p.q_per_channel_scales()
    with pytest.raises(NotImplementedError, match="per-channel quantized tensor"):
        q.reshape(4)


def test_a_float_tensor_is_not_quantized_as_in_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        x = lib.ones(3)
        assert x.is_quantized is False and x.dequantize() is x
        with pytest.raises(NotImplementedError, match="Could not run 'aten::int_repr' with "
                                                      "arguments from the 'CPU' backend"):
            x.int_repr()
        with pytest.raises(NotImplementedError, match="aten::q_scale"):
            x.q_scale()


def test_numpy_conversion_is_refused_as_torch():
    ours, theirs = pair()
    with pytest.raises(TypeError, match="Got unsupported ScalarType QInt8"):
        theirs.numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType QInt8"):
        ours.numpy()


def test_requires_grad_is_refused():
    ours, _ = pair()
    with pytest.raises(RuntimeError, match="floating point"):
        ours.requires_grad_()


@pytest.mark.parametrize("per_channel", [False, True])
def test_deepcopy_and_pickle_keep_codes_and_parameters(per_channel):
    if per_channel:
        q = learntorch.quantize_per_channel(learntorch.randn(3, 4), learntorch.rand(3) + 0.1,
                                            learntorch.tensor([0, 1, -1]), 0, learntorch.qint8)
    else:
        q, _ = pair()
    for copied in (copy.deepcopy(q), pickle.loads(pickle.dumps(q))):
        assert copied is not q and copied.dtype is q.dtype and copied.qscheme() is q.qscheme()
        np.testing.assert_array_equal(copied.int_repr().numpy(), q.int_repr().numpy())
        np.testing.assert_array_equal(copied.dequantize().numpy(), q.dequantize().numpy())
