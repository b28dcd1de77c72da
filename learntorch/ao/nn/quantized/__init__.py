"""Quantized modules: ``dynamic.Linear`` (int8 weights, input quantized per call) and the
``LinearPackedParams`` that holds its weight."""
from . import dynamic
from .modules.linear import LinearPackedParams

__all__ = ["dynamic", "LinearPackedParams"]
