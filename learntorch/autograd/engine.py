"""The backward engine: walk the recorded graph from the output to the leaves.

``backward_steps`` is the whole algorithm, written as a generator that yields
one ``BackwardStep`` per node, so a widget can run the engine's own backward
one node at a time.  ``Tensor.backward`` and ``autograd.grad`` simply run it
to the end.  The algorithm:

1. find every node reachable from the roots and count, for each node, how
   many edges point into it (iteratively: a 100,000-op chain has no
   recursion limit);
2. seed the roots with their output gradients;
3. repeatedly take a node whose gradients are all in (its count reached 0;
   the most recently created one first, as torch does), call its backward,
   **sum each returned gradient back to its input's shape** (broadcasting's
   backward, ``ops.broadcast.sum_to_shape``), and add it into the buffer of
   the node it flows to;
4. at a leaf's ``AccumulateGrad`` node, add the gradient into ``leaf.grad``.

When no graph of the gradient is wanted (``create_graph=False``) and nobody
looks at the steps (plain ``backward()`` and ``autograd.grad``), gradients
travel between nodes as plain arrays ("raw" mode): a Function that defines
``backward_arrays`` computes its derivative on them directly, and a Tensor is
built only where one is needed (a learner's ``backward``, a hook, ``.grad``).
On small tensors that bookkeeping *is* the cost of backward.
"""
import heapq
import sys

from numpy import ndarray

from . import grad_mode
from . import function as _function
from .function import AccumulateGrad, _FREED
from .. import backends
from .._float_errors import ignore_float_errors, restore_float_errors
from ..backends.reference import as_array
from ..ops.broadcast import sum_to_shape, is_expandable_to


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

    def __init__(self, index, node, grad_outputs, grad_inputs, reduced, leaf=None, leaf_grad=None):
        self.index, self.node = index, node
        self.grad_outputs, self.grad_inputs, self.reduced = grad_outputs, grad_inputs, reduced
        self.leaf, self.leaf_grad = leaf, leaf_grad

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


def _collect(roots):
    """Every node reachable from ``roots`` and how many edges enter each (iterative DFS).

    One dict does both jobs: a node is in it once it has been seen, with the number
    of edges found so far that point into it (roots start at 0).
    """
    dependencies = dict.fromkeys([n for n in roots if n is not None], 0)
    stack = list(dependencies)
    while stack:
        node = stack.pop()
        for nxt, _ in node._edges:
            if nxt is None:
                continue
            count = dependencies.get(nxt)
            if count is None:
                dependencies[nxt] = 1
                stack.append(nxt)
            else:
                dependencies[nxt] = count + 1
    return dependencies.keys(), dependencies


