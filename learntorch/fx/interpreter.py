"""Run a captured graph again: each node's ``Function.apply`` on the new inputs.

The graph records concrete calls, so it is specialised to the shapes and dtypes
of the example inputs (a ``view`` recorded the size (64, 64), a pooling window
its image size).  Running it checks those first -- the *guards* a compiler keeps
too -- and refuses other inputs with a message saying to capture again, instead
of computing something wrong.  The ops are the engine's own, called as the model
called them, so the results are the model's, bit for bit, and autograd records
them as usual.
"""
import operator

from .node import TensorMeta, map_nodes


def check_inputs(graph, inputs):
    """Raise a clear error unless ``inputs`` match the placeholders' shapes and dtypes."""
    placeholders = graph.placeholders
    if len(inputs) != len(placeholders):
        raise TypeError(f"this graph takes {len(placeholders)} inputs "
                        f"({', '.join(p.name for p in placeholders)}), got {len(inputs)}")
    for node, value in zip(placeholders, inputs):
        expected = node.tensor_meta
        if expected is None:  # a non-tensor input: it was captured as a constant
            if value != node.meta.get("value"):
                raise ValueError(f"input {node.name!r} was {node.meta.get('value')!r} when the "
                                 f"graph was captured and is {value!r} now: the graph computes "
                                 "with the captured value; capture again with this one")
            continue
        got = TensorMeta.of(value) if hasattr(value, "shape") and hasattr(value, "dtype") else None
        if got is None or got.shape != expected.shape or got.dtype is not expected.dtype:
            what = str(got) if got is not None else type(value).__name__
            raise RuntimeError(
                f"input {node.name!r} is {what}, but this graph was captured for {expected}: a "
                "captured graph is specialised to the shapes and dtypes of its example "
                "inputs (its ops recorded them). Capture again with an input like this one")


def call(target, args):
    """One ``call_function`` node's work: ``target.apply(*args)`` for a Function, the
    element for ``operator.getitem``, ``target(*args)`` for a plain function (``gt``,
    ``python_value``: see ``_python.py``)."""
    if target is operator.getitem:
        return args[0][args[1]]
    if isinstance(target, type):
        return target.apply(*args)
    return target(*args)


def run(graph, *inputs):
    """The graph's outputs for ``inputs``, in the structure the captured function returned."""
    check_inputs(graph, inputs)
    values = {}
    given = iter(inputs)
    for node in graph.nodes:
        if node.op == "placeholder":
            values[node] = next(given)
        elif node.op == "get_attr":
            values[node] = graph.attributes[node.target]
        elif node.op == "call_function":
            args = map_nodes(node.args, values.__getitem__)
            values[node] = call(node.target, args)
        elif node.op == "output":
            return map_nodes(node.args[0], values.__getitem__)
    raise RuntimeError("this graph has no output node")
