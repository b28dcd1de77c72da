"""``learntorch.fx``: capture what a model computes as a graph of the engine's ops.

    graph = learntorch.fx.capture(model, example_input)
    print(graph)                 # Python-like code, one line per op, shapes beside it
    graph.print_tabular()        # the same as a table
    graph(other_input)           # run it again (same shapes and dtypes)

``capture`` runs the model once on real example inputs and records every
``Function.apply`` call (see ``_capture.py`` for how, and how this differs from
``torch.fx.symbolic_trace``).  The IR -- ``Graph``, ``Node``, ``TensorMeta``, in
torch.fx's vocabulary -- is what ``learntorch.onnx.export`` translates into an
ONNX model, and what a compiler reads to fuse elementwise chains (each node
knows its ``kind``: ``op_kinds.py``).  Everything here is learntorch's own:
torch.fx has ``Graph`` and ``Node`` too, but symbolic ones, with other methods.
"""
from ._capture import CaptureError, capture
from .graph import Graph, Node, TensorMeta
from . import interpreter, op_kinds

__all__ = ["capture", "CaptureError", "Graph", "Node", "TensorMeta"]
