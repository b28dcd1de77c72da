"""``Linear``: the dynamic quantized Linear (``modules/linear.py``)."""
from .linear import Linear

__all__ = ["Linear"]
