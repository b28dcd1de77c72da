"""``quantized``: int8 quantization on arrays -- float values to integer codes and back, and
the integer matrix product that makes int8 inference cheap.

A code ``q`` stands for the real number ``scale * (q - zero_point)``.  Quantizing is the
inverse, rounded and clamped::

    q = clamp(round(x / scale) + zero_point, quant_min, quant_max)

with PyTorch's exact arithmetic (fbgemm's, on x86), so that learntorch's codes equal
torch's bit for bit:

* ``x / scale`` is computed as ``x * (1 / scale)`` in float32 (torch's
  ``fbgemm::Quantize``: one reciprocal, then a multiplication per element);
* the zero point is added *before* rounding, in float32: ``round(x * (1/scale) +
  zero_point)``.  (Rounding first and adding after gives another code when the value
  lands exactly on a half and the zero point is odd: round(0.5) - 3 = -3, but
  round(0.5 - 3) = round(-2.5) = -2);
* ``round`` is round-half-to-even (``np.rint``: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2);
* NaN becomes ``quant_max`` (what torch's vectorised kernel gives).

Every method takes and returns arrays (0-d ones included, never numpy scalars) and never
modifies its inputs.  Scales arrive as
Python floats (per tensor) or float64 arrays (per channel), zero points as Python ints or
int64 arrays, ``dtype`` as the numpy dtype of the codes (int8, uint8 or int32).
"""
import numpy as np


def _along(values, axis, ndim):
    """Per-channel ``values`` shaped to broadcast along dim ``axis`` of an ndim-D array."""
    shape = [1] * ndim
    shape[axis] = values.shape[0]
    return values.reshape(shape)


def _to_codes(shifted, quant_min, quant_max, dtype):
    """Round ``shifted`` (float32 ``x / scale + zero_point``) half to even, clamp it to
    [quant_min, quant_max] and store it as ``dtype``; NaN becomes quant_max first."""
    codes = np.asarray(np.rint(shifted), dtype=np.float64)  # exact for every int32
    codes = np.where(np.isnan(codes), quant_max, codes)
    return np.asarray(np.clip(codes, quant_min, quant_max)).astype(dtype)


class QuantizedFamily:
    # ---- float -> codes -----------------------------------------------------------
    def quantize_per_tensor(self, x, scale, zero_point, quant_min, quant_max, dtype):
        """Codes of float32 array ``x`` with one ``scale`` and ``zero_point`` for all of it."""
        inv_scale = np.float32(1.0) / np.float32(scale)
        scaled = np.multiply(x, inv_scale, dtype=np.float32)
        return _to_codes(scaled + np.float32(zero_point), quant_min, quant_max, dtype)

    def quantize_per_channel(self, x, scales, zero_points, axis, quant_min, quant_max, dtype):
        """Codes of float32 array ``x`` with a scale and zero point per index of dim ``axis``."""
        inv_scales = np.float32(1.0) / scales.astype(np.float32)
        scaled = np.multiply(x, _along(inv_scales, axis, x.ndim), dtype=np.float32)
        shifts = _along(zero_points.astype(np.float32), axis, x.ndim)
        return _to_codes(scaled + shifts, quant_min, quant_max, dtype)

    # ---- codes -> float -------------------------------------------------------------
    def dequantize_per_tensor(self, codes, scale, zero_point):
        """float32 ``scale * (codes - zero_point)``, multiplied in float32 (as fbgemm)."""
        shifted = codes.astype(np.float32) - np.float32(zero_point)  # exact: small integers
        return np.asarray(np.multiply(shifted, np.float32(scale), dtype=np.float32))

    def dequantize_per_channel(self, codes, scales, zero_points, axis):
        """float32 ``scales * (codes - zero_points)`` along ``axis``, multiplied in float64
        and rounded once (as torch's per-channel kernel, whose scales are doubles)."""
        shifted = codes.astype(np.float64) - _along(zero_points, axis, codes.ndim)
        return np.asarray(shifted * _along(scales, axis, codes.ndim)).astype(np.float32)

    def min_max(self, x):
        """(smallest, largest) value of float array ``x`` as two 0-d arrays: the range a
        dynamic quantizer must cover."""
        return np.asarray(x.min()), np.asarray(x.max())

    # ---- the integer matrix product ------------------------------------------------------
    def quantized_matmul(self, a, a_zero_point, b, b_zero_point):
        """int32 ``(a - a_zero_point) @ (b - b_zero_point).T`` for codes a (M, K), b (N, K);
        ``b_zero_point`` is an int or, for a per-channel weight, an int64 (N,) array.

        ``b`` is in the layout of a Linear weight (out_features, in_features), so both
        operands are read along K.  The exact integer sums are what the int8 kernels
        accumulate in int32.  numpy has no fast integer matmul (it falls back to a plain
        loop, ~40x slower than BLAS), so the reference multiplies in float64: every product
        and partial sum is an integer below 2**53 and therefore exact -- the same values.
        """
        left = a.astype(np.float64) - a_zero_point
        right = b.astype(np.float64) - np.reshape(b_zero_point, (-1, 1))  # one per row of b
        return (left @ right.T).astype(np.int32)

    def dequantize_matmul(self, acc, a_scale, b_scale, bias):
        """float32 ``acc * (a_scale * b_scale) + bias`` for the int32 result of
        ``quantized_matmul``.

        ``a_scale`` is the input's scale (a float); ``b_scale`` the weight's: a float (per
        tensor) or a float32 array over the N columns (per channel); ``bias`` a float32 (N,)
        array or None.  As torch's kernel (fbgemm's ``ReQuantizeForFloat``): the two
        scales multiplied in float32, then one fused multiply-add rounded once -- in
        float64 the product of an int32 and a float32 is exact.
        """
        scale = np.float32(a_scale) * np.asarray(b_scale, dtype=np.float32)
        out = acc.astype(np.float64) * scale.astype(np.float64)
        if bias is not None:
            out += bias
        return out.astype(np.float32)

    # ---- a quantized Linear: the three steps in one call -------------------------------
    def pack_quantized_weight(self, codes):
        """A Linear's (N, K) int8 weight codes in the layout this backend's
        ``quantized_linear`` reads best, made once when the layer is built (torch's
        "packed params").  Here: the codes as they are."""
        return codes

    def quantized_linear(self, x, scale, zero_point, quant_max, weight, weight_scale,
                         weight_zero_point, bias):
        """float32 (M, N) from float32 ``x`` (M, K): quantize it to uint8 codes
        0..``quant_max`` with ``scale`` and ``zero_point``, multiply with the weight's codes
        (``weight``, from ``pack_quantized_weight``), and turn the sums back into floats
        with the bias.  One call, so that a backend may do the three steps in one pass."""
        codes = self.quantize_per_tensor(x, scale, zero_point, 0, quant_max, np.uint8)
        sums = self.quantized_matmul(codes, zero_point, weight, weight_zero_point)
        return self.dequantize_matmul(sums, scale, weight_scale, bias)
