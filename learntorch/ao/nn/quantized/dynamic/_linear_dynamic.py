"""The forward of a dynamic quantized Linear: ``torch.ops.quantized.linear_dynamic``.

*Dynamic* means the weights were quantized once, ahead of time (int8 codes and a scale,
``LinearPackedParams``), while the activations are quantized **at run time, batch by
batch**: each call measures the range of its own input and picks a scale and zero point
for it.  Nothing has to be calibrated in advance, at the price of one pass over the input
to find its range.  The steps, each one backend call:

1. ``min_max``: the smallest and largest input value;
2. ``choose_qparams`` (below): a scale and zero point mapping that range onto the codes
   0..127 of quint8 (``reduce_range``: x86's int8 instructions add pairs of
   uint8 * int8 products in 16 bits, which 0..255 could overflow);
3. ``quantize_per_tensor``: the input's uint8 codes;
4. ``quantized_matmul``: codes times weight codes, summed exactly in int32;
5. ``dequantize_matmul``: ``sum * (input scale * weight scale) + bias``, in float32.

Steps 3-5 are one backend call, ``quantized_linear`` (the reference backend's makes the
three calls above, in that order), so that a backend may do them in one pass: the Numba
backend's quantizes a few rows, multiplies them with a weight packed once into register
tiles, and writes floats, without ever storing the codes or the int32 sums.

The result equals torch 2.13's (fbgemm's) bit for bit: same range, same scale, same
codes, same integer sums, same final rounding.  No autograd: a quantized model is for
inference (torch records a node whose backward warns and gives no gradient; learntorch
raises instead of returning a silently missing gradient).
"""
import numpy as np

from ..... import backends
from .....autograd.function import Function
from ....._tensor import Tensor
from ....._dtypes import float32

#: below this scale fbgemm widens the range instead (fp16's smallest normal number); a C++
#: ``float`` constant, so the float32 number nearest 6.1e-5
SMALL_SCALE_THRESHOLD = float(np.float32(6.1e-5))


def choose_qparams(low, high, quant_min, quant_max, reduce_range):
    """torch's ``ChooseQuantizationParams``: (scale, zero_point) covering [low, high].

    The range is widened to contain 0, so that 0.0 -- padding, a ReLU's zeros -- has an
    exact code (the zero point).  The scale spreads the range over the codes; the zero
    point is the code of 0.0, rounded to an integer and kept inside the codes.  The
    arithmetic is torch's to the bit: ``low``/``high`` are C++ floats (float32), the
    scale and zero point doubles.
    """
    f32 = np.float32
    if reduce_range:
        quant_min, quant_max = quant_min // 2, quant_max // 2
    low, high = min(f32(low), f32(0)), max(f32(high), f32(0))
    scale = (float(high) - float(low)) / (quant_max - quant_min)
    with np.errstate(over="ignore", divide="ignore"):
        unusable = f32(scale) == 0 or np.isinf(f32(1) / f32(scale))
    if unusable:
        scale = 0.1  # an empty or constant range: any scale represents it
    if scale < SMALL_SCALE_THRESHOLD:  # too fine a grid: widen the range instead
        original = f32(scale)
        scale = SMALL_SCALE_THRESHOLD
        if low == 0:
            high = f32(scale) * f32(quant_max - quant_min)
        elif high == 0:
            low = -f32(scale) * f32(quant_max - quant_min)
        else:
            amplifier = f32(scale) / original
            low, high = low * amplifier, high * amplifier
    return scale, zero_point_of(float(low), float(high), scale, quant_min, quant_max)


def zero_point_of(low, high, scale, quant_min, quant_max):
    """The code of 0.0 on the grid ``scale`` over [low, high] (Python floats): computed
    from the end whose arithmetic error is smaller, kept inside the codes, rounded to an
    integer."""
    from_min, from_max = quant_min - low / scale, quant_max - high / scale
    error_min = abs(quant_min) - abs(low / scale)
    error_max = abs(quant_max) - abs(high / scale)
    zero_point = from_min if error_min < error_max else from_max
    if zero_point < quant_min:
        return quant_min
    if zero_point > quant_max:
        return quant_max
    return int(round(zero_point))  # Python's round: half to even, as nearbyint


class LinearDynamic(Function):
    """y = dequantize(quantize(x) @ weight_codes.T) + bias, with x quantized per call."""

    @staticmethod
    def forward(ctx, input, packed, reduce_range):
        if input.dtype is not float32:
            raise RuntimeError(f"expected scalar type Float but found {input.dtype}: a dynamic "
                               "quantized Linear takes float32 input (x.float())")
        if input.ndim < 2:
            raise RuntimeError("The dimension of input tensor should be larger than or equal to "
                               f"2 (got shape {list(input.shape)}): add a batch dimension, "
                               "x.unsqueeze(0)")
        in_features = packed.codes.shape[1]
        if input.shape[-1] != in_features:
            raise RuntimeError(f"The number of rows in the packB should be equal to K: "
                               f"{input.shape[-1]} (the layer takes {in_features} input "
                               f"features, the input has {input.shape[-1]})")
        backend = backends.current
        rows = input._data.reshape(-1, in_features)
        out_shape = tuple(input.shape[:-1]) + (packed.codes.shape[0],)
        low, high = backend.min_max(rows) if rows.size else (0.0, 0.0)
        scale, zero_point = choose_qparams(float(low), float(high), 0, 255, reduce_range)
        quant_max = 127 if reduce_range else 255
        out = backend.quantized_linear(rows, scale, zero_point, quant_max,
                                       packed.packed_codes(backend), packed.scales,
                                       packed.zero_points, packed.bias)
        return Tensor._wrap(out.reshape(out_shape))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            "the derivative for 'quantized::linear_dynamic' is not implemented: a dynamic "
            "quantized model is for inference. Train the float model, then quantize it")
