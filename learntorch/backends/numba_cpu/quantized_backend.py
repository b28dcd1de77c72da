"""The int8 kernels as ``NumbaBackend``'s overrides of ``QuantizedFamily``
(``backends/numpy_families/quantized.py``): ``quantized_matmul`` (the int8 GEMM),
``quantize_per_tensor`` and ``dequantize_matmul``, the three steps of a dynamic quantized
``Linear``'s forward, and ``quantized_linear``, the three in one pass over a weight packed
once by ``pack_quantized_weight`` (``int8_linear.py``; on CPUs with AVX-512 VNNI; elsewhere
the weight stays plain codes and ``quantized_linear`` makes the three calls), plus
``min_max``, the input's range in one pass.

numpy has no fast integer matrix product (its int matmul is a plain loop), and its
quantize / dequantize take five whole-array passes each where the kernels
(``int8_kernels.py``) take one.  A kernel serves a call when the arrays are plain,
C-contiguous numpy arrays of the kernel's dtypes, big enough to be worth loading Numba
(``layer_min_sizes`` in ``tuning.json``: a toy stays on numpy), and kernels may run in
this process; otherwise the numpy reference answers (``super()``), with the same values.
"""
import numpy as np

from . import tuning
from .loader import PARALLEL_MIN_NS, kernels, kernels_allowed, use_threads

_CODES = (np.dtype(np.int8), np.dtype(np.uint8))


def _compact(a):
    """A plain numpy array, C-contiguous, aligned and writeable: the kernels' one layout."""
    flags = getattr(a, "flags", None)
    return (type(a) is np.ndarray and flags.c_contiguous and flags.aligned
            and flags.writeable)


class PackedInt8Weight:
    """A Linear's weight as ``int8_linear`` reads it: the codes (for the reference steps),
    the register tiles and the column sums of ``int8_linear.pack_weight_tiles``."""

    __slots__ = ("codes", "tiles", "column_sums", "no_bias", "_scales_of", "_scales")

    def __init__(self, codes, tiles, column_sums):
        self.codes, self.tiles, self.column_sums = codes, tiles, column_sums
        self.no_bias = np.zeros(codes.shape[0], np.float32)  # what "no bias" adds
        self._scales_of, self._scales = None, None

    def weight_scales(self, weight_scale):
        """The weight's scale(s) as the kernel reads them, one float32 per column: made
        once per scale object (the layer passes the same one at every call)."""
        if weight_scale is not self._scales_of:
            scales = np.asarray(weight_scale, dtype=np.float32)
            self._scales = np.ascontiguousarray(np.broadcast_to(scales, self.codes.shape[:1]))
            self._scales_of = weight_scale
        return self._scales


