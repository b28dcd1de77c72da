"""Dynamic quantized modules: int8 weights, activations quantized at run time."""
from .modules import Linear

__all__ = ["Linear"]
