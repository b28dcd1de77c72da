"""The converters, one file per family of ops; importing this package registers them all
(``_registry.converts``)."""
from . import elementwise, layers, reductions, shape  # noqa: F401
