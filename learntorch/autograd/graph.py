"""Looking at the recorded graph: the public introspection API.

Widgets and chapters read the engine through these functions only:

* ``walk(tensor)`` -- every node behind a tensor, in the order backward runs
  them, each described by a ``NodeInfo`` (op name, input/output shapes, saved
  tensors, edges);
* ``backward_steps(tensor)`` -- the engine's own backward, one node per
  ``next()``; running it to the end is exactly ``tensor.backward()``.
"""
from .engine import backward_steps as _engine_steps
from .engine import BackwardStep  # noqa: F401  (re-exported)
from .function import AccumulateGrad


class NodeInfo:
    """A readable description of one graph node.

    ``id`` is stable within one walk (0 = the node that produced the tensor);
    ``inputs`` lists ``(node id or None, output index)`` per input, like
    ``next_functions``; for AccumulateGrad nodes ``variable`` is the leaf.
    """

    __slots__ = ("id", "node", "name", "inputs", "input_shapes", "output_shapes", "saved",
                 "variable", "is_leaf")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return (f"NodeInfo(id={self.id}, name={self.name!r}, inputs={self.inputs}, "
                f"output_shapes={self.output_shapes})")


def _order(root):
    """Nodes reachable from ``root`` in the order the engine processes them."""
    import heapq
    deps, seen, stack = {}, {root}, [root]
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    order, ready = [], [(-root._sequence_nr, id(root), root)]
    while ready:
        _, _, n = heapq.heappop(ready)
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
    return order


def walk(tensor):
    """Describe every node behind ``tensor`` (empty for a leaf), in backward order."""
    if tensor.grad_fn is None:
        if tensor.requires_grad:
            node = tensor._edge()[0]
            return [NodeInfo(id=0, node=node, name=node.name(), inputs=[], input_shapes=[],
                             output_shapes=[tuple(tensor.shape)], saved=[], variable=tensor,
                             is_leaf=True)]
        return []
    order = _order(tensor.grad_fn)
    ids = {n: i for i, n in enumerate(order)}
    infos = []
    for n in order:
        if isinstance(n, AccumulateGrad):
            infos.append(NodeInfo(id=ids[n], node=n, name=n.name(), inputs=[], input_shapes=[],
                                  output_shapes=[tuple(n.variable.shape)], saved=[],
                                  variable=n.variable, is_leaf=True))
            continue
        saved = [] if n._saved is None else [
            (tuple(t.shape), t.dtype) if t is not None else None for t in n._saved]
        infos.append(NodeInfo(
            id=ids[n], node=n, name=n.name(),
            inputs=[(ids.get(nxt) if nxt is not None else None, nr)
                    for nxt, nr in n.next_functions],
            input_shapes=[_edge_shape(nxt, nr) for nxt, nr in n.next_functions],
            output_shapes=[tuple(m[0]) if m is not None else None for m in n._output_meta],
            saved=saved, variable=None, is_leaf=False))
    return infos


def _edge_shape(node, nr):
    if node is None:
        return None
    if isinstance(node, AccumulateGrad):
        return tuple(node.variable.shape)
    meta = node._output_meta[nr]
    return tuple(meta[0]) if meta is not None else None


def saved_tensors(node):
    """The tensors a node saved for backward (without consuming or checking them)."""
    if isinstance(node, AccumulateGrad) or node._saved is None:
        return ()
    return tuple(t for t in node._saved if t is not None)


def backward_steps(tensor, gradient=None, retain_graph=False, create_graph=False):
    """The engine's backward from ``tensor``, one ``BackwardStep`` per ``next()``."""
    from . import _make_grads
    grads = _make_grads((tensor,), None if gradient is None else (gradient,))
    return _engine_steps((tensor,), grads, retain_graph, create_graph)