class NumbaQuantized:
    #: the smallest call each kernel takes: multiply-adds (quantized_matmul) or elements
    #: (tuning.json; a test sets an instance's to 0 to run the kernels on tiny arrays).  The
    #: one-thread cost of each is ``self.ns_per_element[op]``, which decides the threads.
    layer_min_sizes = tuning.load()["layer_min_sizes"]

    def _quantized_kernel_serves(self, op, size):
        limit = self.layer_min_sizes[op]
        return limit is not None and size >= max(limit, 1) and kernels_allowed()

    def quantized_matmul(self, a, a_zero_point, b, b_zero_point):
        if np.ndim(b_zero_point) and not np.any(b_zero_point):
            b_zero_point = 0  # per-channel symmetric weights: every zero point is 0
        if not (np.ndim(b_zero_point) == 0 and _compact(a) and _compact(b) and a.ndim == 2 and b.ndim == 2
                and a.dtype in _CODES and b.dtype == np.int8 and a.shape[1] == b.shape[1]
                and self._quantized_kernel_serves("quantized_matmul", a.size * b.shape[0])):
            return super().quantized_matmul(a, a_zero_point, b, b_zero_point)
        out = np.empty((a.shape[0], b.shape[0]), np.int32)
        use_threads(a.size * b.shape[0] * self.ns_per_element["quantized_matmul"])
        kernels("int8_kernels").quantized_matmul(a, int(a_zero_point), b, int(b_zero_point),
                                                 out)
        return out

    def quantize_per_tensor(self, x, scale, zero_point, quant_min, quant_max, dtype):
        if not (_compact(x) and x.dtype == np.float32 and np.dtype(dtype) in _CODES
                and self._quantized_kernel_serves("quantize_per_tensor", x.size)):
            return super().quantize_per_tensor(x, scale, zero_point, quant_min, quant_max,
                                               dtype)
        out = np.empty(x.shape, dtype)
        inv_scale = np.float32(1.0) / np.float32(scale)
        kernels("int8_kernels").quantize_rows(x.reshape(-1), inv_scale, int(zero_point),
                                              int(quant_min), int(quant_max), out.reshape(-1))
        return out

    def min_max(self, x):
        if not (_compact(x) and x.dtype == np.float32 and x.size
                and self._quantized_kernel_serves("quantize_per_tensor", x.size)):
            return super().min_max(x)
        low, high = kernels("int8_kernels").min_max(x.reshape(-1))
        return np.asarray(low, np.float32), np.asarray(high, np.float32)

    def dequantize_matmul(self, acc, a_scale, b_scale, bias):
        if not (_compact(acc) and acc.ndim == 2 and acc.dtype == np.int32
                and (bias is None or (_compact(bias) and bias.dtype == np.float32
                                      and bias.shape == acc.shape[1:]))
                and self._quantized_kernel_serves("dequantize_matmul", acc.size)):
            return super().dequantize_matmul(acc, a_scale, b_scale, bias)
        n = acc.shape[1]
        scales = np.float32(a_scale) * np.asarray(b_scale, dtype=np.float32)  # as the reference
        scales = np.ascontiguousarray(np.broadcast_to(scales, (n,)))
        bias = np.zeros(n, np.float32) if bias is None else bias
        out = np.empty(acc.shape, np.float32)
        use_threads(acc.size * self.ns_per_element["dequantize_matmul"])
        kernels("int8_kernels").dequantize_matmul_rows(acc, scales, bias, out)
        return out

    def pack_quantized_weight(self, codes):
        if not (_compact(codes) and codes.ndim == 2 and codes.dtype == np.int8
                and self.layer_min_sizes["quantized_matmul"] is not None and kernels_allowed()):
            return super().pack_quantized_weight(codes)
        linear = kernels("int8_linear")
        if not linear.vnni_available():  # the tiles' instruction is missing: plain codes
            return super().pack_quantized_weight(codes)
        return PackedInt8Weight(codes, *linear.pack_weight_tiles(codes))

    def quantized_linear(self, x, scale, zero_point, quant_max, weight, weight_scale,
                         weight_zero_point, bias):
        if isinstance(weight_zero_point, np.ndarray) and not weight_zero_point.any():
            weight_zero_point = 0  # per-channel symmetric weights: every zero point is 0
        packed = type(weight) is PackedInt8Weight
        codes = weight.codes if packed else weight
        m, n = x.shape[0], codes.shape[0]
        if not (packed and not isinstance(weight_zero_point, np.ndarray) and _compact(x)
                and x.ndim == 2 and x.dtype == np.float32 and x.shape[1] == codes.shape[1]
                and 0 <= zero_point <= quant_max <= 255
                and (bias is None or (_compact(bias) and bias.dtype == np.float32
                                      and bias.shape == (n,)))
                and self._quantized_kernel_serves("quantized_matmul", x.size * n)):
            return super().quantized_linear(x, scale, zero_point, quant_max, codes,
                                            weight_scale, weight_zero_point, bias)
        out = np.empty((m, n), np.float32)
        linear = kernels("int8_linear")
        kernel = linear.quantized_linear_rows
        single_thread_ns = x.size * n * self.ns_per_element["quantized_linear"]
        if single_thread_ns >= PARALLEL_MIN_NS:
            use_threads(single_thread_ns)
            kernel = linear.quantized_linear_rows_parallel
        kernel(x, float(scale), int(zero_point), int(quant_max), weight.tiles, n,
               int(weight_zero_point), weight.column_sums, weight.weight_scales(weight_scale),
               weight.no_bias if bias is None else bias, out)
        return out
