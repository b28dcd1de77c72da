"""The raw-array backward engine: ``engine.backward_steps`` for plain ``backward()``, on arrays.

Replaces: ``learntorch.autograd.engine.run_backward`` when ``create_graph=False`` and the
active backend is one this tier knows (else it calls the reference ``run_backward``).
Same walk, same order, same gradients (``tests/tiers/`` proves it); what differs:

* gradients travel between nodes as numpy (or device) arrays, not Tensors.  A node
  whose Function has an entry in ``array_backward.ARRAY_BACKWARD`` computes its
  derivative on them directly; any other node gets Tensors built around them and
  runs its reference ``backward`` (whose ops then run unrecorded).  On small tensors
  that bookkeeping *is* the cost of backward;
* numpy's float warnings are switched off once for the whole run;
* a chain's next node runs without the heap when it is the only one ready;
* a leaf's first ``.grad`` adopts a gradient array that nothing else holds instead of
  copying it, as torch "steals" an unshared gradient.  "Nothing else holds" is asked of
  CPython's reference count, calibrated on the running interpreter (``_SOLE_HOLDER``),
  and the engine drops its own references to a gradient once it has sent it on.  Never
  a gradient that another leaf, a retained non-leaf grad, a hook, the caller or a
  learner's Function still holds, nor a strided one (tests/autograd/test_autograd_grad_adoption.py).
"""
import heapq
import sys

from numpy import ndarray

from .. import backends
from .._tensor import Tensor
from ..autograd import engine as reference
from ..autograd import grad_mode
from ..autograd.function import (AccumulateGrad, _FREED, accumulate_grad,
                                 run_post_accumulate_hooks)
from ..backends.reference import as_array
from .apply import KNOWN_BACKENDS
from .array_backward import ARRAY_BACKWARD
from .float_errors import ignore_float_errors, restore_float_errors

_wrap = Tensor._wrap


def run_backward(roots, grad_roots, retain_graph, create_graph, inputs=None):
    """``engine.run_backward`` on arrays (see the module docstring)."""
    if create_graph or backends.current.__class__ not in KNOWN_BACKENDS:
        return reference_run_backward(roots, grad_roots, retain_graph, create_graph, inputs)
    root_edges = [r._edge() for r in roots]
    buffer = {}
    for (node, nr), g in zip(root_edges, grad_roots):
        slots = buffer.setdefault(node, [None] * len(node._output_meta))
        slots[nr] = g._data if slots[nr] is None else slots[nr] + g._data
    dependencies = _count_dependencies([e[0] for e in root_edges])
    if inputs is not None:
        targets = reference._Targets(inputs, dependencies, True)
        capture, keep = targets.edges, targets.needed
    else:
        capture = keep = None

    ready = []
    for node in {e[0] for e in root_edges}:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, id(node), node))

    state = grad_mode._state
    outer_mode = state.enabled
    heappop, heappush = heapq.heappop, heapq.heappush
    add = backends.current.add
    quiet_run = ignore_float_errors()
    follow = None  # the next node to run when it is the only one ready (a chain): no heap
    try:
        state.enabled = False
        while follow is not None or ready:
            if follow is not None:
                node, follow = follow, None
            else:
                node = heappop(ready)[2]
            grad_outputs = buffer.pop(node, None)
            if grad_outputs is None:
                grad_outputs = [None] * len(node._output_meta)
            if node._tensor_pre_hooks:
                grad_outputs = _run_prehooks(node, grad_outputs)
            if capture is not None:
                for nr, g in enumerate(grad_outputs):
                    wanted = capture.get((node, nr), ())
                    if wanted and g is not None and node.__class__ is not AccumulateGrad:
                        # backward(inputs=[h]) with a non-leaf h: h.grad accumulates, as a leaf's
                        accumulate_grad(inputs[wanted[0]], _wrap(g), False)
            if node.__class__ is AccumulateGrad:
                # (asked before ``g`` below holds the array too)
                adoptable = node.variable._grad is None and _only_held_by(grad_outputs)
                g = grad_outputs[0]
                if g is not None and (capture is None or (node, 0) in capture):
                    variable = node.variable
                    if adoptable and _adoptable_as_grad(g, variable._data):
                        variable._grad = _wrap(g)  # nobody else has it: no copy needed
                        if variable._post_accumulate_grad_hooks:
                            run_post_accumulate_hooks(variable)
                    else:
                        accumulate_grad(variable, _wrap(g), False)
                continue
            edges = node._edges
            if len(grad_outputs) == 1:  # (most nodes have one output)
                missing = 0 if grad_outputs[0] is not None else 1
            else:
                missing = 0
                for g in grad_outputs:
                    if g is None:
                        missing += 1
            if (keep is not None and node not in keep) or missing == len(grad_outputs):
                # nothing to send back from here, but the nodes below still wait for this one
                grad_inputs, metas = (None,) * len(edges), edges
            else:
                if missing and node.materialize_grads:
                    like = next(g for g in grad_outputs if g is not None)
                    grad_outputs = [g if g is not None or m is None else _zeros(m, like)
                                    for g, m in zip(grad_outputs, node._output_meta)]
                grad_inputs = apply_raw(node, grad_outputs)
                if not retain_graph and node._saved is not None:
                    node._saved = _FREED  # node.release(), without the call
                n = len(grad_inputs)
                if n != len(edges) and not (n == len(edges) + 1 and grad_inputs[-1] is None):
                    grad_inputs = reference._one_per_input(node, grad_inputs)
                metas = node._input_meta
            i = -1
            for (nxt, nr), g, meta in zip(edges, grad_inputs, metas):
                i += 1
                if nxt is None:
                    continue
                if g is not None and meta is not None:
                    # check the gradient against its input, summing broadcast dims (_fitted)
                    if g.__class__ is not ndarray or g.shape != meta[0] or g.dtype is not meta[1].np:
                        g = _fitted(node, i, g, meta)
                    slots = buffer.get(nxt)
                    if slots is None:
                        slots = buffer[nxt] = [None] * len(nxt._output_meta)
                    old = slots[nr]
                    if old is None:
                        slots[nr] = g
                    else:  # a tensor used twice: its gradients from both uses add up
                        slots[nr] = add(old, g)
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
            grad_inputs = g = old = None
    finally:
        state.enabled = outer_mode
        restore_float_errors(quiet_run)


