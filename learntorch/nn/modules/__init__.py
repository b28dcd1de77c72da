"""The layers of ``learntorch.nn``, one family per file."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict
