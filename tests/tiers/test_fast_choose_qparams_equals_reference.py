"""The fast tier's ``choose_qparams`` (``_fast/choose_qparams.py``: Python floats where that
is exact) gives the reference's scale and zero point exactly, on float32 ranges of every
size (tiny ones that the reference widens, empty ones, one-sided ones), float64 ends, and
NaN or infinite ends; and it is what a dynamic quantized Linear calls in the fast tier."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st

import learntorch
from learntorch import tiers
from learntorch._fast import choose_qparams as fast
from learntorch.ao.nn.quantized.dynamic import _linear_dynamic

reference = fast._reference
FLOAT32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
# ranges near and below the small-scale threshold (the reference widens them)
SMALL = st.floats(-0.0009765625, 0.0009765625, width=32)
ANY = st.one_of(FLOAT32, SMALL, st.floats(allow_nan=False), st.sampled_from([0.0, -0.0]))


def _same(fast_result, reference_result):
    (s1, z1), (s2, z2) = fast_result, reference_result
    assert type(z1) is type(z2) and z1 == z2
    assert s1 == s2 or (math.isnan(s1) and math.isnan(s2))
    assert float(s1).hex() == float(s2).hex() or math.isnan(s1)


def test_the_reference_here_is_the_ao_function_and_the_fast_one_is_installed():
    assert reference.__module__ == _linear_dynamic.__name__
    assert fast.choose_qparams is not reference
    if tiers.get_tier() == "fast":
        assert _linear_dynamic.choose_qparams is fast.choose_qparams


@settings(max_examples=400, deadline=None)
@given(low=ANY, high=ANY, reduce_range=st.booleans(), signed=st.booleans())
def test_fast_choose_qparams_equals_the_reference(low, high, reduce_range, signed):
    quant_min, quant_max = (-128, 127) if signed else (0, 255)
    try:
        expected = reference(low, high, quant_min, quant_max, reduce_range)
    except (ValueError, OverflowError) as error:  # NaN ends: round(nan) fails in both
        try:
            fast.choose_qparams(low, high, quant_min, quant_max, reduce_range)
        except type(error):
            return
        raise AssertionError(f"the reference raised {error!r}, the fast version did not")
    _same(fast.choose_qparams(low, high, quant_min, quant_max, reduce_range), expected)


def test_a_quantized_linear_gives_the_same_output_in_both_tiers():
    learntorch.manual_seed(0)
    model = learntorch.nn.Sequential(learntorch.nn.Linear(13, 21), learntorch.nn.ReLU(),
                                     learntorch.nn.Linear(21, 5))
    quantized = learntorch.ao.quantization.quantize_dynamic(model, {learntorch.nn.Linear},
                                                            dtype=learntorch.qint8)
    x = learntorch.randn(37, 13)
    before = tiers.get_tier()
    outputs = {}
    try:
        for tier in ("reference", "fast"):
            tiers.set_tier(tier)
            with learntorch.no_grad():
                outputs[tier] = quantized(x).numpy()
    finally:
        tiers.set_tier(before)
    np.testing.assert_array_equal(outputs["fast"], outputs["reference"])
