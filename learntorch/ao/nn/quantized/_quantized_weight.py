"""Quantize a float weight with the scale and zero point its observer chose (torch's
``_quantize_weight``).

Per tensor (``per_tensor_symmetric`` / ``per_tensor_affine``): one scale for the whole
weight.  Per channel (``per_channel_symmetric`` / ``per_channel_affine``): one scale per
index of the observer's ``ch_axis`` -- for a Linear weight (out, in) with ch_axis=0,
one per output feature, so that a row of small weights is not rounded on the grid of the
row with the largest.  An observer with a narrower code range than the dtype's (e.g.
``reduce_range=True``: -64..63) gets its codes clamped to that range afterwards.
"""
from ...._quantize import CODE_RANGES, quantize_per_channel, quantize_per_tensor
from ...._quantized_tensor import (per_channel_affine, per_channel_symmetric, per_tensor_affine,
                                   per_tensor_symmetric)


def quantize_weight(float_weight, observer):
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in (per_tensor_symmetric, per_tensor_affine):
        qweight = quantize_per_tensor(float_weight, float(scale), int(zero_point),
                                      observer.dtype)
    elif observer.qscheme in (per_channel_symmetric, per_channel_affine):
        qweight = quantize_per_channel(float_weight, scale.double(), zero_point.long(),
                                       observer.ch_axis, observer.dtype)
    else:
        raise ValueError(f"Unexpected qscheme {observer.qscheme}")
    return _clamped(qweight, observer)


def _clamped(qweight, observer):
    """``qweight`` with its codes clamped to the observer's range, if narrower than the
    dtype's."""
    low, high = CODE_RANGES[qweight.dtype]
    if observer.quant_min <= low and observer.quant_max >= high:
        return qweight
    codes = qweight.int_repr().clamp(observer.quant_min, observer.quant_max)
    return qweight._like(codes._data)

