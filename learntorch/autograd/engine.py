"""The backward engine: walk the recorded graph from the output to the leaves.

``backward_steps`` is the whole algorithm, written as a generator that yields
one ``BackwardStep`` per node, so a widget can run the engine's own backward
one node at a time; ``backward()`` runs it to the end.  The algorithm:

1. count, for every node reachable from the roots, how many edges point into it
   (iteratively: a 100,000-op chain has no recursion limit);
2. put each root's gradient into the buffer of the node that produced it;
3. repeatedly take a node whose gradients are all in (its count reached 0; the
   most recently created one first, as torch does), call its backward, fit
   each returned gradient to its input -- **broadcasting's backward**
   (``grad.sum_to_size(shape)``): an input that was broadcast receives the sum of
   the gradients of its copies -- and add it into the buffer of the node it flows to;
4. at a leaf's ``AccumulateGrad`` node, add the gradient into ``leaf.grad``.

Gradients are Tensors throughout.  While backward formulas run, the tape
records only with ``create_graph=True`` (a graph of the gradient, for second
derivatives).  Saved tensors are freed after use unless ``retain_graph``.

(The fast tier, ``learntorch/_fast/engine.py``, replaces ``run_backward`` for
plain ``backward()`` calls by the same walk on raw arrays; this file is what it
must agree with.)
"""
import heapq
import itertools

import numpy as np

from . import grad_mode
from .function import AccumulateGrad, accumulate_grad


class BackwardStep:
    """What happened at one node: the chain rule, made visible.

    * ``index`` -- 0, 1, 2, ... in the order the engine ran the nodes;
    * ``node`` -- the grad_fn (or AccumulateGrad) that ran;
    * ``grad_outputs`` -- gradients that arrived, one per output of the node
      (summed over every path that reaches it);
    * ``grad_inputs`` -- what its backward returned, one per forward argument
      (None for arguments that are not tensors or need no gradient);
    * ``reduced`` -- the same after summing over broadcast dimensions, i.e. what
      was sent on (``broadcast_reduced`` lists the arguments where that changed
      the shape); ``sent`` pairs each with the node that receives it;
    * ``leaf``/``leaf_grad`` -- for AccumulateGrad, the leaf and its ``.grad`` afterwards.
    """

    __slots__ = ("index", "node", "grad_outputs", "grad_inputs", "reduced", "leaf", "leaf_grad")

    def __init__(self, index, node, grad_outputs, grad_inputs, reduced):
        self.index, self.node = index, node
        self.grad_outputs, self.grad_inputs, self.reduced = grad_outputs, grad_inputs, reduced
        self.leaf = getattr(node, "variable", None)  # an AccumulateGrad's leaf
        self.leaf_grad = None if self.leaf is None else self.leaf._grad

    @property
    def broadcast_reduced(self):
        """Indices of inputs whose gradient was summed over broadcast dimensions."""
        return tuple(i for i, (g, r) in enumerate(zip(self.grad_inputs, self.reduced))
                     if g is not None and r is not None and g.shape != r.shape)

    @property
    def sent(self):
        """``(next node, its output index, gradient)`` for every gradient sent on from here."""
        return [(nxt, nr, g) for (nxt, nr), g in zip(self.node._edges, self.reduced)
                if nxt is not None and g is not None]

    def __repr__(self):
        return f"BackwardStep({self.index}, {self.node.name()})"


# ---------------------------------------------------------------- the entry points
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``tensor.backward()`` and ``autograd.backward()``: gradients into the leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grads = make_grads(tensors, _as_tuple(grad_tensors))
    inputs = None if inputs is None else backward_inputs(inputs)
    run_backward(tensors, grads, create_graph if retain_graph is None else retain_graph,
                 create_graph, inputs)  # (retain_graph follows create_graph unless given)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}, shape "
                               f"{list(t.shape)}) does not require grad")
    grads = make_grads(outputs, _as_tuple(grad_outputs))
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


def run_backward(roots, grad_roots, retain_graph, create_graph, inputs=None):
    """Run backward to the end, accumulating into leaves' ``.grad``."""
    for _ in backward_steps(roots, grad_roots, retain_graph, create_graph, inputs):
        pass


