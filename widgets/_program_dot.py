"""The graph of a program -- a captured ``learntorch.fx.Graph`` or an ONNX model -- as a
picture model (``widgets._dot.Graph``), which ``show_program`` draws.

Public in the package::

    program_graph(program, groups=None, show_weights=True) -> ProgramGraph

``program`` is a ``learntorch.fx.Graph`` (``learntorch.fx.capture(model, x)``, or an
``ONNXProgram``'s ``.graph``) or an ONNX model (an ``ONNXProgram``, an
``onnx.ModelProto``, or the path of an ``.onnx`` file).  What is drawn, top to bottom or
left to right the way the data flows:

* **inputs** (blue records): a placeholder of the captured graph, a graph input of the ONNX
  model -- its name and type, ONNX's symbolic dimensions by name (``float[batch, 1, 8, 8]``);
* **initializers** (wheat records): the tensors the program holds -- a ``get_attr`` node
  (a parameter or buffer, ``0.weight``), an ONNX initializer; their name, dtype and shape,
  and their values when there are at most 6 (a ``Reshape``'s target shape);
* **ops** (grey boxes): a ``call_function`` node -- the engine's ``Function`` (``Linear``),
  its kind (``matmul``: what a compiler reads) and the shape it made -- or an ONNX node --
  its op type, every attribute (``kernel_shape=[3, 3]``) and the type of what it makes,
  as ONNX's shape inference follows the symbolic dimensions through the graph;
* **outputs** (green records);
* arrows from each value to the ops that read it.

Ids are fixed by the program's order: ``n<i>`` is node ``i`` of an fx graph (every node,
placeholders included); in an ONNX model ``i<k>``, ``w<k>``, ``n<k>`` and ``o<k>`` are its
k-th input, initializer, node and output.  ``ProgramGraph.names`` maps each id to the
program's own name for it (``"convolution"``, ``"/convolution/Conv"``, ``"0.weight"``).

**Groups** box nodes together, with a label: ``groups="modules"`` (fx graphs) boxes the
ops that ran in each module with the parameters they read (``0: Conv2d``); a dict
``{label: [node, ...]}`` boxes any nodes -- fx ``Node`` objects or names, ONNX node or
value names -- which is how a compiler shows which ops it fused into one kernel.  A node
may be in one group at most.
"""
import os

import numpy as np

from ._dot import MAX_VALUES, Cluster, Edge, Graph, Node

FX_LEGEND = {"input": "input (placeholder)", "initializer": "parameter or buffer (get_attr)",
             "op": "op (call_function)", "output": "output"}
ONNX_LEGEND = {"input": "graph input", "initializer": "initializer", "op": "node",
               "output": "graph output"}
KINDS = ["input", "initializer", "op", "output"]


class ProgramGraph(Graph):
    """A ``_dot.Graph`` of a program, knowing what it was drawn from: ``source`` is
    ``"fx"`` or ``"onnx"``, ``names`` maps DOT id -> the program's name for the node,
    ``details`` DOT id -> a one-line description (``describe`` in the view)."""

    def __init__(self, source, nodes, edges, names, details, clusters=()):
        super().__init__(nodes, edges, legend_kinds=KINDS, clusters=clusters,
                         legend_labels=FX_LEGEND if source == "fx" else ONNX_LEGEND)
        self.source, self.names, self.details = source, names, details
        self.ids = {name: node_id for node_id, name in names.items()}

    def node_id(self, key):
        """The DOT id of ``key``: a DOT id, or the program's name for the node."""
        if key in self.by_id:
            return key
        return self.ids.get(key)


