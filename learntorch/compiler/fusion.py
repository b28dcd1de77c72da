"""Fusion: which ops of a captured graph become one kernel.

An elementwise op reads its inputs and writes its output once per element.  Two of
them in a row -- ``y = relu(x + b)`` -- need not put the intermediate ``x + b`` in memory
at all: one loop can compute ``relu(x[i] + b[i])``.  That is *fusion*, and this pass
decides where it applies.  It walks the graph in the order the ops ran and forms
**groups**:

1. an elementwise op with a scalar formula (``lowering.py``) joins the group of one of
   its inputs when that group makes tensors of the same shape and may still grow; it
   takes the most recent such group.  Otherwise it starts a group of its own;
2. a reduction (``sum``, ``mean``, ``amax``, ``amin``) whose input was made by a group
   may end that group: the kernel accumulates instead of storing, and the group is
   closed;
3. a group may not grow any more once an op *outside* it reads one of its values:
   the kernel runs where its last op was, and that reader runs before it;
4. a group of one elementwise op is dissolved: a kernel for one op saves nothing over
   the engine's own (which for ``exp`` or ``tanh`` is numpy's vectorized loop).

Everything else -- matmul, conv, softmax, views, indexing, the values Python reads --
is left to the engine's own ``Function``s and their backends: a fused kernel is only
a better loop, and BLAS already has the best matmul.

One *decomposition* comes first: ``Linear(x, W, b)`` is a matmul *and* a bias add.
When its result feeds an elementwise op, it becomes ``Linear(x, W, None)`` followed by
``Add(·, b)``, so that the bias add joins the kernel of what follows (``gelu(x @ W.T +
b)`` is then one matmul and one loop).  The engine adds the bias to the matmul's result
in float32, as the kernel does: the values are the same bit for bit.

``partition(graph)`` returns the groups; ``fuse(graph)`` returns a copy of the graph
rewritten by the decomposition, with its groups.  A custom pass (``options=
{"fusion": my_pass}`` of ``learntorch.compile``) replaces ``partition``: it receives the
rewritten graph and returns lists of nodes; ``check_groups`` says what is wrong with
them.
"""
from ..fx.graph import Graph
from ..fx.node import Node, TensorMeta, map_nodes
from .lowering import Emitter, NotLowerable, Value, lower, reduction


class Group:
    """The nodes of one future kernel: ``members`` (elementwise, in order) and maybe a final
    ``reduction`` node; ``inputs`` (the nodes they read from outside) and ``stored`` (the
    members whose values are needed outside) are filled by ``finish``."""

    def __init__(self, first):
        self.members = [first]
        self.reduction = None     # (node, kind, dims, keepdim)
        self.sealed = False       # an op outside reads it: it may not grow
        self.inputs, self.stored = [], []

    @property
    def shape(self):
        return self.members[0].tensor_meta.shape

    @property
    def nodes(self):
        return self.members + ([self.reduction[0]] if self.reduction else [])

    @property
    def last(self):
        return self.nodes[-1]

    def finish(self):
        """Fill ``inputs`` and ``stored`` from the members and their users."""
        inside = set(self.nodes)
        self.inputs = []
        for node in self.nodes:
            for a in node.all_input_nodes:
                if a not in inside and a not in self.inputs:
                    self.inputs.append(a)
        self.stored = [m for m in self.members if any(u not in inside for u in m.users)]
        return self

    def __repr__(self):
        return f"Group({', '.join(n.name for n in self.nodes)})"


def lowerable(node):
    """True when ``node`` can be one line of a kernel: an elementwise op of the engine with
    a scalar formula for these arguments, on the CPU, writing into nothing."""
    from .lowering import fusible
    if not fusible(node) or node.meta.get("inplace"):
        return False
    meta = node.tensor_meta
    if not isinstance(meta, TensorMeta) or meta.device != "cpu":
        return False
    args = []
    for a in node.args:
        if isinstance(a, Node):
            m = a.tensor_meta
            if not isinstance(m, TensorMeta) or m.device != "cpu":
                return False
            args.append(Value(a.name, m.dtype.np))
        else:
            args.append(a)
    try:
        lower(node, args, Emitter())
    except (NotLowerable, TypeError, ValueError, KeyError):
        return False
    return True


def partition(graph):
    """The groups of ``graph`` (rules 1-4 of the module docstring), in execution order."""
    groups = []
    group_of = {}
    for node in graph.nodes:
        if node.op != "call_function":
            _seal_readers(node, group_of, None)
            continue
        joined = None
        if lowerable(node):
            shape = node.tensor_meta.shape
            candidates = [group_of[a] for a in node.all_input_nodes
                          if a in group_of and not group_of[a].sealed
                          and group_of[a].reduction is None and group_of[a].shape == shape
                          and a in group_of[a].members]
            if candidates:
                joined = max(candidates, key=lambda g: graph.nodes.index(g.last))
                joined.members.append(node)
            else:
                joined = Group(node)
                groups.append(joined)
            group_of[node] = joined
        else:
            found = reduction(node)
            source = node.args[0] if node.args else None
            group = group_of.get(source) if isinstance(source, Node) else None
            if (found is not None and group is not None and not group.sealed
                    and group.reduction is None and source in group.members
                    and source.tensor_meta.shape == group.shape):
                group.reduction = (node, *found)
                group_of[node] = joined = group
        _seal_readers(node, group_of, joined)
    kept = [g for g in groups if len(g.nodes) >= MIN_OPS]
    return [g.finish() for g in kept]


