"""Backward formulas on raw arrays, one file per family of ops (see ``registry.py``)."""
from . import core  # noqa: F401  (each family module registers its entries on import)
from . import losses  # noqa: F401
from . import nn_layers  # noqa: F401
from .registry import ARRAY_BACKWARD  # noqa: F401
