"""The recorded graph behind a tensor, as a small picture model and as DOT text.

Public in the package (``widgets.graph`` and ``widgets.backprop_stepper`` use them)::

    build_graph(tensor, params=None, *, model=None, collapse_modules=False,
                show_data=True, show_grad=True, show_saved=True, max_values=6) -> Graph
    build_dot(tensor, params=None, highlight=(), styles=None, **options) -> str
    Graph.to_dot(highlight=(), styles=None) -> str

What is drawn (torchviz's picture in micrograd's style, left to right):

* one **op node** per node of ``learntorch.autograd.graph.walk(tensor)``, id ``n<i>``
  where ``i`` is the walk id (0 = the node that made the tensor, then the
  order backward runs them); labelled with torch's name shortened
  (``MulBackward0`` -> ``Mul``), ``AccumulateGrad`` kept as it is;
* one **value node** per leaf behind an ``AccumulateGrad`` node ``n<i>``, id ``v<i>``:
  a record of three cells stacked up and down, ``name (shape) / data ... / grad ...``
  (stacked, not side by side: a graph is as wide as its longest chain of nodes, so narrow
  nodes keep it readable at a notebook's width).  A tensor of up to ``max_values`` (6)
  elements shows them; a larger one its dtype, min, mean and max;
* the **output** value, id ``out`` (or the leaf node itself when the tensor is a leaf);
* one value node per **tensor saved for backward** that is not already drawn,
  ids ``s0, s1, ...`` in walk order, with a dashed edge to each node that saved it
  (written from that op and drawn pointing back at it, so the saved tensor sits after
  the op that keeps it instead of taking a column of its own) and a dotted edge from the
  op that produced it.  A leaf or the output that is
  saved gets a dashed orange border instead of a node of its own;
* an op node shows, under its name, the shape of what it computed: the shape that flows
  along its edges (the edges themselves carry no label, which would widen every column);
* edges point the way the forward pass went (input -> op);
* a legend in one row, of the kinds of node the picture has.

Ids depend only on the graph's structure, never on memory addresses, so the
same computation gives the same DOT text in every process.

The same picture model draws the graph of a *program* (``widgets._program_dot``: a
captured ``learntorch.fx`` graph, an ONNX model): its nodes are of the kinds ``input``,
``initializer`` (weights the program holds), ``op`` and ``output``, a ``Graph`` may say
what its legend calls each kind (``legend_labels``), and ``clusters`` box nodes together
(a module's ops, a group a compiler fuses), drawn as Graphviz clusters.

Module collapsing (``collapse_modules=True``, or an int depth) replaces the nodes of
each submodule by one box ``m0, m1, ...``.  A parameter named ``layers.2.weight``
belongs to module ``layers.2`` (depth 1 would group by ``layers``).  An op joins
a module when it reads that module's parameters: directly (the ``Linear`` node
reading ``weight`` and ``bias``) or through ops that see only those parameters
(a ``T`` of the weight).  Ops without parameters (``Relu``, the loss) stay outside,
between the boxes, so an MLP reads ``Linear 0 -> Relu -> Linear 2 -> MseLoss`` --
unless they lie between two ops of the same box (the ``Tanh`` inside ``body`` when
grouping by depth 1), which keeps every box in one piece.
An op that reads the parameters of two modules (tied weights) stays outside too.
"""
import numpy as np

from learntorch.autograd.graph import NodeInfo, walk

# fill colours by kind of node; CSS names, so that the matplotlib fallback knows them too
COLOURS = {"leaf": "lightblue", "saved": "orange", "output": "palegreen", "op": "lightgrey",
           "module": "lightyellow", "input": "lightblue", "initializer": "wheat"}
HIGHLIGHT = {"color": "red", "penwidth": "3"}
DIRECTIONS = {"LR": "left to right", "TB": "top to bottom"}
LEGEND = [("leaf", "leaf (requires grad)"), ("saved", "saved for backward"),
          ("output", "output"), ("op", "op (backward node)"), ("module", "module (collapsed)"),
          ("input", "input"), ("initializer", "initializer (weights)")]
