"""torch's ``torch._dynamo`` names that learntorch.compile honours, so that the same code
runs on both: ``config.recompile_limit``, ``exc.Unsupported``, ``reset()``, ``explain()``.

(learntorch has no Dynamo -- no bytecode capture; ``learntorch.compiler`` is the
compiler.  These are the knobs and answers a torch user reaches for.)
"""
from . import exc
from ..compiler import config, reset
from ..compiler.explain import ExplainOutput, explain

__all__ = ["config", "exc", "reset", "explain", "ExplainOutput"]
