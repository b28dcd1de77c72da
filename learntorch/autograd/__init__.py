"""``learntorch.autograd``: the tape, the backward engine and gradient checks.

Public names follow ``torch.autograd``: ``Function``, ``backward``, ``grad``,
``gradcheck``, ``no_grad``/``enable_grad``/``set_grad_enabled``.  The graph
introspection used by widgets and chapters is in ``learntorch.autograd.graph``
(``walk``, ``backward_steps``).
"""
from .function import Function, BackwardNode, AccumulateGrad
from .grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode
from .engine import backward, backward_steps, BackwardStep, grad
from .gradcheck import gradcheck, gradgradcheck
from . import graph

__all__ = ["Function", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "backward_steps", "BackwardStep", "graph"]