#: rule 4: a group of fewer ops is dissolved.  The tests set it to 1 to put every op with a
#: scalar formula through a kernel of its own (tests/compiler/through_compile.py)
MIN_OPS = 2


def _seal_readers(node, group_of, own):
    """Every group that ``node`` reads from, other than its own, may not grow any more."""
    for a in node.all_input_nodes:
        group = group_of.get(a)
        if group is not None and group is not own:
            group.sealed = True


def check_groups(graph, groups):
    """Raise ValueError naming the first problem with ``groups`` (lists of nodes of
    ``graph``, e.g. from a learner's fusion pass); returns them as ``Group`` objects."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    seen = {}
    result = []
    for k, nodes in enumerate(groups):
        nodes = list(nodes)
        if len(nodes) < 2:
            raise ValueError(f"group {k} has {len(nodes)} node(s): a kernel is worth it from two "
                             "ops on (leave single ops to the engine)")
        for n in nodes:
            if not isinstance(n, Node) or order.get(n) is None:
                raise ValueError(f"group {k} holds {n!r}, which is not a node of this graph")
            if n in seen:
                raise ValueError(f"{n.name} is in groups {seen[n]} and {k}: a node belongs to "
                                 "one kernel at most")
            seen[n] = k
        nodes.sort(key=order.get)
        *body, last = nodes
        end = reduction(last) if not lowerable(last) else None
        members = nodes if end is None else body
        for n in members:
            if not lowerable(n):
                raise ValueError(f"group {k}: {n.name} ({n.op_name}, kind {n.kind!r}) cannot be "
                                 "a line of a kernel: only elementwise ops with a scalar formula "
                                 "(and a sum/mean/amax/amin at the end) can be fused")
            if n.tensor_meta.shape != members[0].tensor_meta.shape:
                raise ValueError(
                    f"group {k}: {n.name} makes shape {list(n.tensor_meta.shape)} but "
                    f"{members[0].name} makes {list(members[0].tensor_meta.shape)}: the ops of "
                    "one kernel share one loop, so they must make tensors of one shape")
        group = Group(members[0])
        group.members = members
        if end is not None:
            group.reduction = (last, *end)
        group.finish()
        first, last_position = order[nodes[0]], order[group.last]
        inside = set(group.nodes)
        for a in group.inputs:
            if order.get(a, -1) > last_position:
                raise ValueError(f"group {k} reads {a.name}, which runs after the group")
        for n in graph.nodes[first:last_position]:
            if n not in inside and any(i in inside for i in n.all_input_nodes):
                raise ValueError(
                    f"group {k}: {n.name} ({n.op_name}) reads "
                    f"{next(i for i in n.all_input_nodes if i in inside).name} from the group "
                    "but runs before the group's last op: the kernel would not have run yet "
                    "(end the group before it)")
        result.append(group)
    return result


# ---------------------------------------------------------------- the decomposition
def fuse(graph, fusion_pass=None):
    """``(graph', groups)``: a copy of ``graph`` with ``Linear`` split where that lets its
    bias add be fused, and its groups (``fusion_pass(graph')`` when given)."""
    graph = copy_graph(graph)
    split_linear_bias(graph)
    if fusion_pass is None:
        return graph, partition(graph)
    return graph, check_groups(graph, fusion_pass(graph))


def split_linear_bias(graph):
    """``Linear(x, W, b)`` -> ``Linear(x, W, None)`` then ``Add(·, b)``, where it feeds an
    elementwise op that can join the add (module docstring)."""
    from ..nn._functional.linear import Linear
    from ..ops.arithmetic import Add
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not Linear:
            continue
        x, weight, bias = node.args
        if bias is None or not any(lowerable(u) for u in node.users):
            continue
        meta = dict(node.meta)
        matmul = Node(graph, "call_function", graph._unique(node.name + "_mm"), Linear,
                      (x, weight, None), meta)
        add = Node(graph, "call_function", graph._unique(node.name + "_bias"), Add,
                   (matmul, bias), dict(meta))
        position = graph.nodes.index(node)
        graph.nodes[position:position + 1] = [matmul, add]
        _replace_uses(node, add)
        for used in node.all_input_nodes:
            used.users.pop(node, None)


def _replace_uses(old, new):
    for user in list(old.users):
        user.args = map_nodes(user.args, lambda n: new if n is old else n)
        new.users[user] = None
    old.users.clear()


def copy_graph(graph):
    """A new Graph with the same nodes (new Node objects), attributes and meta."""
    new = Graph()
    new.attributes = dict(graph.attributes)
    new.meta = dict(graph.meta)
    mapping = {}
    for node in graph.nodes:
        copy = Node(new, node.op, node.name, node.target,
                    map_nodes(node.args, mapping.__getitem__), node.meta)
        new._names.add(node.name)
        new.nodes.append(copy)
        mapping[node] = copy
    return new