def _needed(nodes, targets):
    """Nodes whose backward must run to reach the ``targets`` edges (``inputs=``/``grad()``).

    A node must run when one of its edges is a target, or leads to a node that
    must run.  The node that produced a non-leaf input is *not* run: the input's
    gradient is what flows into it, so the graph below it is left untouched.
    """
    parents = {}
    needed = set()
    for n in nodes:
        for edge in n._edges:
            nxt = edge[0]
            if nxt is not None:
                parents.setdefault(nxt, []).append(n)
                if edge in targets:
                    needed.add(n)
    stack = list(needed)
    while stack:
        n = stack.pop()
        for p in parents.get(n, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


def _zeros_for(meta, raw=False):
    from .. import factories
    shape, dtype = meta
    zeros = factories.zeros(shape, dtype=dtype)
    return zeros._data if raw else zeros


def _accumulate(buffer, node, slot, size, grad):
    grads = buffer.get(node)
    if grads is None:
        grads = buffer[node] = [None] * size
    old = grads[slot]
    grads[slot] = grad if old is None else old + grad


def backward_steps(roots, grad_roots, retain_graph=False, create_graph=False, inputs=None,
                   accumulate=True, record_steps=True):
    """Run backward from ``roots`` (tensors) one node at a time, yielding a BackwardStep each.

    ``inputs``: when given, only gradients for these tensors are computed.
    ``accumulate=False`` (autograd.grad): leaves' ``.grad`` is not touched; the
    generator's return value is the list of gradients for ``inputs``.
    ``record_steps=False`` (plain ``backward()``): the same walk, without building
    a BackwardStep record per node that nobody would look at.
    """
    # raw mode: gradients are arrays inside the engine (see the module docstring)
    raw = not create_graph and not record_steps
    root_edges = [r._edge() for r in roots]
    buffer = {}
    for (node, nr), g in zip(root_edges, grad_roots):
        _accumulate(buffer, node, nr, _num_outputs(node), g._data if raw else g)

    nodes, dependencies = _collect([e[0] for e in root_edges])
    capture = None
    if inputs is not None:
        capture = {}
        for i, t in enumerate(inputs):
            capture.setdefault(t._edge(), []).append(i)
        keep = _needed(nodes, capture)
    else:
        keep = None
    captured = [None] * (len(inputs) if inputs is not None else 0)

    ready = []
    for node in {e[0] for e in root_edges}:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, id(node), node))

    state = grad_mode._state
    outer_mode = state.enabled
    index = 0
    heappop, heappush = heapq.heappop, heapq.heappush
    add = backends.current.add
    # inf/nan like torch, no numpy warnings: in raw mode once for the whole run (nothing is
    # yielded to the caller meanwhile), else around each backward
    quiet_run = ignore_float_errors() if raw else None
    follow = None  # the next node to run when it is the only one ready (a chain): no heap
    try:
        while follow is not None or ready:
            if follow is not None:
                node, follow = follow, None
            else:
                node = heappop(ready)[2]
            grad_outputs = buffer.pop(node, None)
            if grad_outputs is None:
                grad_outputs = [None] * _num_outputs(node)
            # backward formulas are recorded only when a graph of the gradient is wanted
            state.enabled = create_graph
            if node._tensor_pre_hooks:
                grad_outputs = _run_prehooks(node, grad_outputs, raw)
            if capture is not None:
                for nr, g in enumerate(grad_outputs):
                    wanted = capture.get((node, nr), ())
                    if wanted and raw and g is not None:
                        g = _wrap(g)
                    for i in wanted:
                        captured[i] = g
                    if wanted and accumulate and g is not None \
                            and node.__class__ is not AccumulateGrad:
                        # backward(inputs=[h]) with a non-leaf h: h.grad accumulates, as a leaf's
                        _accumulate_grad(inputs[wanted[0]], g, create_graph)
            if node.__class__ is AccumulateGrad:
                # (asked before ``g`` below holds the array too)
                adoptable = raw and node.variable._grad is None and _only_held_by(grad_outputs)
                g = grad_outputs[0]
                if g is not None and accumulate and (inputs is None or (node, 0) in capture):
                    if adoptable and _adoptable_as_grad(g, node.variable._data):
                        node.variable._grad = _wrap(g)  # nobody else has it: no copy needed
                    else:
                        _accumulate_grad(node.variable, _wrap(g) if raw else g, create_graph)
                    if node.variable._post_accumulate_grad_hooks:
                        _run_post_accumulate_hooks(node.variable)
                    if record_steps:
                        state.enabled = outer_mode
                        yield BackwardStep(index, node, grad_outputs, [], [], node.variable,
                                           node.variable._grad)
                        index += 1
                continue
            edges = node._edges
            missing = 0
            for g in grad_outputs:
                if g is None:
                    missing += 1
            if (keep is not None and node not in keep) or missing == len(grad_outputs):
                # nothing to send back from here, but the nodes below still wait for this one
                grad_inputs = (None,) * len(edges)
                reduced = list(grad_inputs)
            else:
                if missing and node.materialize_grads:
                    grad_outputs = [g if g is not None or m is None else _zeros_for(m, raw)
                                    for g, m in zip(grad_outputs, node._output_meta)]
                if raw:
                    grad_inputs = _apply_raw(node, grad_outputs)
                else:
                    quiet = ignore_float_errors()
                    try:
                        grad_inputs = node.apply(grad_outputs)
                    finally:
                        restore_float_errors(quiet)
                if not retain_graph and node._saved is not None:
                    node._saved = _FREED  # node.release(), without the call
                n = len(grad_inputs)
                if n != len(edges) and not (n == len(edges) + 1 and grad_inputs[-1] is None):
                    grad_inputs = _one_per_input(node, grad_inputs)  # (add's unused alpha: fine)
                # check each gradient against its input, summing broadcast dims (_fitted)
                reduced = []
                append = reduced.append
                if raw:
                    for g, meta in zip(grad_inputs, node._input_meta):
                        if g is None or meta is None:
                            append(None)
                        elif g.__class__ is ndarray and g.shape == meta[0] \
                                and g.dtype is meta[1].np:
                            append(g)
                        else:
                            append(_fitted(node, len(reduced), g, meta, raw))
                else:
                    for g, meta in zip(grad_inputs, node._input_meta):
                        if g is None or meta is None:
                            append(None)
                        elif g._data.shape == meta[0] and g._dtype is meta[1]:
                            append(g)
                        else:
                            append(_fitted(node, len(reduced), g, meta, raw))
                if record_steps:
                    state.enabled = outer_mode
                    yield BackwardStep(index, node, grad_outputs, grad_inputs, reduced)
                    index += 1
                    state.enabled = create_graph
            for (nxt, nr), g in zip(edges, reduced):
                if nxt is None:
                    continue
                if g is not None:
                    slots = buffer.get(nxt)
                    if slots is None:
                        slots = buffer[nxt] = [None] * len(nxt._output_meta)
                    old = slots[nr]
                    if old is None:
                        slots[nr] = g
                    else:  # a tensor used twice: its gradients from both uses add up
                        slots[nr] = add(old, g) if raw else old + g
                remaining = dependencies[nxt] - 1
                dependencies[nxt] = remaining
                if remaining == 0:
                    if follow is None and not ready:
                        follow = nxt  # the only node ready: run it next, no heap needed
                    else:
                        if follow is not None:
                            heappush(ready, (-follow._sequence_nr, id(follow), follow))
                            follow = None
                        heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
            # drop this node's references to the gradients it sent: a leaf's AccumulateGrad
            # adopts a gradient array only when its buffer is the one holder left
            grad_inputs = reduced = append = g = old = None
    finally:
        state.enabled = outer_mode
        if quiet_run is not None:
            restore_float_errors(quiet_run)
    return captured


