"""Quantized modules (``learntorch.ao.nn.quantized``)."""
from . import quantized

__all__ = ["quantized"]
