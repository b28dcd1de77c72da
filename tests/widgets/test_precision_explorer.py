"""PrecisionExplorer: its counts are what casting the scaled gradients gives (torch's cast as the
oracle), its bits are torch's, the picture shows the counted gradients and the dtype's zones,
and its controls drive the state and the picture."""
import re

import ipywidgets as w
import numpy as np
import pytest
import torch

import learntorch as lt
from widgets import PrecisionExplorer


def _model_gradients(seed=0):
    """A small MLP's gradients on a loss made small (x 1e-4), as late in training: many of them
    lie below float16's normal range."""
    lt.manual_seed(seed)
    model = lt.nn.Sequential(lt.nn.Linear(16, 32), lt.nn.ReLU(), lt.nn.Linear(32, 4))
    x, y = lt.randn(64, 16), lt.randint(0, 4, (64,))
    (lt.nn.functional.cross_entropy(model(x), y) * 1e-4).backward()
    return model


def _torch_counts(values, scale, dtype):
    held = (torch.from_numpy(values) * scale).to(getattr(torch, dtype)).double().abs()
    nonzero = torch.from_numpy(values) != 0
    tiny = torch.finfo(getattr(torch, dtype)).tiny
    finite = held.isfinite()
    return {"total": values.size, "already_zero": int((~nonzero).sum()),
            "flushed_to_zero": int((nonzero & (held == 0)).sum()),
            "subnormal": int((nonzero & finite & (held > 0) & (held < tiny)).sum()),
            "normal": int((nonzero & finite & (held >= tiny)).sum()),
            "overflow": int((nonzero & ~finite).sum())}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("scale", [1.0, 2.0 ** 10, 2.0 ** 16, 2.0 ** 24])
def test_counts_are_what_torch_gets_casting_the_scaled_gradients(dtype, scale):
    model = _model_gradients()
    explorer = PrecisionExplorer(model, dtype=dtype, loss_scale=scale)
    values = np.concatenate([p.grad.numpy().reshape(-1) for p in model.parameters()])
    assert explorer.counts() == _torch_counts(values, scale, dtype)
    assert sum(v for k, v in explorer.counts().items() if k != "total") == values.size


def test_loss_scaling_rescues_float16_gradients_and_too_much_overflows():
    explorer = PrecisionExplorer(_model_gradients(), dtype="float16")
    unscaled = explorer.counts()
    assert unscaled["flushed_to_zero"] > 0 and unscaled["subnormal"] > 0
    explorer.set(loss_scale=2.0 ** 16)
    rescued = explorer.counts()
    assert rescued["flushed_to_zero"] < unscaled["flushed_to_zero"]
    assert rescued["normal"] > unscaled["normal"] and explorer.survival() > 0.99
    explorer.set(dtype="bfloat16", loss_scale=1.0)   # float32's range: nothing underflows
    assert explorer.counts()["flushed_to_zero"] == 0 and explorer.counts()["subnormal"] == 0
    explorer.set(dtype="float16", loss_scale=2.0 ** 24)
    big = PrecisionExplorer(lt.tensor([1e-2, 1e-7]), dtype="float16", loss_scale=2.0 ** 24)
    assert big.counts()["overflow"] == 1          # 1e-2 * 2**24 = 167772 > 65504


@pytest.mark.parametrize("number", [0.1, -2.5, 1e-7, 65504.0, 1e5, 3.0e38, 0.0, -0.0])
def test_bits_and_stored_values_are_torchs(number):
    explorer = PrecisionExplorer(lt.tensor([1.0]), number=number)
    for dtype, int_dtype in (("float16", torch.int16), ("bfloat16", torch.int16),
                             ("float32", torch.int32), ("float64", torch.int64)):
        t = torch.tensor([number], dtype=torch.float64).to(getattr(torch, dtype))
        width = t.element_size() * 8
        want = format(int(t.view(int_dtype).item()) & ((1 << width) - 1), f"0{width}b")
        assert "".join(explorer.bits(dtype)) == want, dtype
        assert explorer.stored(dtype) == t.double().item() or (
            np.isinf(explorer.stored(dtype)) and torch.isinf(t).item())


def test_the_fields_have_each_dtypes_widths():
    explorer = PrecisionExplorer(lt.tensor([1.0]), number=1.0)
    widths = {d: tuple(map(len, explorer.bits(d)))
              for d in ("float16", "bfloat16", "float32", "float64")}
    assert widths == {"float16": (1, 5, 10), "bfloat16": (1, 8, 7), "float32": (1, 8, 23),
                      "float64": (1, 11, 52)}
    assert explorer.bits("float16") == ("0", "01111", "0000000000")   # 1.0: exponent = bias


def test_the_picture_counts_every_nonzero_gradient_and_shades_the_zones():
    explorer = PrecisionExplorer(_model_gradients(), dtype="float16")
    svg = explorer.static_svg()
    bars = re.findall(r'data-zone="(\w+)" data-count="(\d+)"', svg)
    c = explorer.counts()
    assert sum(int(n) for _, n in bars) == c["total"] - c["already_zero"]
    shaded = set(re.findall(r'<rect data-zone="(\w+)"', svg))
    assert {"flushed_to_zero", "subnormal"} <= shaded
    assert any(zone == "flushed_to_zero" for zone, _ in bars)
    explorer.set(loss_scale=2.0 ** 16)
    bars = re.findall(r'data-zone="(\w+)" data-count="(\d+)"', explorer.static_svg())
    assert not any(zone == "flushed_to_zero" for zone, _ in bars)
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        drawn = re.search(rf'data-dtype="{dtype}" data-bits="([01]+)"', svg).group(1)
        assert drawn == "".join(explorer.bits(dtype))
        assert svg.count(f'data-dtype="{dtype}"') == 1


def test_the_controls_drive_the_state_and_redraw():
    explorer = PrecisionExplorer(_model_gradients())
    dtype, scale, number, picture, text = explorer.view().children
    assert isinstance(scale, w.FloatLogSlider) and scale.description == "loss scale"
    assert (scale.base, scale.min, scale.max) == (2, 0, 24)
    before = picture.value
    scale.value = 2.0 ** 12
    assert explorer.loss_scale == 4096 and picture.value != before
    assert f"{explorer.counts()['flushed_to_zero']} flushed to 0" in text.value
    dtype.value = "bfloat16"
    assert explorer.dtype == "bfloat16" and "smallest normal 1.18e-38" in text.value
    number.value = 0.3
    assert explorer.number == 0.3 and 'data-bits="0011111010011010"' in picture.value
    explorer.set(dtype="float16")            # the state moves the controls too
    assert dtype.value == "float16"


def test_refuses_what_it_cannot_show():
    with pytest.raises(ValueError, match="dtype must be one of float16, bfloat16, float32"):
        PrecisionExplorer(lt.tensor([1.0]), dtype="int8")
    with pytest.raises(ValueError, match="loss_scale must be a positive number"):
        PrecisionExplorer(lt.tensor([1.0]), loss_scale=0)
    with pytest.raises(ValueError, match="no gradients yet"):
        PrecisionExplorer(lt.nn.Linear(2, 2))
    assert PrecisionExplorer(lt.tensor([1.0]), dtype=lt.bfloat16).dtype == "bfloat16"


def test_repr_is_deterministic():
    text = repr(PrecisionExplorer(lt.tensor([1e-9, 1e-5, 1.0, 0.0]), dtype="float16"))
    assert text == ("PrecisionExplorer(float16, 4 gradients (1 exactly 0), loss scale 1: 1 normal, "
                    "1 subnormal, 1 flushed to 0, 0 overflow; 0.1 stored as 0.0999755859375)")