reference_run_backward = reference.run_backward  # what this replaces, for the cases it declines


def _count_dependencies(roots):
    """``engine._count_dependencies`` (how many edges point into each node reachable from
    ``roots``), with one dictionary lookup per edge instead of three."""
    dependencies = dict.fromkeys(roots, 0)
    stack = list(roots)
    pop, push, get = stack.pop, stack.append, dependencies.get
    while stack:
        for nxt, _ in pop()._edges:
            if nxt is not None:
                count = get(nxt)
                if count is None:
                    push(nxt)  # first time seen: walk on from it too
                    dependencies[nxt] = 1
                else:
                    dependencies[nxt] = count + 1
    return dependencies


def apply_raw(node, grad_arrays):
    """``node``'s backward on gradient arrays: its ``ARRAY_BACKWARD`` entry when the
    Function has one, else its reference ``backward`` on Tensors built around them (the
    results stay Tensors: ``_fitted`` takes their arrays).  The profiler times this."""
    backward_arrays = ARRAY_BACKWARD.get(node._function)
    if backward_arrays is not None:
        grads = backward_arrays(node, *grad_arrays)
        return grads if grads.__class__ is tuple else (grads,)
    return node.apply([None if g is None else _wrap(g) for g in grad_arrays])


def wrap_apply_raw(wrapper):
    """Make the engine call ``wrapper(apply_raw)`` for every node (the profiler times nodes
    so); returns a function that puts the plain ``apply_raw`` back."""
    global apply_raw
    original = apply_raw
    apply_raw = wrapper(original)

    def restore():
        global apply_raw
        apply_raw = original
    return restore


def _zeros(meta, like):
    import numpy as np
    shape, dtype = meta
    return np.zeros_like(like, dtype=dtype.np, shape=shape)


def _run_prehooks(node, grad_arrays):
    """Hooks see (and return) Tensors: wrap the arrays, run the reference hooks, unwrap."""
    grads = [None if g is None else _wrap(g) for g in grad_arrays]
    grads = reference._run_prehooks(node, grads)
    return [None if g is None else g._data for g in grads]


def _fitted(node, i, g, meta):
    """``reference._fit`` for a gradient that may be an array, a Tensor (from a reference
    ``backward``) or a numpy scalar (numpy's 0-d results); the answer is an array."""
    if g.__class__ is not ndarray:
        g = g._data if isinstance(g, Tensor) else as_array(g)
    if g.shape == meta[0] and g.dtype is meta[1].np:
        return g
    return reference._fit(node, i, _wrap(g), meta)._data


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
    """A gradient array a leaf may keep as its ``.grad`` without copying: it owns its
    memory, can be written, and has the leaf's layout (C order, as the copy would be)."""
    return (g.__class__ is ndarray and g.base is None and g.flags.owndata
            and g.flags.writeable and g.flags.c_contiguous and leaf_data.flags.c_contiguous)