def _wrap(array):
    return _function._Tensor._wrap(array)


def _apply_raw(node, grad_arrays):
    """``node``'s backward on gradient arrays: its ``backward_arrays`` when the Function has
    one, else its ``backward`` on Tensors built around them (the results stay Tensors:
    ``_validate`` takes their arrays)."""
    backward_arrays = node._function.backward_arrays
    if backward_arrays is not None:
        grads = backward_arrays(node, *grad_arrays)
        return grads if grads.__class__ is tuple else (grads,)
    return node.apply([None if g is None else _wrap(g) for g in grad_arrays])


def _num_outputs(node):
    return len(node._output_meta)


def _run_prehooks(node, grad_outputs, raw=False):
    """Run the hooks registered on ``node``'s outputs; hooks see (and return) Tensors."""
    hooks = node._tensor_pre_hooks
    if not hooks:
        return grad_outputs
    if raw:
        grad_outputs = [None if g is None else _wrap(g) for g in grad_outputs]
        grad_outputs = _run_prehooks(node, grad_outputs)
        return [None if g is None else g._data for g in grad_outputs]
    grad_outputs = list(grad_outputs)
    for nr, fns in hooks.items():
        if nr is None:  # node-level prehook sees all gradients
            for fn in list(fns):
                result = fn(tuple(grad_outputs))
                if result is not None:
                    grad_outputs = list(result)
            continue
        for fn in list(fns):
            if grad_outputs[nr] is None:
                break
            result = fn(grad_outputs[nr])
            if result is not None:
                _check_hook_result(fn, grad_outputs[nr], result)
                grad_outputs[nr] = result
    return grad_outputs