def program_graph(program, groups=None, show_weights=True):
    """The picture model of ``program`` (see the module docstring).

    >>> import learntorch as torch
    >>> import learntorch.fx
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    >>> picture = program_graph(learntorch.fx.capture(model, torch.randn(4, 3)), groups="modules")
    >>> [(n.id, n.kind, n.fields[0]) for n in picture.nodes]
    [('n0', 'input', 'input'), ('n1', 'initializer', '0.weight'), ('n2', 'initializer', '0.bias'), ('n3', 'op', 'Linear'), ('n4', 'op', 'Relu'), ('n5', 'output', 'output')]
    >>> picture.clusters
    [Cluster(g0, '0: Linear', ['n1', 'n2', 'n3']), Cluster(g1, '1: ReLU', ['n4'])]
    """
    from learntorch.fx import Graph as FxGraph

    if isinstance(program, FxGraph):
        return _fx_picture(program, groups, show_weights)
    return _onnx_picture(onnx_model(program), groups, show_weights)


def onnx_model(program):
    """The ``onnx.ModelProto`` in ``program`` (an ONNXProgram, a ModelProto or a path)."""
    if hasattr(program, "model_proto"):        # learntorch.onnx.ONNXProgram, torch's too
        return program.model_proto
    if type(program).__name__ == "ModelProto" and hasattr(program, "graph"):
        return program
    if isinstance(program, (str, os.PathLike)):
        import onnx

        return onnx.load(os.fspath(program))
    raise TypeError(
        f"show_program takes a learntorch.fx.Graph (learntorch.fx.capture(model, x)), an "
        f"ONNXProgram (learntorch.onnx.export(...)), an onnx.ModelProto or the path of an "
        f".onnx file; got {type(program).__name__}. For the autograd graph behind a tensor "
        f"use show_graph(tensor).")


# --- a captured learntorch.fx graph -------------------------------------------------------

def _fx_picture(graph, groups, show_weights):
    ids = {node: f"n{i}" for i, node in enumerate(graph.nodes)}
    code = _fx_statements(graph)
    nodes, edges, names, details = [], [], {}, {}
    hidden = set()
    for node in graph.nodes:
        node_id = ids[node]
        if node.op == "get_attr" and not show_weights:
            hidden.add(node)
            continue
        kind, fields = _fx_fields(node)
        names[node_id] = node.name
        details[node_id] = code.get(node.name, f"{node.name}: {node.op}")
        nodes.append(Node(node_id, kind, fields, tooltip=details[node_id]))
        for source in node.all_input_nodes:
            if source not in hidden:
                edges.append(Edge(ids[source], node_id))
    clusters = _clusters(_fx_groups(graph, groups), names, ids_of=_fx_member_id(ids))
    return ProgramGraph("fx", nodes, edges, names, details, clusters)


def _fx_fields(node):
    meta = _fx_meta_text(node.tensor_meta)
    if node.op == "placeholder":
        return "input", [node.name, meta]
    if node.op == "get_attr":
        return "initializer", [node.target, meta]
    if node.op == "output":
        outputs = []
        _flatten_nodes(node.args[0], outputs)
        shapes = ", ".join(_fx_meta_text(n.tensor_meta) for n in outputs)
        return "output", ["output", shapes]
    if node.kind == "getitem":
        return "op", [f"getitem [{node.args[1]}]", meta]
    return "op", [node.op_name, node.kind, meta]


def _fx_meta_text(meta):
    if meta is None:
        return ""
    if isinstance(meta, tuple) and not hasattr(meta, "shape"):   # a multi-output op
        return "(" + ", ".join(_fx_meta_text(m) for m in meta if m is not None) + ")"
    return f"{meta.dtype.name}[{', '.join(map(str, meta.shape))}]"