# a cluster's frame: dashed, rounded, a pale fill under the nodes it boxes, its label at the
# top left (set here: a subgraph would take the message's place at the bottom from the graph)
CLUSTER_STYLE = {"style": "rounded,dashed,filled", "color": "gray45", "fillcolor": "gray97",
                 "fontsize": "9", "labelloc": "t", "labeljust": "l", "margin": "6"}
# tensors with at most this many elements show their values in a record, larger ones a summary
MAX_VALUES = 6
# node text in points (Graphviz's unit): 10 pt is 13.3 CSS px, still 10 px in a picture that a
# narrow output area shrinks to 3/4 of its size
NODE_FONT_PT = "10"


class Node:
    """One box of the picture: ``kind`` is op, leaf, output, saved or module (a tensor's
    graph), or input, initializer, op or output (a program's).

    ``fields`` are the record's cells (a list of strings, lines split by newlines);
    ``walk_ids`` are the walk nodes it stands for (one for an op, several for a module).
    """

    __slots__ = ("id", "kind", "fields", "tooltip", "walk_ids", "saved")

    def __init__(self, id, kind, fields, tooltip="", walk_ids=(), saved=False):
        self.id, self.kind, self.fields, self.tooltip = id, kind, fields, tooltip
        self.walk_ids, self.saved = tuple(walk_ids), saved

    @property
    def is_value(self):
        return self.kind in ("leaf", "output", "saved", "input", "initializer")

    def __repr__(self):
        return f"Node({self.id}, {self.kind}, {' | '.join(self.fields)!r})"


class Edge:
    """An arrow; ``kind`` says what it means.

    data: the forward flow (input -> op); saved: a leaf or the output -> an op that saved
    it; kept: an op -> a tensor it saved, drawn as a node of its own (the arrow pointing back
    at the op); made: the op that produced a saved tensor -> that tensor (dotted).
    """

    __slots__ = ("src", "dst", "label", "kind")

    def __init__(self, src, dst, label="", kind="data"):
        self.src, self.dst, self.label, self.kind = src, dst, label, kind

    def __repr__(self):
        return f"Edge({self.src} -> {self.dst}{', ' + self.label if self.label else ''})"


class Cluster:
    """A box drawn around some nodes (``members``: DOT ids), with a ``label`` at its top."""

    __slots__ = ("id", "label", "members")

    def __init__(self, id, label, members):
        self.id, self.label, self.members = id, label, tuple(members)

    def __repr__(self):
        return f"Cluster({self.id}, {self.label!r}, {list(self.members)})"