def backward_steps(roots, grad_roots, retain_graph=False, create_graph=False, inputs=None,
                   accumulate=True):
    """Run backward from ``roots`` (tensors) one node at a time, yielding a BackwardStep each.

    ``inputs``: when given, only gradients for these tensors are computed.
    ``accumulate=False`` (autograd.grad): no ``.grad`` is touched; the generator's
    return value is the list of gradients for ``inputs``.
    """
    dependencies = _count_dependencies([t._edge()[0] for t in roots])
    buffer = {}  # node -> the gradients that arrived for each of its outputs (summed)
    for t, g in zip(roots, grad_roots):
        _add_to_buffer(buffer, *t._edge(), g)
    targets = _Targets(inputs, dependencies, accumulate) if inputs is not None else None
    ready = [(-n._sequence_nr, id(n), n) for n in buffer if dependencies[n] == 0]
    heapq.heapify(ready)  # the node created last runs first, as in torch
    state = grad_mode._state
    outer_mode, step_number = state.enabled, itertools.count()
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffer.pop(node, None) or [None] * len(node._output_meta)
            state.enabled = create_graph  # record the backward formulas only for create_graph
            if node._tensor_pre_hooks:
                grads = _run_prehooks(node, grads)
            if targets is not None:
                targets.capture(node, grads, create_graph)
            sent = [None] * len(node._edges)  # what flows on to each input (nothing, unless:)
            if any(g is not None for g in grads) and (targets is None or targets.runs(node)):
                grad_inputs = _call_backward(node, grads, retain_graph)  # a leaf: into .grad
                sent = [None if g is None or meta is None else _fit(node, i, g, meta)
                        for i, (g, meta) in enumerate(zip(grad_inputs, node._input_meta))]
                state.enabled = outer_mode  # the caller's code runs in its own grad mode
                yield BackwardStep(next(step_number), node, grads, grad_inputs, sent)
            for (nxt, nr), g in zip(node._edges, sent):
                if nxt is not None:
                    _send(buffer, dependencies, ready, nxt, nr, g)
    finally:
        state.enabled = outer_mode
    return targets.captured if targets is not None else []


# ---------------------------------------------------------------- the steps, one idea each
def _count_dependencies(roots):
    """How many edges point into each node reachable from ``roots`` (an iterative walk)."""
    dependencies = dict.fromkeys(roots, 0)
    stack = list(roots)
    while stack:
        for nxt, _ in stack.pop()._edges:
            if nxt is not None:
                if nxt not in dependencies:
                    stack.append(nxt)  # first time seen: walk on from it too
                dependencies[nxt] = dependencies.get(nxt, 0) + 1
    return dependencies


def _send(buffer, dependencies, ready, node, nr, grad):
    """Deliver ``grad`` to output ``nr`` of ``node``; once every edge into ``node`` has
    delivered (a None counts: that path carried no gradient), ``node`` is ready to run."""
    if grad is not None:
        _add_to_buffer(buffer, node, nr, grad)
    dependencies[node] -= 1
    if dependencies[node] == 0:
        heapq.heappush(ready, (-node._sequence_nr, id(node), node))


def _add_to_buffer(buffer, node, nr, grad):
    """Add ``grad`` to what output ``nr`` of ``node`` received so far (a tensor used twice
    receives the sum of both gradients)."""
    grads = buffer.setdefault(node, [None] * len(node._output_meta))
    grads[nr] = grad if grads[nr] is None else grads[nr] + grad


def _call_backward(node, grads, retain_graph):
    """``node``'s backward: one gradient (or None) per forward argument.  An output that
    received no gradient gets zeros (torch's ``materialize_grads``); the saved tensors
    are freed afterwards unless ``retain_graph``."""
    if node.materialize_grads and any(g is None for g in grads):
        grads = _zeros_where_missing(node, grads)
    with np.errstate(all="ignore"):  # 1/0 is inf and 0/0 nan, as torch: no warnings
        grad_inputs = node.apply(grads)
    if not retain_graph:
        node.release()
    if len(grad_inputs) != len(node._edges):
        grad_inputs = _one_per_input(node, grad_inputs)
    return grad_inputs


def _fit(node, i, g, meta):
    """Make gradient ``g`` of input ``i`` match the input: sum broadcast dims, cast dtype."""
    shape, dtype = meta
    if g._data.shape != shape:
        try:
            g = g.sum_to_size(shape)  # broadcasting's backward: sum over the broadcast dims
        except RuntimeError:
            _raise_wrong_gradient_shape(node, i, g, shape)
    return g if g._dtype is dtype else g.to(dtype)


def _raise_wrong_gradient_shape(node, i, g, shape):
    raise RuntimeError(
        f"Function {node.name()} returned an invalid gradient at index {i} - got "
        f"{list(g.shape)} but expected shape compatible with {list(shape)}")


# ---------------------------------------------------------------- rarer paths
class _Targets:
    """``inputs=`` of backward / ``autograd.grad``: the tensors whose gradient is wanted.

    ``runs(node)``: whether ``node``'s backward runs -- a wanted leaf's ``AccumulateGrad``
    (unless nothing accumulates, as in ``autograd.grad``), or a node on the way to a
    wanted gradient (the graph below a wanted non-leaf is not run: its gradient is what
    flows into it); ``capture`` keeps the gradients.
    """

    def __init__(self, inputs, dependencies, accumulate):
        self.inputs, self.accumulate = inputs, accumulate
        self.captured = [None] * len(inputs)
        self.edges = {}
        for i, t in enumerate(inputs):
            self.edges.setdefault(t._edge(), []).append(i)
        parents = {}
        self.needed = set()
        for n in dependencies:
            for edge in n._edges:
                if edge[0] is not None:
                    parents.setdefault(edge[0], []).append(n)
                    if edge in self.edges:
                        self.needed.add(n)
        stack = list(self.needed)
        while stack:
            for p in parents.get(stack.pop(), ()):
                if p not in self.needed:
                    self.needed.add(p)
                    stack.append(p)

    def runs(self, node):
        """Whether ``node``'s backward runs: a wanted leaf's when gradients accumulate,
        any other node's when it leads to a wanted gradient."""
        if type(node) is AccumulateGrad:
            return self.accumulate and (node, 0) in self.edges
        return node in self.needed

    def capture(self, node, grads, create_graph):
        """Keep the gradients of wanted inputs; a wanted non-leaf's ``.grad`` accumulates
        as a leaf's would (torch's rule for ``backward(inputs=...)``)."""
        for nr, g in enumerate(grads):
            for i in self.edges.get((node, nr), ()):
                self.captured[i] = g
                if self.accumulate and g is not None and type(node) is not AccumulateGrad:
                    accumulate_grad(self.inputs[i], g, create_graph)


