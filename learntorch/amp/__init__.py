"""Automatic mixed precision, as ``torch.amp``: ``autocast`` picks each op's precision
(``autocast_mode.py``, with torch's op lists in ``_policy.py``) and ``GradScaler`` keeps small
float16 gradients from underflowing (``grad_scaler.py``)."""
from .autocast_mode import autocast, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "is_autocast_available", "GradScaler"]
