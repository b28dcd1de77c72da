"""QuantizationExplorer: the grid, the clipping and the error are the engine's and torch's,
and its controls drive the state and the picture."""
import math
import re
import warnings

import ipywidgets as w
import numpy as np
import pytest
import torch

import learntorch as lt
from widgets import QuantizationExplorer


def _weights(seed=0):
    lt.manual_seed(seed)
    return lt.nn.Linear(32, 16).weight


def _torch_round_trip(values, scale, zero_point, dtype):
    with warnings.catch_warnings():  # torch 2.13 deprecates its quantized dtypes
        warnings.simplefilter("ignore")
        q = torch.quantize_per_tensor(torch.from_numpy(values), scale, zero_point, dtype)
        return q.dequantize().numpy(), q.int_repr().numpy()


@pytest.mark.parametrize("dtype, scale, zero_point", [("qint8", 0.002, 0), ("qint8", 0.0005, 7),
                                                      ("quint8", 0.001, 128), ("quint8", 0.0004, 0)])
def test_its_codes_and_errors_are_torchs_quantize_per_tensor(dtype, scale, zero_point):
    explorer = QuantizationExplorer(_weights(), scale=scale, zero_point=zero_point, dtype=dtype)
    dequantized, codes = _torch_round_trip(explorer.values, scale, zero_point,
                                           getattr(torch, dtype))
    assert np.array_equal(explorer.quantized().int_repr().numpy(), codes)
    assert np.array_equal(explorer.errors(), dequantized - explorer.values)
    low, high = (-128, 127) if dtype == "qint8" else (0, 255)
    # clipped = the values whose code was clamped to an end of the range
    unclamped = np.round(explorer.values.astype(np.float64) / scale) + zero_point
    assert explorer.clipped_count() == int(np.count_nonzero((unclamped < low) | (unclamped > high)))
    assert explorer.grid_range() == pytest.approx((scale * (low - zero_point),
                                                   scale * (high - zero_point)))


@pytest.mark.parametrize("dtype, scheme", [("qint8", torch.per_tensor_symmetric),
                                           ("quint8", torch.per_tensor_affine)])
def test_fit_chooses_the_scale_and_zero_point_of_torchs_min_max_observer(dtype, scheme):
    explorer = QuantizationExplorer(_weights(1), scale=1.0, dtype=dtype)
    explorer.fit()
    observer = torch.ao.quantization.MinMaxObserver(dtype=getattr(torch, dtype), qscheme=scheme)
    observer(torch.from_numpy(explorer.values))
    scale, zero_point = observer.calculate_qparams()
    assert explorer.scale == pytest.approx(scale.item(), rel=1e-6)
    assert explorer.zero_point == zero_point.item()
    assert explorer.clipped_count() == 0
    assert explorer.max_error() <= explorer.scale / 2 * (1 + 1e-5)


def test_an_outlier_forces_a_coarse_grid_or_gets_clipped():
    values = lt.cat([_weights().reshape(-1), lt.tensor([5.0])])
    explorer = QuantizationExplorer(values)  # fitted: the grid reaches the outlier
    fitted_error = np.abs(explorer.errors()[:-1]).mean()
    assert explorer.clipped_count() == 0 and explorer.scale == pytest.approx(5.0 / 127.5)
    explorer.set(scale=explorer.scale / 20)  # a fine grid: the outlier is clipped
    assert explorer.clipped_count() == 1
    assert explorer.max_error() == pytest.approx(5.0 - explorer.grid_range()[1], rel=1e-5)
    assert np.abs(explorer.errors()[:-1]).mean() < fitted_error / 10  # the rest: finer


def test_refuses_a_zero_point_outside_the_codes_and_a_scale_that_is_not_positive():
    explorer = QuantizationExplorer(_weights(), scale=0.01)
    with pytest.raises(ValueError, match=r"zero_point 200 is outside the qint8 codes \[-128, 127\]"):
        explorer.set(zero_point=200)
    with pytest.raises(ValueError, match="scale must be a positive number"):
        explorer.set(scale=0.0)
    with pytest.raises(ValueError, match="dtype must be 'qint8' or 'quint8'"):
        QuantizationExplorer(_weights(), dtype="qint32")
    explorer.set(zero_point=-50)
    explorer.set(dtype="quint8")  # the zero point follows into quint8's codes
    assert explorer.zero_point == 0 and explorer.dtype == "quint8"


def test_the_picture_draws_the_histogram_the_grid_and_the_clipped_region():
    explorer = QuantizationExplorer(_weights(), scale=0.01)
    svg = explorer.static_svg()
    counts = [int(c) for c in re.findall(r'data-count="(\d+)"/>', svg)]
    assert sum(counts) == explorer.values.size          # every value in one histogram bar
    every, lines = map(int, re.search(r'data-every="(\d+)" data-count="(\d+)"', svg).groups())
    drawn, k = explorer.grid_lines(460 - 52 - 12)
    assert (every, lines) == (k, len(drawn))
    assert np.allclose(np.diff(drawn), k * explorer.scale)
    clipped = re.search(r'data-series="clipped-region"[^>]*>(.*?)</g>', svg).group(1)
    assert clipped == ""                                 # the grid reaches every weight
    explorer.set(scale=0.0005)
    clipped = re.search(r'data-series="clipped-region"[^>]*>(.*?)</g>', explorer.static_svg()).group(1)
    assert clipped.count("<rect") == 2                   # both ends are beyond the grid


def test_the_controls_drive_the_state_and_redraw():
    explorer = QuantizationExplorer(_weights())
    buttons, scale, zero_point, picture, text = explorer.view().children
    dtype, fit = buttons.children
    assert isinstance(scale, w.FloatLogSlider) and scale.description == "scale"
    assert isinstance(zero_point, w.IntSlider) and (zero_point.min, zero_point.max) == (-128, 127)
    before = picture.value
    scale.value = 0.0004
    assert explorer.scale == pytest.approx(0.0004) and picture.value != before
    assert f"clipped: {explorer.clipped_count()} of 512 values" in text.value
    zero_point.value = 20
    assert explorer.zero_point == 20
    dtype.value = "quint8"
    assert explorer.dtype == "quint8" and (zero_point.min, zero_point.max) == (0, 255)
    fit.click()
    assert explorer.clipped_count() == 0 and scale.value == pytest.approx(explorer.scale)
    assert zero_point.value == explorer.zero_point


def test_repr_is_deterministic_and_names_the_grid():
    text = repr(QuantizationExplorer(lt.tensor([-1.0, 0.0, 0.5]), scale=0.1, zero_point=3))
    assert text == ("QuantizationExplorer(qint8, 3 values in [-1, 0.5], scale 0.1, zero_point 3, "
                    "grid [-13.1, 12.4], clipped 0, max |error| 0, mean |error| 0)")


def test_the_slider_rounding_a_fitted_scale_to_its_step_does_not_move_the_grid():
    explorer = QuantizationExplorer(_weights())
    fitted = explorer.scale
    scale = explorer.view().children[1]
    # what the front end sends back: the fitted scale rounded to the slider's step in log10
    scale.value = 10 ** (round(math.log10(fitted) / scale.step) * scale.step)
    assert explorer.scale == fitted and explorer.clipped_count() == 0
    scale.value = 10 ** (math.log10(fitted) + 3 * scale.step)  # a real move: three steps
    assert explorer.scale == pytest.approx(scale.value)