def _run_prehooks(node, grads):
    """Run the hooks registered on ``node``'s outputs; a hook may return a new gradient."""
    grads = list(grads)
    for nr, fns in node._tensor_pre_hooks.items():
        if nr is None:  # a node-level prehook sees all gradients
            for fn in list(fns):
                result = fn(tuple(grads))
                if result is not None:
                    grads = list(result)
            continue
        for fn in list(fns):
            if grads[nr] is None:
                break
            result = fn(grads[nr])
            if result is not None:
                _check_hook_result(fn, grads[nr], result)
                grads[nr] = result
    return grads


def _check_hook_result(fn, grad, result):
    """A tensor hook may change the gradient's values, never its shape or dtype (torch's rule)."""
    name = getattr(fn, "__name__", type(fn).__name__)
    if result.shape != grad.shape:
        raise RuntimeError(
            f"hook '{name}' has changed the size of value: it received a gradient of shape "
            f"{list(grad.shape)} and returned one of shape {list(result.shape)}; a hook must "
            "return a gradient of the same shape (or None to keep it)")
    if result.dtype is not grad.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {grad._type_name()} got "
            f"{result._type_name()}); return a gradient of dtype {grad.dtype}, e.g. "
            f"result.to({grad.dtype})")


def _one_per_input(node, grad_inputs):
    """Backward's answer when its length is not one gradient per forward input: torch
    allows extra trailing Nones (for non-tensor arguments); anything else is an error."""
    n_inputs = len(node._edges)
    if len(grad_inputs) > n_inputs and all(g is None for g in grad_inputs[n_inputs:]):
        return grad_inputs[:n_inputs]
    _raise_gradient_count(node, n_inputs, grad_inputs)


def _raise_gradient_count(node, n_inputs, grad_inputs):
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients "
        f"(expected {n_inputs}, got {len(grad_inputs)}): backward must return one "
        "gradient (or None) per input of forward")


def _zeros_where_missing(node, grads):
    """Zeros (of the output's shape and dtype, on the gradients' device) for each output
    of ``node`` that received no gradient."""
    like = next(g for g in grads if g is not None)
    return [g if g is not None or meta is None
            else like._wrap(np.zeros_like(like._data, dtype=meta[1].np, shape=meta[0]))
            for g, meta in zip(grads, node._output_meta)]


# ---------------------------------------------------------------- the gradients to start from
def make_grads(outputs, grad_outputs):
    """The gradients backward starts from: ``grad_outputs``, checked, or for a one-element
    output (a loss) the gradient 1 -- dLoss/dLoss."""
    grads = list(grad_outputs or [None] * len(outputs))
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            _raise_not_in_graph(i)
        if grads[i] is not None:
            grads[i] = _checked_gradient(i, grads[i], out)
        elif out._data.size == 1:
            grads[i] = out._wrap(np.ones_like(out._data))  # 1, of out's shape, dtype and device
        else:
            _raise_not_scalar(out)
    return grads


def _checked_gradient(i, g, out):
    """A gradient passed to backward: a tensor of the output's shape, cast to its dtype."""
    if not _is_tensor_like(g):
        raise TypeError(f"gradients can be either Tensors or None, but got "
                        f"{type(g).__name__}: wrap it, e.g. learntorch.tensor(...)")
    if g.shape != out.shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
            f"output[{i}] has a shape of {list(out.shape)}.")
    return g if g.dtype is out.dtype else g.to(out.dtype)  # torch casts any dtype


def _raise_not_in_graph(i):
    raise RuntimeError(
        f"element {i} of tensors does not require grad and does not have a grad_fn: it "
        "was not computed from a tensor with requires_grad=True (or it was computed "
        "under no_grad). Set requires_grad=True on the inputs you want gradients for.")


def _raise_not_scalar(out):
    raise RuntimeError(
        f"grad can be implicitly created only for scalar outputs; this output has "
        f"shape {list(out.shape)}. Call .sum() or .mean() first, or pass "
        f"gradient=<tensor of shape {list(out.shape)}> to backward().")


def backward_inputs(inputs):
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


def _as_tuple(x):
    """One tensor, a list or a tuple of them (or None), as a tuple (or None)."""
    return x if x is None else (x,) if hasattr(x, "_grad_fn") else tuple(x)


def _is_tensor_like(x):
    return hasattr(x, "_grad_fn")
