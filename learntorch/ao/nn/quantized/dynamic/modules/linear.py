"""``learntorch.ao.nn.quantized.dynamic.Linear``: a Linear layer with int8 weights whose
input is quantized on the fly, call by call (printed ``DynamicQuantizedLinear``, as torch).

``quantize_dynamic`` makes these from ``nn.Linear`` layers with ``from_float``: the
weight is observed (its range measured), quantized once to int8, and packed beside the
float bias.  ``forward(x)`` takes and returns float32 tensors; inside, the input is
quantized per batch and multiplied in integers (``_linear_dynamic.py``).

The layer has no parameters (``parameters()`` is empty, as in torch): its weight is not
trainable.  ``weight()`` and ``bias()`` are methods that unpack them.
"""
from ...... import _dtypes
from ......factories import tensor, zeros
from ......nn.modules.linear import Linear as FloatLinear
from ......nn.modules.module import Module
from ..._quantized_weight import quantize_weight
from ...modules.linear import LinearPackedParams
from .._linear_dynamic import LinearDynamic


class Linear(Module):
    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=_dtypes.qint8):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        from ......_quantize import quantize_per_tensor
        weight = quantize_per_tensor(zeros(out_features, in_features), 1.0, 0, _dtypes.qint8)
        bias = zeros(out_features) if bias_ else None
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(weight, bias)
        self.scale = 1.0
        self.zero_point = 0
        self.version = 4

    def forward(self, x):
        return LinearDynamic.apply(x, self._packed_params._packed_params, True)

    # ---- the weight and bias, unpacked
    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    # ---- printing and the state dict, as torch's
    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}")

    def __repr__(self):
        # torch's: the packed parameters are not shown as a child
        return f"{self._get_name()}({self.extra_repr()})"

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = tensor(self.scale)
        destination[prefix + "zero_point"] = tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # torch's: the scale and zero point are read (a KeyError when absent, as torch) and
        # taken out; the weight and bias are the ``_packed_params`` child's to load
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A dynamic quantized Linear with ``mod``'s weight quantized by its qconfig's
        weight observer (the default: per tensor, symmetric, qint8) and its bias as is."""
        if type(mod) is not FloatLinear:
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for one "
                                 f"of['Linear'], got {type(mod)}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if mod.qconfig is not None and mod.qconfig.weight is not None:
            weight_observer = mod.qconfig.weight()
        else:
            from ......ao.quantization.qconfig import default_dynamic_qconfig
            weight_observer = default_dynamic_qconfig.weight()
        if weight_observer.dtype is not _dtypes.qint8:
            raise AssertionError("The only supported dtype for dynamic quantized linear in "
                                 f"learntorch is qint8, got: {weight_observer.dtype}")
        weight_observer(mod.weight)
        qweight = quantize_weight(mod.weight.float(), weight_observer)
        qlinear = cls(mod.in_features, mod.out_features, dtype=weight_observer.dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        return qlinear
