"""``learntorch.utils``: helpers that are not tensor operations, as ``torch.utils``.

Only ``data`` (datasets, samplers, ``DataLoader``) lives here so far.
"""
from . import data

__all__ = ["data"]
