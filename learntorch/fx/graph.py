"""The graph IR: a ``Graph`` is a list of ``Node``s in the order they ran.

The vocabulary is torch.fx's, so it reads the same in both libraries:

* ``placeholder`` -- an input of the captured function (``target``: its name);
* ``get_attr``    -- a tensor the function used but did not receive: a parameter or
  buffer of the module (``target``: its path, ``"0.weight"``) or a constant made
  while it ran (``"_tensor_constant0"``); ``Graph.attributes`` holds the tensors;
* ``call_function`` -- one op: ``target`` is the ``Function`` class that ran
  (``Linear``, ``Relu``, ``Convolution``), ``args`` what ``apply`` received, with
  every tensor replaced by the node that made it and every other argument (dims,
  a ``Geometry``, ``eps``) kept as the constant it was; an op with several
  outputs (``MaxPool2d``: values and indices) is followed by ``operator.getitem``
  nodes that pick one;
* ``output``      -- ``args[0]`` is what the function returned, nodes in place of tensors.

Every node that makes a tensor knows its ``TensorMeta`` (shape, dtype, device), the
module that was running (``module_path``, ``"3"`` or ``"features.conv1"``; ``""``
for the top) and its ``kind`` (``elementwise``, ``reduction``, ``matmul``, ``conv``,
...: ``op_kinds.py``), which is what an exporter or a compiler looks at first.
"""
import operator
import re

import numpy as np

from .interpreter import run
from .node import Node, TensorMeta, map_nodes  # noqa: F401  (re-exported)


