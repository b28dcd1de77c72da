"""``learntorch.nn``: modules, parameters, layers, losses, initialisation, functional.

Mirrors ``torch.nn``: ``class Net(nn.Module)`` with layers assigned as
attributes in ``__init__`` and a ``forward``; ``nn.functional`` (import it as
``F``) has the stateless versions.
"""
from .parameter import Parameter, Buffer
from .modules import Module, Sequential, ModuleList, ModuleDict
from . import functional
