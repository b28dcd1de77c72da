"""learntorch.save / load keep quantized tensors: one byte per qint8 code plus the scale and
zero point (per channel: scales, zero points, axis), so a quantized model's file is small."""
import io

import pytest

import learntorch as lt
from learntorch import nn
from learntorch.ao.quantization import quantize_dynamic
from learntorch.serialization import LoadError


def _round_trip(obj):
    buffer = io.BytesIO()
    lt.save(obj, buffer)
    buffer.seek(0)
    return lt.load(buffer), len(buffer.getvalue())


@pytest.mark.parametrize("dtype", [lt.qint8, lt.quint8, lt.qint32])
def test_a_per_tensor_quantized_tensor_comes_back_with_its_codes_scale_and_zero_point(dtype):
    lt.manual_seed(0)
    q = lt.quantize_per_tensor(lt.randn(4, 5), 0.05, 3, dtype)
    back, _ = _round_trip({"q": q})
    back = back["q"]
    assert back.dtype is dtype and back.is_quantized
    assert (back.q_scale(), back.q_zero_point()) == (0.05, 3)
    assert lt.equal(back.int_repr(), q.int_repr())


def test_a_per_channel_quantized_tensor_comes_back_with_its_scales_zero_points_and_axis():
    lt.manual_seed(0)
    scales = lt.tensor([0.1, 0.02, 0.3], dtype=lt.float64)
    q = lt.quantize_per_channel(lt.randn(2, 3), scales, lt.tensor([0, -1, 2]), 1, lt.qint8)
    back, _ = _round_trip([q])
    back = back[0]
    assert back.q_per_channel_axis() == 1
    assert lt.equal(back.q_per_channel_scales(), q.q_per_channel_scales())
    assert lt.equal(back.q_per_channel_zero_points(), q.q_per_channel_zero_points())
    assert lt.equal(back.dequantize(), q.dequantize())


def test_a_dynamic_quantized_mlp_saves_to_a_file_several_times_smaller_than_float32():
    lt.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    quantized = quantize_dynamic(model, {nn.Linear}, dtype=lt.qint8)
    _, float_bytes = _round_trip(model.state_dict())
    state, int8_bytes = _round_trip(quantized.state_dict())
    # the weights shrink 4x; the float biases and each entry's few hundred bytes of headers
    # do not (torch.save gives 79,069 / 23,565 = 3.36x for the same model)
    assert float_bytes / int8_bytes > 3.3
    weight, bias = state["0._packed_params._packed_params"]
    assert lt.equal(weight.int_repr(), quantized[0].weight().int_repr())
    assert lt.equal(bias, model[0].bias.detach())
    assert state["0._packed_params.dtype"] is lt.qint8


def test_a_quantized_entry_whose_codes_do_not_fit_its_dtype_is_refused():
    buffer = io.BytesIO()
    lt.save({"q": lt.quantize_per_tensor(lt.randn(3), 0.1, 0, lt.qint8)}, buffer)
    import json
    import zipfile
    entries = {}
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z:
        for name in z.namelist():
            entries[name] = z.read(name)
    structure = json.loads(entries["learntorch/structure.json"])
    structure["dict"][0][1]["quantized"]["dtype"] = "qint32"  # int8 codes claimed as qint32
    entries["learntorch/structure.json"] = json.dumps(structure).encode()
    forged = io.BytesIO()
    with zipfile.ZipFile(forged, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    forged.seek(0)
    with pytest.raises(LoadError, match="codes of a qint32 tensor"):
        lt.load(forged)
