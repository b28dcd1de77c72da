"""``QConfig``: which observer to use for a layer's activations and which for its weight
(torch's ``torch.ao.quantization.qconfig``).

Each field is an observer *factory* (``MinMaxObserver.with_args(...)``), not an observer:
every layer gets fresh observers of its own.  For dynamic quantization the activation
entry only says "quantize the input to quint8 at run time"; the weight entry decides how
the weight is quantized:

* ``default_dynamic_qconfig`` -- one scale for the whole weight, symmetric, qint8 (what
  ``quantize_dynamic(model, {nn.Linear})`` uses);
* ``per_channel_dynamic_qconfig`` -- one scale per output feature, symmetric, qint8.
"""
from collections import namedtuple

from ...nn.modules.module import Module
from .observer import (default_dynamic_quant_observer, default_observer,
                       default_per_channel_weight_observer, default_weight_observer)


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """(activation, weight) observer factories for one layer."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments to "
                             "constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