def _flatten_nodes(value, out):
    from learntorch.fx import Node as FxNode

    if isinstance(value, FxNode):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _flatten_nodes(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten_nodes(v, out)


def _fx_statements(graph):
    """Node name -> its line of ``graph.code`` (the Python statement, shapes beside it)."""
    found = {}
    for line in graph.code.splitlines()[1:]:
        text = line.strip()
        if text.startswith("# ") and ":" in text:             # a placeholder's comment
            name = text[2:].split(":", 1)[0]
            found[name] = f"{name} (input): {text.split(':', 1)[1].strip()}"
        elif text.startswith("return "):
            found["output"] = text
        elif " = " in text:
            found[text.split(" = ", 1)[0]] = " ".join(text.split())
    return found


def _fx_groups(graph, groups):
    """``groups`` as {label: [fx node or name, ...]}; ``"modules"`` worked out here."""
    if groups is None:
        return {}
    if groups == "modules":
        modules, kinds = {}, {}
        for node in graph.nodes:
            if node.op == "call_function" and node.meta.get("module_type") and node.module_path:
                modules.setdefault(node.module_path, []).append(node)
                kinds[node.module_path] = node.meta["module_type"]
        owned = {path: [] for path in modules}  # the parameters and buffers each module owns
        for node in graph.nodes:
            owner = node.target.rpartition(".")[0] if node.op == "get_attr" else None
            if owner in owned:
                owned[owner].append(node)
        return {f"{path}: {kinds[path]}": owned[path] + ops for path, ops in modules.items()}
    return _check_groups(groups)


def _fx_member_id(ids):
    by_name = {node.name: node_id for node, node_id in ids.items()}

    def member_id(member):
        return ids.get(member) if not isinstance(member, str) else by_name.get(member)
    return member_id


# --- an ONNX model ---------------------------------------------------------------------------

def _onnx_picture(model, groups, show_weights):
    import onnx
    from onnx import helper, numpy_helper, shape_inference

    graph = model.graph
    try:  # the types of the values between the nodes, symbolic dims followed through
        inferred = shape_inference.infer_shapes(model).graph
    except Exception:  # a model shape inference cannot read: draw it without the types
        inferred = graph
    types = {v.name: _onnx_type_text(v.type) for v in
             list(inferred.input) + list(inferred.value_info) + list(inferred.output)}
    initializer_names = {t.name for t in graph.initializer}
    nodes, edges, names, details = [], [], {}, {}
    made_by, readers = {}, {}       # value name -> DOT id of what makes it / reads it
    for k, value in enumerate(v for v in graph.input if v.name not in initializer_names):
        node_id = f"i{k}"
        names[node_id], made_by[value.name] = value.name, node_id
        nodes.append(Node(node_id, "input", [value.name, types.get(value.name, "")]))
    for k, tensor in enumerate(graph.initializer):
        if not show_weights:
            break
        node_id = f"w{k}"
        names[node_id], made_by[tensor.name] = tensor.name, node_id
        dtype = onnx.TensorProto.DataType.Name(tensor.data_type).lower()
        fields = [tensor.name, f"{dtype}[{', '.join(map(str, tensor.dims))}]"]
        if int(np.prod(tensor.dims)) <= MAX_VALUES:
            fields.append(_values_text(numpy_helper.to_array(tensor)))
        nodes.append(Node(node_id, "initializer", fields))
    for k, node in enumerate(graph.node):
        node_id = f"n{k}"
        names[node_id] = node.name or f"{node.op_type}_{k}"
        attributes = [f"{a.name}={_attribute_text(helper.get_attribute_value(a))}"
                      for a in node.attribute]
        outputs = [types.get(o, "") for o in node.output if o]
        nodes.append(Node(node_id, "op", [node.op_type] + attributes + [", ".join(outputs)]))
        for name in node.input:
            if name in made_by:
                edges.append(Edge(made_by[name], node_id))
            readers.setdefault(name, []).append(names[node_id])
        for name in node.output:
            made_by[name] = node_id
        ins = ", ".join(f"{i} {types.get(i, _initializer_type(graph, i))}".strip()
                        for i in node.input)
        outs = ", ".join(f"{o} {types.get(o, '')}".strip() for o in node.output)
        details[node_id] = (f"{names[node_id]}: {node.op_type}({ins}) -> {outs}"
                            + (f"; {', '.join(attributes)}" if attributes else ""))
    for k, value in enumerate(graph.output):
        node_id = f"o{k}"
        names[node_id] = value.name
        nodes.append(Node(node_id, "output", [value.name, types.get(value.name, "")]))
        if value.name in made_by:
            edges.append(Edge(made_by[value.name], node_id))
        details[node_id] = (f"{value.name}: graph output {types.get(value.name, '')}, made by "
                            f"{names.get(made_by.get(value.name), 'nothing')}")
    for node in nodes:
        if node.kind in ("input", "initializer"):
            read = ", ".join(readers.get(node.fields[0], [])) or "no node"
            what = "graph input" if node.kind == "input" else "initializer"
            details[node.id] = f"{node.fields[0]}: {what} {' '.join(node.fields[1:])}, read by {read}"
        node.tooltip = details[node.id]
    if groups == "modules":
        raise ValueError("groups='modules' needs a captured learntorch.fx graph (its nodes know "
                         "the module they ran in; ONNX nodes do not): show_program("
                         "program.graph, groups='modules'), or pass a dict of ONNX node names")
    value_ids = {**{t.name: f"w{k}" for k, t in enumerate(graph.initializer)}, **made_by,
                 **{n: i for i, n in names.items()}}
    clusters = _clusters(_check_groups(groups) if groups is not None else {}, names,
                         ids_of=lambda member: value_ids.get(member) if isinstance(member, str)
                         else None)
    return ProgramGraph("onnx", nodes, edges, names, details, clusters)


def _initializer_type(graph, name):
    import onnx

    for t in graph.initializer:
        if t.name == name:
            dtype = onnx.TensorProto.DataType.Name(t.data_type).lower()
            return f"{dtype}[{', '.join(map(str, t.dims))}]"
    return ""


def _onnx_type_text(value_type):
    import onnx

    if not value_type.HasField("tensor_type"):
        return value_type.WhichOneof("value") or ""
    tensor = value_type.tensor_type
    dtype = onnx.TensorProto.DataType.Name(tensor.elem_type).lower()
    if not tensor.HasField("shape"):
        return f"{dtype}[?]"
    dims = [d.dim_param if d.HasField("dim_param") else
            str(d.dim_value) if d.HasField("dim_value") else "?" for d in tensor.shape.dim]
    return f"{dtype}[{', '.join(dims)}]"


def _attribute_text(value):
    if isinstance(value, bytes):
        return repr(value.decode("utf-8", "replace"))
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_attribute_text(v) for v in value) + "]"
    if hasattr(value, "dims"):            # a TensorProto attribute (Constant's value)
        from onnx import numpy_helper

        array = numpy_helper.to_array(value)
        return _values_text(array) if array.size <= MAX_VALUES else f"tensor{list(array.shape)}"
    return str(value)


