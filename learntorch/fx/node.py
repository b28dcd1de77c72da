"""A graph's steps: ``Node`` (one op, input or output), ``TensorMeta`` (what a tensor was when
captured) and ``map_nodes`` (apply a function to every node inside nested arguments)."""
import operator
from typing import NamedTuple

from .op_kinds import kind_of


class TensorMeta(NamedTuple):
    """What a tensor was when the graph was captured: its shape, dtype and device."""

    shape: tuple
    dtype: object
    device: str = "cpu"

    @classmethod
    def of(cls, t):
        return cls(tuple(t.shape), t.dtype, str(t.device))

    def __str__(self):
        where = "" if self.device == "cpu" else f" on {self.device}"
        return f"{self.dtype.name}[{', '.join(map(str, self.shape))}]{where}"


class Node:
    """One step of a graph (see the module docstring for the four kinds of step)."""

    def __init__(self, graph, op, name, target, args=(), meta=None):
        self.graph, self.op, self.name, self.target = graph, op, name, target
        self.args = tuple(args)
        self.meta = dict(meta or {})
        self.users = {}  # node -> None: the nodes that read this one, in order (a dict as a set)
        for node in self.all_input_nodes:
            node.users[self] = None

    @property
    def all_input_nodes(self):
        """The nodes among ``args`` (however deeply nested), each once, in order."""
        found = {}
        map_nodes(self.args, lambda n: found.setdefault(n, None))
        return list(found)

    @property
    def kind(self):
        """``"elementwise"``, ``"matmul"``, ... for an op; ``"getitem"`` for an output picker;
        the op itself (``"placeholder"``, ``"get_attr"``, ``"output"``) otherwise."""
        if self.op != "call_function":
            return self.op
        if self.target is operator.getitem:
            return "getitem"
        return kind_of(self.target)

    def is_impure(self):
        """True when the node does something besides making its result (torch.fx's name):
        Python reading a value or printing, or an op writing into an input (in place, or
        batch norm's running statistics).
        Dead-code elimination keeps such nodes even when nothing reads their result."""
        return (self.kind == "python" or bool(self.meta.get("inplace"))
                or bool(self.meta.get("writes")))

    @property
    def tensor_meta(self):
        """``TensorMeta`` of the tensor this node makes; a tuple for a multi-output op."""
        return self.meta.get("tensor_meta")

    @property
    def op_name(self):
        """The op as a reader names it: ``Linear``, ``getitem``, ``gt``, or the node's op."""
        if self.op != "call_function":
            return self.op
        return "getitem" if self.target is operator.getitem else self.target.__name__

    @property
    def module_path(self):
        return self.meta.get("module_path", "")

    def where(self):
        """``"module '3' (Linear)"``: where in the model the op ran, for messages."""
        path, kind = self.module_path, self.meta.get("module_type")
        if not kind:
            return "the captured function"
        return f"module '{path}' ({kind})" if path else f"the top module ({kind})"

    def __repr__(self):
        return self.name


def map_nodes(value, fn):
    """``value`` with ``fn(node)`` in place of every Node, through tuples, lists and dicts."""
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_nodes(v, fn) for v in value)
    if isinstance(value, list):
        return [map_nodes(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_nodes(v, fn) for k, v in value.items()}
    return value