class Graph:
    """The picture model: nodes and edges in a fixed order, plus an optional message
    (why nothing was recorded), the walk it was drawn from, what the legend calls each
    kind of node (``legend_labels`` overrides ``LEGEND``) and the clusters that box nodes."""

    def __init__(self, nodes, edges, message="", infos=(), legend_kinds=(), legend_labels=None,
                 clusters=()):
        self.nodes, self.edges, self.message = nodes, edges, message
        self.legend_labels = dict(legend_labels or {})
        self.clusters = list(clusters)
        # the NodeInfo of each walk id without the node and the saved tensors themselves
        # (names and shapes stay): a picture on screen must not keep activations alive
        self.infos = [_without_saved(i) for i in infos]
        self.walk_names = [i.name for i in self.infos]  # torch's node name per walk id
        self.legend_kinds = list(legend_kinds)
        self.by_id = {n.id: n for n in nodes}
        self.walk_to_node = {w: n.id for n in nodes if not n.is_value for w in n.walk_ids}

    def node_id(self, key):
        """The DOT id drawing ``key``: a walk id (int) or a DOT id (str)."""
        if isinstance(key, (int, np.integer)):
            return self.walk_to_node.get(int(key))
        return key if key in self.by_id else None

    def to_dot(self, highlight=(), styles=None, direction="LR"):
        """DOT text; ``highlight`` (walk ids or DOT ids) gets a red border, ``styles`` maps
        DOT id -> extra attributes (e.g. ``{"n3": {"fillcolor": "gold"}}``); ``direction``
        is ``"LR"`` (the forward pass left to right) or ``"TB"`` (top to bottom, narrower
        for a long chain of ops)."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {sorted(DIRECTIONS)} ('LR': left to right, "
                             f"'TB': top to bottom), got {direction!r}")
        if isinstance(highlight, (int, str, np.integer)):
            highlight = (highlight,)
        marked = {self.node_id(k) for k in highlight} - {None}
        lines = ["digraph learntorch_graph {",
                 # columns and rows close together: a graph a notebook shows at its own size
                 _attrs_line("graph", rankdir=direction, fontname="Helvetica", fontsize="11",
                             ranksep="0.2", nodesep="0.15"),
                 _attrs_line("node", fontname="Helvetica", fontsize=NODE_FONT_PT,
                             margin="0.06,0.03"),
                 _attrs_line("edge", fontname="Helvetica", fontsize="9")]
        present = {node.kind for node in self.nodes} | {"saved" for n in self.nodes if n.saved}
        lines += _legend_lines([k for k in self.legend_kinds if k in present], direction,
                               self.legend_labels)
        # the message under the graph, set after the legend: a subgraph takes the graph
        # attributes set before it, and the legend's box must not repeat the message
        if self.message:
            lines.append(_attrs_line("graph", label=self.message, labelloc="b"))
        node_lines = {}
        for node in self.nodes:
            attrs = _node_style(node, direction)
            if node.id in marked:
                attrs.update(HIGHLIGHT)
            attrs.update((styles or {}).get(node.id, {}))
            node_lines[node.id] = _attrs_line(node.id, **attrs)
        boxed = {m for c in self.clusters for m in c.members}
        lines += [line for node_id, line in node_lines.items() if node_id not in boxed]
        for cluster in self.clusters:  # after the free nodes: a cluster's nodes are its own
            lines += [f"  subgraph cluster_{cluster.id} {{",
                      "  " + _attrs_line("graph", label=cluster.label, **CLUSTER_STYLE)]
            lines += ["  " + node_lines[m] for m in cluster.members if m in node_lines]
            lines.append("  }")
        for edge in self.edges:
            lines.append(f"  {edge.src} -> {edge.dst}{_attrs(_edge_style(edge))};")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _without_saved(info):
    fields = {k: getattr(info, k) for k in NodeInfo.__slots__}
    return NodeInfo(**dict(fields, node=None, saved=()))


def build_dot(tensor, params=None, highlight=(), styles=None, **options):
    """DOT text of the graph behind ``tensor`` (``options`` as for ``build_graph``).

    >>> import learntorch as torch
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> dot = build_dot((x * x).sum(), params={"x": x})
    >>> "v2 -> n2;" in dot, 'rankdir="LR"' in dot     # the leaf x feeds its AccumulateGrad
    (True, True)
    """
    return build_graph(tensor, params, **options).to_dot(highlight, styles)


def build_graph(tensor, params=None, *, model=None, collapse_modules=False, show_data=True,
                show_grad=True, show_saved=True, max_values=MAX_VALUES):
    """The picture model of the graph behind ``tensor``.

    ``params`` labels tensors: a dict name -> tensor (``dict(model.named_parameters())``,
    or ``{"x": x, "w": w}``); ``model`` (an ``nn.Module``) adds its named parameters and
    lets collapsed boxes say what kind of module they are (``Linear 0``).  Tensors with
    at most ``max_values`` elements show their values, larger ones a summary.

    >>> import learntorch as torch
    >>> w = torch.tensor([2.], requires_grad=True)
    >>> [n.id for n in build_graph((w * 3).sum(), {"w": w}).nodes]
    ['out', 'n0', 'n1', 'n2', 'v2']
    """
    names = {}
    if model is not None:
        names.update({id(t): name for name, t in model.named_parameters()})
    names.update({id(t): name for name, t in (params or {}).items()})
    fmt = _ValueText(show_data, show_grad, max_values)
    infos = walk(tensor)
    if not infos:
        out = Node("out", "output", fmt.fields(tensor, names.get(id(tensor), "output")))
        message = ("no graph: this tensor does not require grad, so autograd recorded nothing. "
                   "Create the inputs with requires_grad=True (or call .requires_grad_()) "
                   "before computing it.")
        return Graph([out], [], message, legend_kinds=["output"])
    builder = _Builder(tensor, infos, names, fmt, show_saved)
    graph = builder.graph()
    if collapse_modules:
        depth = None if collapse_modules is True else int(collapse_modules)
        kinds = {} if model is None else {name: type(m).__name__
                                          for name, m in model.named_modules()}
        graph = _collapse(graph, infos, names, depth, kinds)
    return graph


class _Builder:
    """Walks the engine's graph once and lays down nodes and edges in walk order."""

    def __init__(self, tensor, infos, names, fmt, show_saved):
        self.tensor, self.infos, self.names, self.fmt = tensor, infos, names, fmt
        self.show_saved = show_saved
        self.nodes, self.edges = [], []
        self.value_ids = {}  # id(tensor) -> DOT id of the value node drawing it
        self.position = {}   # DOT id -> index in self.nodes

    def graph(self):
        tensor, infos = self.tensor, self.infos
        out_is_leaf = tensor.grad_fn is None
        if not out_is_leaf:
            self._value("out", "output", tensor, self.names.get(id(tensor), "output"))
        for info in infos:
            self._op(info)
            if info.is_leaf:
                default = self.names.get(id(tensor), "output") if out_is_leaf else "leaf"
                self._value(f"v{info.id}", "leaf", info.variable,
                            self.names.get(id(info.variable), default))
                self.edges.append(Edge(f"v{info.id}", f"n{info.id}"))
        if not out_is_leaf:
            self.edges.append(Edge("n0", "out"))
        for info in infos:  # edges after all nodes: inputs point at later walk ids
            for k, (src, _) in enumerate(info.inputs):
                if src is not None:
                    # unlabelled: the op a data edge leaves says the shape it carries (a label
                    # on every edge would widen each column it crosses)
                    self.edges.append(Edge(f"n{src}", f"n{info.id}"))
        if self.show_saved:
            self._saved_tensors()
        kinds = ["leaf", "saved", "output", "op"]
        return Graph(self.nodes, _unique(self.edges, keep_kind="data"), infos=infos,
                     legend_kinds=kinds)

    def _op(self, info):
        shapes = ", ".join(shape_text(s) for s in info.output_shapes if s is not None)
        tooltip = f"{info.name}, walk id {info.id}, output {shapes}"
        self.position[f"n{info.id}"] = len(self.nodes)
        # the shape it computed under the name: what flows out along its edges (an AccumulateGrad
        # only stores a gradient, its leaf's record says the shape; a 0-d result needs no line)
        fields = [_short_op_name(info.name)]
        if not info.is_leaf and any(s not in (None, ()) for s in info.output_shapes):
            fields.append(shapes)
        self.nodes.append(Node(f"n{info.id}", "op", fields, tooltip, walk_ids=[info.id]))

    def _value(self, node_id, kind, t, name):
        tooltip = f"{name} {shape_text(tuple(t.shape))}"
        self.position[node_id] = len(self.nodes)
        self.nodes.append(Node(node_id, kind, self.fmt.fields(t, name), tooltip))
        self.value_ids[id(t)] = node_id

    def _saved_tensors(self):
        made_by = {id(info.node): f"n{info.id}" for info in self.infos if not info.is_leaf}
        count = 0
        for info in self.infos:
            for t in info.saved:
                node_id = self.value_ids.get(id(t))
                if node_id is None:
                    node_id = f"s{count}"
                    count += 1
                    maker = made_by.get(id(t.grad_fn)) if t.grad_fn is not None else None
                    default = ("saved output\nof " + self.by_id(maker).fields[0]
                               if maker else "saved")
                    self._value(node_id, "saved", t, self.names.get(id(t), default))
                    if maker and maker != f"n{info.id}":  # dotted: where the value came from
                        self.edges.append(Edge(maker, node_id, kind="made"))
                elif self.by_id(node_id).kind != "saved":
                    self.by_id(node_id).saved = True
                if node_id.startswith("s"):
                    # a saved tensor drawn on its own: one arrow drawn backwards, so that the
                    # layout puts it after the op that keeps it (for an op that saved its own
                    # output, such as Exp, that is where it belongs anyway), not in a column
                    # of its own before the op
                    self.edges.append(Edge(f"n{info.id}", node_id, kind="kept"))
                else:  # a leaf or the output, drawn already: the arrow goes the forward way
                    self.edges.append(Edge(node_id, f"n{info.id}", kind="saved"))

    def by_id(self, node_id):
        return self.nodes[self.position[node_id]]