def _values_text(array):
    values = np.asarray(array).reshape(-1).tolist()
    return "= [" + ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in values) + "]"


# --- groups ---------------------------------------------------------------------------------

def _check_groups(groups):
    if not isinstance(groups, dict):
        raise TypeError(f"groups must be None, 'modules' or a dict {{label: [node, ...]}}, got "
                        f"{type(groups).__name__}")
    return {str(label): list(members) for label, members in groups.items()}


def _clusters(groups, names, ids_of):
    """Cluster ``g<k>`` per group, members as DOT ids; unknown or repeated members raise."""
    clusters, placed = [], {}
    for k, (label, members) in enumerate(groups.items()):
        ids = []
        for member in members:
            node_id = ids_of(member)
            if node_id is None:
                shown = member if isinstance(member, str) else getattr(member, "name", member)
                known = ", ".join(names.values())
                raise KeyError(f"group {label!r} names {shown!r}, which is not a node of this "
                               f"graph (its nodes: {known})")
            if node_id not in names:      # a weight hidden by show_weights=False
                continue
            if node_id in placed and placed[node_id] != label:
                raise ValueError(f"{names[node_id]!r} is in two groups, {placed[node_id]!r} and "
                                 f"{label!r}: a node may be in one group at most")
            placed[node_id] = label
            if node_id not in ids:
                ids.append(node_id)
        clusters.append(Cluster(f"g{k}", label, ids))
    return clusters
