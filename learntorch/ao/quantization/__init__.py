"""``learntorch.ao.quantization``: observe, choose quantization parameters, quantize models.

torch 2.13's names and semantics: observers (``MinMaxObserver``,
``MovingAverageMinMaxObserver``, ``PerChannelMinMaxObserver``) whose
``calculate_qparams()`` gives torch's scales and zero points, ``QConfig`` and the default
qconfigs, and ``quantize_dynamic`` (Linear layers to int8).  torch 2.13 marks this API
deprecated in favour of the torchao library; it still ships it, and so does learntorch.
"""
from .observer import (MinMaxObserver, MovingAverageMinMaxObserver, ObserverBase,
                       PerChannelMinMaxObserver, PlaceholderObserver,
                       UniformQuantizationObserverBase, default_dynamic_quant_observer,
                       default_observer, default_per_channel_weight_observer,
                       default_weight_observer)
from .qconfig import QConfig, default_dynamic_qconfig, default_qconfig, per_channel_dynamic_qconfig
from ._quantize_model import (convert, get_default_dynamic_quant_module_mappings,
                              propagate_qconfig_, quantize_dynamic, swap_module)

__all__ = ["MinMaxObserver", "MovingAverageMinMaxObserver", "ObserverBase",
           "PerChannelMinMaxObserver", "PlaceholderObserver", "UniformQuantizationObserverBase",
           "default_dynamic_quant_observer", "default_observer",
           "default_per_channel_weight_observer", "default_weight_observer", "QConfig",
           "default_dynamic_qconfig", "default_qconfig", "per_channel_dynamic_qconfig",
           "convert", "get_default_dynamic_quant_module_mappings", "propagate_qconfig_",
           "quantize_dynamic", "swap_module"]
