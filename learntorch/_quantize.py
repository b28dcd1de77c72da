"""``learntorch.quantize_per_tensor``, ``quantize_per_channel`` and ``dequantize``.

Quantizing maps each float ``x`` to an integer code of 8 (or 32) bits::

    code = clamp(round(x / scale) + zero_point, quant_min, quant_max)
    value = scale * (code - zero_point)          # what the code stands for

``round`` is round-half-to-even and the clamp is to the dtype's range (qint8: -128..127,
quint8: 0..255, qint32: the int32 range): a value beyond the range the scale covers is
*clipped* to the nearest end, a value inside it is off by at most ``scale / 2``.  The
arithmetic is the backend's (``backends/numpy_families/quantized.py``), bit for bit
PyTorch's on x86.

These are torch 2.13's functions.  torch 2.13 still ships them (and ``torch.ao``'s
``quantize_dynamic``) but marks the quantized dtypes as deprecated in favour of the
torchao library, which represents quantized weights as ordinary int8 tensors with their
scales kept beside them; learntorch mirrors the API torch still has.  No autograd: like
torch's, these functions give tensors that do not require grad.
"""
import numbers

import numpy as np

from . import _dtypes
from ._quantized_tensor import QuantizedTensor
from ._tensor import Tensor

#: the codes each quantized dtype can hold
CODE_RANGES = {
    _dtypes.qint8: (-128, 127),
    _dtypes.quint8: (0, 255),
    _dtypes.qint32: (-(2 ** 31), 2 ** 31 - 1),
}


def code_range(dtype, caller="quantize_per_tensor"):
    """(quant_min, quant_max) of a quantized dtype, or torch's error for any other dtype."""
    if dtype not in CODE_RANGES:
        raise RuntimeError(
            f"{caller}() makes a quantized tensor, so its dtype must be learntorch.qint8, "
            f"learntorch.quint8 or learntorch.qint32, got {dtype} (torch: 'ScalarType ... is "
            "not supported in new_qtensor')")
    return CODE_RANGES[dtype]


def _check_input(input, caller):
    if not isinstance(input, Tensor):
        raise TypeError(f"{caller}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype is not _dtypes.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {input.dtype}: "
                           f"convert it first, e.g. x.float()")
    if input.device.type != "cpu":
        raise RuntimeError(f"{caller}() of a {input.device} tensor: quantized tensors live on "
                           "the CPU in learntorch, call .cpu() first")


def _check_zero_point(zero_point, quant_min, quant_max, kernel):
    if zero_point > quant_max:
        raise RuntimeError(f"{kernel} zero_point {zero_point} is above upper bound.")
    if zero_point < quant_min:
        raise RuntimeError(f"{kernel} zero_point {zero_point} is below lower bound.")


def _c_order(array):
    """``array`` in C order (torch's quantized tensors are contiguous), 0-d staying 0-d."""
    return array if array.flags.c_contiguous else array.copy(order="C")


def _number(value, kind):
    """A scale or zero point given as a number or a one-element tensor, as a Python number."""
    if isinstance(value, Tensor):
        return kind(value.item())
    if not isinstance(value, numbers.Real):
        raise TypeError(f"expected a number or a one-element tensor, got "
                        f"{type(value).__name__}")
    return kind(value)


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantize float32 ``input`` with one ``scale`` and ``zero_point`` for all of it.

    A list of tensors (with tensors of scales and zero points) gives a tuple, as torch.
    """
    from . import backends
    if isinstance(input, (list, tuple)):
        return tuple(quantize_per_tensor(t, s, z, dtype)
                     for t, s, z in zip(input, scale.tolist(), zero_point.tolist()))
    _check_input(input, "quantize_per_tensor")
    quant_min, quant_max = code_range(dtype)
    # a scale given as a float32 tensor is that float32 number, as in torch
    scale, zero_point = _number(scale, float), _number(zero_point, int)
    _check_zero_point(zero_point, quant_min, quant_max, "quantize_tensor_per_tensor_affine")
    codes = backends.current.quantize_per_tensor(
        _c_order(input._data), scale, zero_point, quant_min, quant_max, dtype.np)
    return QuantizedTensor._make(codes, dtype, scale, zero_point)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantize float32 ``input`` with ``scales[c]`` and ``zero_points[c]`` for each index c
    of dim ``axis`` (e.g. one scale per output row of a weight, axis=0)."""
    from . import backends
    for name, position, value in (("scales", 2, scales), ("zero_points", 3, zero_points)):
        if not isinstance(value, Tensor):
            raise TypeError(f"quantize_per_channel(): argument '{name}' (position {position}) "
                            f"must be Tensor, not {type(value).__name__}")
    _check_input(input, "quantize_per_channel")
    quant_min, quant_max = code_range(dtype, "quantize_per_channel")
    if scales.numel() != zero_points.numel():
        raise RuntimeError("number of elements in scales and zero_points must match "
                           f"(got {scales.numel()} scales and {zero_points.numel()} zero points)")
    if not 0 <= axis < input.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {input.ndim})")
    channels = input.shape[axis]
    if scales.numel() != channels:
        raise RuntimeError(f"length of scales must equal to channel, expected {channels} got, "
                           f"{scales.numel()}")
    # stored as torch stores them: float64 scales, int64 zero points
    scales = Tensor._wrap(np.asarray(scales._data, dtype=np.float64).reshape(-1).copy())
    zero_points = Tensor._wrap(np.asarray(zero_points._data).reshape(-1).astype(np.int64))
    for z in zero_points.tolist():
        _check_zero_point(z, quant_min, quant_max, "quantize_tensor_per_channel_affine")
    codes = backends.current.quantize_per_channel(
        _c_order(input._data), scales._data, zero_points._data, axis, quant_min,
        quant_max, dtype.np)
    return QuantizedTensor._make(codes, dtype, scales=scales, zero_points=zero_points,
                                 axis=axis)


def dequantize(tensor):
    """float32 values of a quantized tensor (a list gives a tuple; a float tensor is
    returned as it is)."""
    if isinstance(tensor, (list, tuple)):
        return tuple(dequantize(t) for t in tensor)
    return tensor.dequantize()
