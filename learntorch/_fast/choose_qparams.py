"""The fast ``choose_qparams``: what ``ao/nn/quantized/dynamic/_linear_dynamic.py``'s
``choose_qparams`` computes, in plain Python floats where that is exact.

Replaces: ``learntorch.ao.nn.quantized.dynamic._linear_dynamic.choose_qparams`` (called
twice per quantized Linear per forward: once per batch, that is the "dynamic").  Proven
equal by ``tests/tiers/test_fast_choose_qparams_equals_reference.py``.

The reference spells out torch's float32 arithmetic with numpy float32 scalars, under
``np.errstate`` (it may divide by zero): about ten numpy scalar operations and a context
manager, a few microseconds -- as much as quantizing a small batch.  In the common case
none of that float32 arithmetic can change the answer:

* ``low`` and ``high`` are float32 values already (a dynamic Linear's ``min_max`` gives
  them), so ``float32(low)`` is ``low`` and comparing with 0 is the same in Python floats;
* the scale is computed in float64 by the reference too;
* a scale of at least ``SMALL_SCALE_THRESHOLD`` is neither 0 nor so small that its
  float32 reciprocal overflows, and needs no widening: the reference's two special cases
  cannot fire.

So for finite float32 ends whose scale is at least the threshold, the answer is the
scale and ``zero_point_of`` (the reference's own last step); anything else (NaN or
infinite ends, a tiny or empty range, a float64 end) goes to the reference.
"""
import math

import numpy as np

from ..ao.nn.quantized.dynamic import _linear_dynamic

_reference = _linear_dynamic.choose_qparams
_float32 = np.float32
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def choose_qparams(low, high, quant_min, quant_max, reduce_range):
    # finite float32 ends (not NaN: every comparison with NaN is False)
    if (abs(low) <= _FLOAT32_MAX and abs(high) <= _FLOAT32_MAX
            and float(_float32(low)) == low and float(_float32(high)) == high):
        q_min, q_max = (quant_min // 2, quant_max // 2) if reduce_range else (quant_min,
                                                                              quant_max)
        range_low, range_high = min(low, 0.0), max(high, 0.0)
        scale = (range_high - range_low) / (q_max - q_min)
        if _linear_dynamic.SMALL_SCALE_THRESHOLD <= scale < math.inf:
            return scale, _linear_dynamic.zero_point_of(range_low, range_high, scale, q_min,
                                                        q_max)
    return _reference(low, high, quant_min, quant_max, reduce_range)