def _run_post_accumulate_hooks(tensor):
    """``hook(tensor)`` for each hook registered with ``register_post_accumulate_grad_hook``,
    once ``tensor.grad`` holds this backward's sum (torch's order: registration order)."""
    for hook in list(tensor._post_accumulate_grad_hooks):
        hook(tensor)


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
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients "
        f"(expected {n_inputs}, got {len(grad_inputs)}): backward must return one "
        "gradient (or None) per input of forward")


def _fitted(node, i, g, meta, raw):
    """Gradient ``g`` of input ``i`` when it does not already match the input exactly.

    ``raw``: ``g`` may be an array (``backward_arrays``), a Tensor (a ``backward``) or a
    numpy scalar (numpy's 0-d results), and the answer is an array.
    """
    if not raw:
        return _fit(node, i, g, meta)
    if g.__class__ is not ndarray:
        g = g._data if isinstance(g, _function._Tensor) else as_array(g)
    if g.shape == meta[0] and g.dtype is meta[1].np:
        return g
    return _fit(node, i, _wrap(g), meta)._data


def _fit(node, i, g, meta):
    """Make gradient ``g`` of input ``i`` match the input: sum broadcast dims, cast dtype."""
    shape, dtype = meta
    if g._data.shape != shape:
        if not is_expandable_to(shape, g._data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}")
        g = sum_to_shape(g, shape)  # broadcasting's backward: sum over the broadcast dims
    if g._dtype is not dtype:
        g = g.to(dtype)
    return g


def _references_of_first(items):
    return sys.getrefcount(items[0])


# what the count above is when ``items`` is the array's only holder, measured on this
# Python (the interpreter's own temporary references differ between versions)
_SOLE_HOLDER = _references_of_first([object()])


def _only_held_by(grad_outputs):
    """True when the gradient in ``grad_outputs[0]`` is referenced by that list alone: no
    other node's buffer, hook, retained ``.grad`` or view holds it (CPython's count)."""
    return _references_of_first(grad_outputs) == _SOLE_HOLDER


def _adoptable_as_grad(g, leaf_data):
    """A gradient array a leaf may keep as its ``.grad`` without copying, as torch steals
    a gradient no one else uses: it owns its memory, can be written, and has the leaf's
    layout (C order, the same strides); what ``_accumulate_grad`` would copy it into."""
    return (g.__class__ is ndarray and g.base is None and g.flags.owndata
            and g.flags.writeable and g.flags.c_contiguous and leaf_data.flags.c_contiguous)


def _accumulate_grad(tensor, g, create_graph):
    """``tensor.grad += g`` (the first time, ``tensor.grad = g``), as torch's AccumulateGrad.

    Tensor hooks have already run (they are pre-hooks of the node).  With
    ``create_graph`` the sum is recorded, so ``.grad`` itself can be differentiated.
    """
    if tensor._grad is None:
        if create_graph:
            tensor._grad = g
        elif tensor._data.flags.c_contiguous:
            # .grad gets its own contiguous memory, like the leaf (a plain array copy,
            # C order, on the gradient's device: nothing about this copy needs recording)
            tensor._grad = g._wrap(g._data.copy())
        else:
            tensor._grad = g.detach().clone()  # clone keeps torch's layout for strided leaves
    elif create_graph or tensor._grad._requires_grad:
        tensor._grad = tensor._grad + g
    else:
        tensor._grad._data += g._data
        tensor._grad._version_counter[0] += 1


def run_backward(roots, grad_roots, retain_graph, create_graph, inputs=None):
    """Run backward to the end, accumulating into leaves' ``.grad``."""
    for _ in backward_steps(roots, grad_roots, retain_graph, create_graph, inputs,
                            record_steps=False):
        pass
