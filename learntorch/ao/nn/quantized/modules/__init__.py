"""The parts quantized layers share (torch's ``ao.nn.quantized.modules``)."""
from .linear import LinearPackedParams

__all__ = ["LinearPackedParams"]
