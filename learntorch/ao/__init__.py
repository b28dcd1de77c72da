"""``learntorch.ao``: torch's "architecture optimization" namespace -- here, quantization.

* ``learntorch.ao.quantization`` -- observers, qconfigs and ``quantize_dynamic``;
* ``learntorch.ao.nn.quantized.dynamic.Linear`` -- the int8 Linear ``quantize_dynamic``
  puts in a model.

torch 2.13 still ships this API but marks it deprecated in favour of the torchao library;
learntorch mirrors what torch 2.13 has (see ``quantization/_quantize_model.py``).
"""
from . import nn, quantization

__all__ = ["nn", "quantization"]