class Graph:
    """The nodes of one captured call, in execution order, and the tensors they read."""

    def __init__(self):
        self.nodes = []
        self.attributes = {}   # get_attr target -> the tensor (the module's own, not a copy)
        self._names = set()
        self.meta = {}

    # ---- building -------------------------------------------------------------------
    def create_node(self, op, target, args=(), name=None, meta=None):
        node = Node(self, op, self._unique(name or _default_name(op, target)), target, args,
                    meta)
        self.nodes.append(node)
        return node

    def _unique(self, name):
        name = _NOT_WORD.sub("_", name)
        if not name or name[0].isdigit():
            name = "_" + name
        return unique_name(name, self._names)

    # ---- reading --------------------------------------------------------------------
    @property
    def placeholders(self):
        return [n for n in self.nodes if n.op == "placeholder"]

    @property
    def output_node(self):
        for node in reversed(self.nodes):
            if node.op == "output":
                return node
        raise RuntimeError("this graph has no output node (it is still being built)")

    @property
    def outputs(self):
        """The output nodes, flattened from the returned structure in order."""
        found = []
        map_nodes(self.output_node.args[0], found.append)
        return found

    def ops(self):
        """The ``call_function`` nodes (the computation), in order."""
        return [n for n in self.nodes if n.op == "call_function"]

    def eliminate_dead_code(self):
        """Remove the nodes whose results nothing reads (torch.fx's name); returns ``self``.

        A captured graph keeps every op that ran, used or not, so that it shows the
        whole call; an exporter or a compiler removes what the outputs do not need.
        """
        for node in reversed(list(self.nodes)):
            if node.op not in ("output", "placeholder") and not node.users and not node.is_impure():
                self.nodes.remove(node)
                self._names.discard(node.name)
                for used in node.all_input_nodes:
                    used.users.pop(node, None)
        needed = {n.target for n in self.nodes if n.op == "get_attr"}
        self.attributes = {k: v for k, v in self.attributes.items() if k in needed}
        return self

    def __call__(self, *inputs):
        """Run the graph on new inputs (``interpreter.run``): shapes and dtypes must match."""
        return run(self, *inputs)

    # ---- printing -------------------------------------------------------------------
    @property
    def code(self):
        """The graph as Python: one line per node, its result's shape and module beside it."""
        return python_code(self)

    def __str__(self):
        return self.code

    def __repr__(self):
        n_ops = len(self.ops())
        return (f"<learntorch.fx.Graph: {len(self.placeholders)} inputs, {n_ops} ops, "
                f"{len(self.attributes)} attributes>")

    def tabular(self):
        """A table of the nodes: opcode, name, target, args, shape and module (torch.fx's
        ``print_tabular`` columns, plus the two that a captured graph knows)."""
        rows = [("opcode", "name", "target", "args", "result", "module")]
        for n in self.nodes:
            target = ("getitem" if n.target is operator.getitem
                      else getattr(n.target, "__name__", str(n.target)))
            rows.append((n.op, n.name, target, _short(_format(n.args)), _meta_text(n),
                         n.module_path if n.meta.get("module_type") else ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def print_tabular(self):
        print(self.tabular())


def unique_name(hint, taken):
    """``hint``, or ``hint_1``, ``hint_2``, ... whichever is not in ``taken`` yet; added to it."""
    name, i = hint, 0
    while name in taken:
        i += 1
        name = f"{hint}_{i}"
    taken.add(name)
    return name


_NOT_WORD = re.compile(r"\W")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # MatMul -> Mat_Mul


def _default_name(op, target):
    if op == "call_function":
        if target is operator.getitem:
            return "getitem"
        return _CAMEL.sub("_", target.__name__).lower().strip("_")
    return str(target)


def _meta_text(node):
    meta = node.tensor_meta
    if meta is None:
        return ""
    if isinstance(meta, tuple) and not isinstance(meta, TensorMeta):
        return "(" + ", ".join(str(m) if m is not None else "-" for m in meta) + ")"
    return str(meta)


def _short(text, width=60):
    return text if len(text) <= width else text[:width - 3] + "..."


def _format(value):
    """A constant or node reference as a reader would write it in Python."""
    if isinstance(value, Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(_format(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_format(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return f"array({value.tolist()})"
        return f"array(shape={list(value.shape)}, dtype={value.dtype})"
    if isinstance(value, type):
        return value.__name__
    if type(value).__name__ == "dtype" and hasattr(value, "is_floating_point"):
        return f"learntorch.{value.name}"
    return repr(value)


def python_code(graph):
    """``def forward(self, x): ...`` with one statement per node (see ``Graph.code``)."""
    params = [n.name for n in graph.placeholders]
    lines = [f"def forward(self{''.join(', ' + p for p in params)}):"]
    for node in graph.placeholders:
        lines.append(f"    # {node.name}: {_meta_text(node)}")
    statements = []
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            statements.append((f"return {_format(node.args[0])}", ""))
            continue
        if node.op == "get_attr":
            kind = node.meta.get("attribute", "constant")
            getter = {"parameter": "get_parameter", "buffer": "get_buffer"}.get(kind)
            value = f'self.{getter}("{node.target}")' if getter else f"self.{node.target}"
        elif node.target is operator.getitem:
            value = f"{_format(node.args[0])}[{node.args[1]}]"
        elif isinstance(node.target, type):
            value = f"{node.target.__name__}.apply({', '.join(_format(a) for a in node.args)})"
        else:  # a plain function: gt, detach, python_value (see _python.py)
            value = f"{node.target.__name__}({', '.join(_format(a) for a in node.args)})"
        comment = _meta_text(node)
        if node.meta.get("where") is not None:
            where = node.meta["where"]
            comment = (comment + "  " if comment else "") + f"graph break: {where.line or where}"
        if node.meta.get("module_type") and node.op == "call_function":
            comment += f"  {node.module_path or '<top>'}: {node.meta['module_type']}"
        statements.append((f"{node.name} = {value}", comment))
    width = min(max((len(s) for s, _ in statements), default=0), 72)
    for statement, comment in statements:
        line = f"    {statement}"
        if comment:
            line = f"{line.ljust(width + 4)}  # {comment}"
        lines.append(line)
    return "\n".join(lines)

