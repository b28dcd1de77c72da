"""``learntorch.autograd``: the tape, the backward engine and gradient checks.

Public names follow ``torch.autograd``: ``Function``, ``backward``, ``grad``,
``gradcheck``, ``no_grad``/``enable_grad``/``set_grad_enabled``.  The graph
introspection used by widgets and chapters is in ``learntorch.autograd.graph``
(``walk``, ``backward_steps``).
"""
import numpy as _np

from . import function as _function
from .function import Function, BackwardNode, AccumulateGrad
from .grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode
from .engine import backward_steps, BackwardStep, run_backward as _run_backward
from .gradcheck import gradcheck, gradgradcheck
from . import graph

__all__ = ["Function", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "backward_steps", "BackwardStep", "graph"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _function._Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs):
    """Default output gradients: ones for scalar outputs, an error otherwise (as torch)."""
    Tensor = _function._Tensor
    if grad_outputs is None and len(outputs) == 1:
        out = outputs[0]  # loss.backward(), the commonest call: a one-element CPU loss
        data = out._data
        if out._requires_grad and data.__class__ is _np.ndarray and data.size == 1:
            return [Tensor._wrap(_np.ones(data.shape, data.dtype))]
    from ..factories import ones_like
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None else None
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn: it "
                "was not computed from a tensor with requires_grad=True (or it was computed "
                "under no_grad). Set requires_grad=True on the inputs you want gradients for.")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs; this output has "
                    f"shape {list(out.shape)}. Call .sum() or .mean() first, or pass "
                    f"gradient=<tensor of shape {list(out.shape)}> to backward().")
            g = ones_like(out)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}: wrap it, e.g. learntorch.tensor(...)")
            if g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                    f"output[{i}] has a shape of {list(out.shape)}.")
            if g.dtype is not out.dtype:
                g = g.to(out.dtype)  # torch accepts any dtype here and casts it
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into ``.grad`` of every leaf (or of ``inputs``)."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    _run_backward(tensors, grads, retain_graph, create_graph, _backward_inputs(inputs))


def _backward_inputs(inputs):
    """``inputs=`` of backward as a tuple (or None), with torch's checks."""
    inputs = _as_tuple(inputs)
    if inputs is not None:
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError(
                    f"backward(inputs=...): input {i} (shape {list(t.shape)}) does not require "
                    "grad, so it cannot receive a gradient. Pass only tensors with "
                    "requires_grad=True.")
    return inputs


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}, shape "
                               f"{list(t.shape)}) does not require grad")
    grads = _make_grads(outputs, grad_outputs)
    steps = backward_steps(outputs, grads, retain_graph, create_graph, inputs, accumulate=False,
                           record_steps=False)
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
                from ..factories import zeros_like
                result[i] = zeros_like(inputs[i])
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}, shape "
                    f"{list(inputs[i].shape)}) appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior.")
        elif not create_graph:
            result[i] = g.detach()
    return tuple(result)