class _ValueText:
    """The cells of a value record: name (shape), data, grad -- values or a summary."""

    def __init__(self, show_data, show_grad, max_values):
        self.show_data, self.show_grad, self.max_values = show_data, show_grad, max_values

    def fields(self, t, name):
        cells = [f"{name}\n{shape_text(tuple(t.shape))}"]
        if self.show_data:
            cells.append("data " + self.values(t))
        # .grad of a non-leaf is never filled (torch warns on reading it): show it only
        # where backward can put one -- leaves, and tensors that called retain_grad()
        if self.show_grad and t.requires_grad and (t.is_leaf or t.retains_grad):
            cells.append("grad None" if t.grad is None else "grad " + self.values(t.grad))
        return cells

    def values(self, t):
        a = t.detach().cpu().numpy()
        if a.size <= self.max_values and a.ndim <= 2:
            return _array_text(a)
        return _summary_text(a, str(t.dtype).rsplit(".", 1)[-1])


def _number(v, digits=4):
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.{digits}g}"  # 4 significant digits: enough to compare, short enough to read


def _array_text(a):
    if a.ndim == 0:
        return _number(a[()])
    if a.ndim == 1:
        return "[" + ", ".join(_number(v) for v in a) + "]"
    return "\n".join("[" + ", ".join(_number(v) for v in row) + "]" for row in a)


