"""``LinearPackedParams``: a quantized Linear's weight and bias, ready for the int8 kernel.

torch keeps them in an opaque "packed" object (fbgemm's layout for its GEMM) inside this
module; here packing means: the weight's int8 codes as one C-contiguous (out, in) array,
its scale(s) and zero point(s) as the kernel takes them, and the codes in the layout the
backend's ``quantized_linear`` reads best (``backend.pack_quantized_weight``: made once,
when the weight is set, and again only if a forward finds another backend current).
``_weight_bias()`` gives the quantized weight and the float bias back, as torch's
``linear_unpack``.

The state dict holds what torch's does: ``<prefix>dtype`` and ``<prefix>_packed_params``,
the tuple (quantized weight, bias); ``load_state_dict`` packs them again.
"""
import numpy as np

from ..... import _dtypes, backends
from ....._quantize import quantize_per_tensor
from ....._quantized_tensor import per_tensor_affine
from .....factories import zeros
from .....nn.modules.module import Module


class PackedLinearWeight:
    """The weight and bias of one quantized Linear, in the arrays the kernels read."""

    def __init__(self, weight, bias):
        self.weight, self.bias_tensor = weight, bias
        self.codes = np.ascontiguousarray(weight._data)
        if weight.qscheme() is per_tensor_affine:
            self.scales, self.zero_points = weight.q_scale(), weight.q_zero_point()
        else:
            self.scales = weight.q_per_channel_scales()._data.astype(np.float32)
            self.zero_points = weight.q_per_channel_zero_points()._data
        self.bias = None if bias is None else np.ascontiguousarray(bias._data,
                                                                    dtype=np.float32)
        self._packed_for = None
        self.packed_codes(backends.current)

    def packed_codes(self, backend):
        """The weight codes as ``backend.pack_quantized_weight`` lays them out (cached)."""
        if self._packed_for is not backend:
            self._packed, self._packed_for = backend.pack_quantized_weight(self.codes), backend
        return self._packed

    def unpack(self):
        return self.weight, self.bias_tensor


class LinearPackedParams(Module):
    _version = 3

    def __init__(self, dtype=_dtypes.qint8):
        super().__init__()
        if dtype is not _dtypes.qint8:
            raise NotImplementedError(
                f"learntorch's quantized Linear stores qint8 weights; got dtype={dtype} "
                "(torch also offers float16 weights, which learntorch does not)")
        self.dtype = dtype
        self.set_weight_bias(quantize_per_tensor(zeros(1, 1), 1.0, 0, dtype), None)

    def set_weight_bias(self, weight, bias):
        if weight.dtype is not _dtypes.qint8:
            raise RuntimeError(f"a quantized Linear's weight must be a qint8 tensor, got "
                               f"{weight.dtype}: quantize it with "
                               "learntorch.quantize_per_tensor(w, scale, 0, learntorch.qint8)")
        self._packed_params = PackedLinearWeight(weight, bias)

    def _weight_bias(self):
        return self._packed_params.unpack()

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # torch's (version 3): the dtype, then the (quantized weight, bias) pair, packed again
        self.dtype = state_dict.pop(prefix + "dtype")
        weight, bias = state_dict.pop(prefix + "_packed_params")
        self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())
