"""``learntorch.autograd``: the tape, the backward engine and gradient checks.

Public names follow ``torch.autograd``: ``Function``, ``backward``, ``grad``,
``gradcheck``, ``no_grad``/``enable_grad``/``set_grad_enabled``.  The graph
introspection used by widgets and chapters is in ``learntorch.autograd.graph``
(``walk``, ``backward_steps``).
"""
from .function import Function, BackwardNode, AccumulateGrad
from .grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode
from .engine import backward, backward_steps, BackwardStep
from . import engine as _engine
from .gradcheck import gradcheck, gradgradcheck
from . import graph

__all__ = ["Function", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "backward_steps", "BackwardStep", "graph"]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad``."""
    outputs = _engine._as_tuple(outputs)
    inputs = _engine._as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}, shape "
                               f"{list(t.shape)}) does not require grad")
    grads = _engine.make_grads(outputs, _engine._as_tuple(grad_outputs))
    steps = backward_steps(outputs, grads, retain_graph, create_graph, inputs, accumulate=False)
    try:
        while True:
            next(steps)
    except StopIteration as stop:
        result = stop.value
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, g in enumerate(result):
        if g is None:
            if materialize_grads:
                result[i] = inputs[i].detach().new_zeros(inputs[i].shape)
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}, shape "
                    f"{list(inputs[i].shape)}) appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior.")
        elif not create_graph:
            result[i] = g.detach()
    return tuple(result)