def _summary_text(a, dtype):
    if a.size == 0:
        return f"{dtype}, empty"
    f = a.astype(np.float64)
    # 3 significant digits: a summary says how big, and stays narrow
    return (f"{dtype}\nmin {_number(f.min(), 3)}\nmean {_mean_text(f)}\n"
            f"max {_number(f.max(), 3)}")


def _mean_text(f):
    """The mean to 3 digits, or "≈ 0" when it is zero but for rounding: a million times
    smaller than the largest magnitude (a softmax gradient's mean, -6.61e-11 in one run and
    +2e-12 in the next, as the summation order changes, says nothing at 3 digits)."""
    mean, scale = f.mean(), max(abs(f.min()), abs(f.max()))
    if mean != 0 and abs(mean) <= 1e-6 * scale:
        return "≈ 0"
    return _number(mean, 3)


def shape_text(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _short_op_name(name):
    """``MulBackward0`` -> ``Mul``; names that are not an op's backward stay as they are."""
    stem = name.rstrip("0123456789")
    return stem[: -len("Backward")] if stem.endswith("Backward") and stem != "Backward" else name


def _unique(edges, keep_kind=None):
    """Drop repeated edges and loops; ``keep_kind`` edges may repeat (``x * x``: two arrows)."""
    seen, kept = set(), []
    for e in edges:
        key = (e.src, e.dst, e.kind)
        if e.kind == keep_kind or (key not in seen and e.src != e.dst):
            seen.add(key)
            kept.append(e)
    return kept


# --- module collapsing ----------------------------------------------------

def _module_of_names(names, depth):
    """id(parameter) -> module path, for parameters that live in a submodule."""
    owners = {}
    for key, name in names.items():
        parts = name.split(".")[:-1]
        if parts:
            owners[key] = ".".join(parts if depth is None else parts[:depth])
    return owners


def _collapse(graph, infos, names, depth, kinds):
    owner_of_param = _module_of_names(names, depth)
    pure, member = {}, {}  # walk id -> module: "sees only that module's parameters" / "belongs"
    for info in reversed(infos):  # inputs before the ops that read them
        if info.is_leaf:
            pure[info.id] = member[info.id] = owner_of_param.get(id(info.variable))
            continue
        srcs = [src for src, _ in info.inputs]
        from_params = {pure[s] for s in srcs if s is not None and pure.get(s)}
        if len(from_params) == 1:
            module = from_params.pop()
            member[info.id] = module
            # None inputs are data that needs no grad: such an op applies the module to data
            if all(s is not None and pure.get(s) == module for s in srcs):
                pure[info.id] = module
    _fill_between(infos, member)
    modules = []  # in walk order of first appearance: stable ids m0, m1, ...
    for info in infos:
        module = member.get(info.id)
        if module and module not in modules:
            modules.append(module)
    if not modules:
        return graph
    box_of = {}  # DOT id -> box id
    for info in infos:
        module = member.get(info.id)
        if module:
            box_of[f"n{info.id}"] = f"m{modules.index(module)}"
            if info.is_leaf:
                box_of[f"v{info.id}"] = box_of[f"n{info.id}"]
    # a saved tensor read only by ops inside one box disappears into that box
    readers = {}
    for e in graph.edges:
        if e.kind == "saved":
            readers.setdefault(e.src, set()).add(box_of.get(e.dst, e.dst))
        elif e.kind == "kept":
            readers.setdefault(e.dst, set()).add(box_of.get(e.src, e.src))
    for node in graph.nodes:
        if node.kind == "saved" and len(readers.get(node.id, ())) == 1:
            only = next(iter(readers[node.id]))
            if only.startswith("m"):
                box_of[node.id] = only
    nodes, placed = [], set()
    for node in graph.nodes:
        box = box_of.get(node.id)
        if box is None:
            nodes.append(node)
        elif box not in placed:
            placed.add(box)
            nodes.append(_module_box(box, modules[int(box[1:])], infos, member, names, kinds))
    edges = [Edge(box_of.get(e.src, e.src), box_of.get(e.dst, e.dst), e.label, e.kind)
             for e in graph.edges]
    return Graph(nodes, _unique(edges), graph.message, graph.infos,
                 graph.legend_kinds + ["module"])


def _fill_between(infos, member):
    """An op between two ops of one module joins it (a Tanh inside ``body`` at depth 1).

    Without this, collapsing ``body`` into one box would draw an arrow out of the box
    and back in; with it, every box is convex and the collapsed graph stays acyclic.
    """
    consumers = {i.id: [] for i in infos}
    for info in infos:
        for src, _ in info.inputs:
            if src is not None:
                consumers[src].append(info.id)

    def reach(starts, step):
        seen, todo = set(), list(starts)
        while todo:
            for m in step(todo.pop()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return seen

    for module in dict.fromkeys(m for m in member.values() if m):
        inside = [w for w, m in member.items() if m == module]
        below = reach(inside, lambda w: consumers[w])
        above = reach(inside, lambda w: [s for s, _ in infos[w].inputs if s is not None])
        for w in below & above:
            if not member.get(w):
                member[w] = module


def _module_box(box_id, module, infos, member, names, kinds):
    inside = [i for i in infos if member.get(i.id) == module]
    order = list(names.values())  # the order the model declares its parameters in
    full = [(names[id(i.variable)], i.variable) for i in inside
            if i.is_leaf and id(i.variable) in names]
    full.sort(key=lambda p: order.index(p[0]))
    params = [(name[len(module) + 1:], t) for name, t in full]  # relative: weight, 0.bias
    title = f"{kinds.get(module, 'module')} {module} ({', '.join(p for p, _ in params)})"
    shapes = "\n".join(f"{p} {shape_text(tuple(t.shape))}" for p, t in params)
    ops = ", ".join(dict.fromkeys(_short_op_name(i.name) for i in inside if not i.is_leaf))
    return Node(box_id, "module", [title, shapes, ops], title, walk_ids=[i.id for i in inside])


# --- DOT text ---------------------------------------------------------------

def _node_style(node, direction="LR"):
    label = (_record_label(node.fields, direction) if node.kind != "op"
             else _plain_escape("\n".join(node.fields)))
    style = {"label": label, "tooltip": _plain_escape(node.tooltip),
             "fillcolor": COLOURS[node.kind]}
    if node.kind == "op":
        style.update(shape="box", style="rounded,filled")
    elif node.kind == "module":
        style.update(shape="Mrecord", style="filled")
    else:
        style.update(shape="record", style="filled,dashed" if node.kind == "saved" else "filled")
        if node.saved:  # a leaf or the output that was saved: keep its colour, dash its border
            style.update(style="filled,dashed", color="darkorange", penwidth="2")
    return style


def _edge_style(edge):
    if edge.kind == "saved":
        # a saved tensor sits after the op that made it; the op that saved it need not wait
        # one more column for it (the picture stays as narrow as the chain of ops)
        return {"style": "dashed", "color": "darkorange"}
    if edge.kind == "kept":
        return {"style": "dashed", "color": "darkorange", "dir": "back"}
    if edge.kind == "made":
        return {"style": "dotted", "color": "dimgray", "arrowhead": "none"}
    return {"label": edge.label} if edge.label else {}


def _legend_lines(kinds, direction="LR", labels=None):
    """A small legend in one row, in ``kinds``' order: side by side in the same rank top
    to bottom; left to right, consecutive ranks held together by invisible edges."""
    if not kinds:
        return []
    lines = ["  subgraph cluster_legend {",
             _attrs_line("graph", color="gray80", margin="4")]
    if direction == "TB":
        lines.append("    { rank=same; " + " ".join(f"legend_{k};" for k in kinds) + " }")
    descriptions = {**dict(LEGEND), **(labels or {})}
    for k in kinds:
        style = "rounded,filled" if k == "op" else ("filled,dashed" if k == "saved" else "filled")
        lines.append("  " + _attrs_line(f"legend_{k}", label=descriptions[k], shape="box",
                                        style=style, fillcolor=COLOURS[k], fontsize="9",
                                        height="0.25", margin="0.05,0.02"))
    # invisible edges: left to right they chain the ranks; top to bottom, within the one
    # rank, they keep the legend's order (without them Graphviz lays the row out backwards)
    lines += [f"    legend_{a} -> legend_{b} [style=\"invis\"];" for a, b in zip(kinds, kinds[1:])]
    lines.append("  }")
    return lines


def _record_label(fields, direction="LR"):
    # the cells stack up and down: across the rank direction, which a record's cells take
    # by themselves top to bottom and only when wrapped in { } left to right
    cells = " | ".join(_record_escape(f) for f in fields)
    return cells if direction == "LR" else "{" + cells + "}"


def _record_escape(text):
    text = text.replace("\\", "\\\\")
    for ch in "{}|<>":
        text = text.replace(ch, "\\" + ch)
    return text


def _plain_escape(text):
    """A label that is not a record: only backslashes need escaping (Graphviz reads ``\\n``)."""
    return text.replace("\\", "\\\\")


def _quote(text):
    # inside DOT quotes only " needs a backslash; newlines become Graphviz's \n line break
    return '"' + text.replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(attrs):
    items = [(k, v) for k, v in attrs.items() if v != ""]
    return " [" + ", ".join(f"{k}={_quote(v)}" for k, v in items) + "]" if items else ""


def _attrs_line(name, **attrs):
    return f"  {name}{_attrs(attrs)};"
