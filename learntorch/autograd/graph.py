"""Looking at the recorded graph: the public introspection API.

Widgets and chapters read the engine through these functions only (plus the
torch-compatible ``tensor.grad_fn``, ``node.next_functions``, ``node.name()``
and ``AccumulateGrad.variable``):

* ``walk(tensor)`` -- every node behind a tensor, in the order backward runs
  them, each described by a ``NodeInfo``::

      >>> x = learntorch.tensor([1., 2.], requires_grad=True)
      >>> [(n.name, n.inputs) for n in walk((x * x).exp().sum())]
      [('SumBackward0', [(1, 0)]), ('ExpBackward0', [(2, 0)]),
       ('MulBackward0', [(3, 0), (3, 0)]), ('AccumulateGrad', [])]

* ``backward_steps(tensor)`` -- the engine's own backward, one node per
  ``next()``, each a ``BackwardStep`` (the gradients that arrived, what the
  node's backward returned, what was sent on after summing over broadcast
  dimensions, and for leaves the new ``.grad``).  Running it to the end is
  exactly ``tensor.backward()``: the same gradients end up in ``.grad``.
* ``saved_tensors(node)`` -- what a node saved for backward, without the
  version check that ``ctx.saved_tensors`` performs.
"""
import heapq

from .engine import backward_steps as _engine_steps, _count_dependencies, make_grads, backward_inputs
from .engine import BackwardStep  # noqa: F401  (re-exported: the type backward_steps yields)
from .function import AccumulateGrad


class NodeInfo:
    """A readable description of one graph node.

    * ``id`` -- stable within one walk (0 = the node that produced the tensor);
    * ``node`` -- the node itself (``grad_fn`` object or AccumulateGrad);
    * ``name`` -- torch's node name, e.g. ``"MulBackward0"`` or ``"AccumulateGrad"``;
    * ``inputs`` -- ``(node id or None, output index)`` per tensor input, like
      ``next_functions`` (None: that input needs no gradient);
    * ``input_shapes``/``output_shapes`` -- shapes (tuples) of inputs and outputs;
    * ``saved`` -- the tensors saved for backward (empty once backward freed them);
    * ``saved_shapes`` -- their shapes;
    * ``variable``/``is_leaf`` -- for AccumulateGrad nodes, the leaf tensor.
    """

    __slots__ = ("id", "node", "name", "inputs", "input_shapes", "output_shapes", "saved",
                 "saved_shapes", "variable", "is_leaf")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return (f"NodeInfo(id={self.id}, name={self.name!r}, inputs={self.inputs}, "
                f"output_shapes={self.output_shapes})")


def _order(root):
    """Nodes reachable from ``root`` in the order the engine runs them (latest created first)."""
    dependencies = _count_dependencies([root])
    order, ready = [], [(-root._sequence_nr, id(root), root)]
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            dependencies[nxt] -= 1
            if dependencies[nxt] == 0:
                heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
    return order


def _short_name(node):
    return node.name().rsplit("::", 1)[-1]  # torch::autograd::AccumulateGrad -> AccumulateGrad


def _leaf_info(node_id, node):
    return NodeInfo(id=node_id, node=node, name=_short_name(node), inputs=[], input_shapes=[],
                    output_shapes=[tuple(node.variable.shape)], saved=(), saved_shapes=[],
                    variable=node.variable, is_leaf=True)


def walk(tensor):
    """Describe every node behind ``tensor``, in backward order.

    A leaf that requires grad gives its single AccumulateGrad node; a tensor
    outside autograd gives an empty list.
    """
    if tensor.grad_fn is None:
        return [_leaf_info(0, tensor._edge()[0])] if tensor.requires_grad else []
    order = _order(tensor.grad_fn)
    ids = {n: i for i, n in enumerate(order)}
    infos = []
    for n in order:
        if isinstance(n, AccumulateGrad):
            infos.append(_leaf_info(ids[n], n))
            continue
        saved = saved_tensors(n)
        infos.append(NodeInfo(
            id=ids[n], node=n, name=_short_name(n),
            inputs=[(ids.get(nxt) if nxt is not None else None, nr)
                    for nxt, nr in n.next_functions],
            input_shapes=[_edge_shape(nxt, nr) for nxt, nr in n.next_functions],
            output_shapes=[tuple(m[0]) if m is not None else None for m in n._output_meta],
            saved=saved, saved_shapes=[tuple(t.shape) for t in saved],
            variable=None, is_leaf=False))
    return infos


def _edge_shape(node, nr):
    if node is None:
        return None
    if isinstance(node, AccumulateGrad):
        return tuple(node.variable.shape)
    meta = node._output_meta[nr]
    return tuple(meta[0]) if meta is not None else None


def saved_tensors(node):
    """The tensors a node saved for backward (without consuming or version-checking them)."""
    if isinstance(node, AccumulateGrad) or node._saved is None:
        return ()
    saved = node._saved
    if not saved:  # nothing saved, or freed by a backward (retain_graph=False)
        return ()
    if node._saved_outputs is not None:  # a saved output, with its history (as torch shows it)
        saved = node._with_history(saved)
    return tuple(t for t in saved if t is not None)


def backward_steps(tensor, gradient=None, retain_graph=False, create_graph=False, inputs=None):
    """The engine's backward from ``tensor``, one ``BackwardStep`` per ``next()``.

    Arguments are those of ``tensor.backward``; exhausting the generator leaves
    exactly the ``.grad`` values that ``tensor.backward(...)`` leaves.
    """
    grads = make_grads((tensor,), None if gradient is None else (gradient,))
    return _engine_steps((tensor,), grads, retain_graph, create_graph, backward_inputs(inputs))
