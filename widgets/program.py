"""``show_program(program)``: the graph of a whole program -- what a model computes, captured
once (``learntorch.fx``) or exported (ONNX) -- as a picture you can step through.

``show_graph(loss)`` draws the autograd graph behind one tensor: the backward nodes of one
run.  ``show_program`` draws a *program*: the forward ops a model runs, written down so
that it can run again -- in learntorch (``learntorch.fx.capture``) or in another runtime
(``learntorch.onnx.export``).  Inputs are blue, the weights the program holds (fx
``get_attr`` nodes, ONNX initializers) wheat, ops grey -- with their attributes and the
type of what they make, ONNX's symbolic dimensions (``batch``) by name -- and outputs
green; ``groups`` boxes nodes together.

    >>> import learntorch as torch
    >>> from widgets import show_program
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    >>> show_program(torch.fx.capture(model, torch.randn(4, 3)), groups="modules")
    ProgramView(learntorch.fx graph: 1 input, 2 attributes, 2 ops, 1 output; 2 groups)

An exported model (an ``ONNXProgram``, an ``onnx.ModelProto`` or an ``.onnx`` path)::

    program = torch.onnx.export(model, torch.randn(1, 3), "model.onnx",
                                input_names=["x"], output_names=["y"],
                                dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    show_program(program)            # x float[batch, 3] -> Gemm transB=1 -> Relu -> y

Building blocks: ``widgets._program_dot.program_graph(program, groups, show_weights)``
(the picture model), drawn like every graph by ``widgets._graphviz.render``.
"""
from ._dot_picture import (LAYOUT_CHOICES, DotPicture, as_tuple, check_direction,
                           plural)
from ._program_dot import program_graph

NO_HIGHLIGHT = ""
# what each kind of node is called in the summary, per kind of program
_WORDS = {"fx": {"input": "input", "initializer": "attribute", "op": "op", "output": "output"},
          "onnx": {"input": "input", "initializer": "initializer", "op": "node",
                   "output": "output"}}
_TITLES = {"fx": "learntorch.fx graph", "onnx": "ONNX graph"}


def show_program(program, *, groups=None, show_weights=True, direction="auto"):
    """The graph of ``program`` as a ``ProgramView`` (displays itself in Jupyter).

    * ``program`` -- a ``learntorch.fx.Graph`` (``learntorch.fx.capture(model, x)``, or an
      exported program's ``.graph``: what was captured before the conversion), or an ONNX
      model: an ``ONNXProgram`` (what ``learntorch.onnx.export`` returns), an
      ``onnx.ModelProto`` or the path of an ``.onnx`` file;
    * ``groups`` -- boxes around nodes: ``"modules"`` (fx graphs: the ops that ran in each
      module, with its parameters) or a dict ``{label: [node, ...]}`` of fx nodes or node
      names, or ONNX node or value names (a compiler's fused groups, say);
    * ``show_weights`` -- False leaves out the initializers (``get_attr`` nodes): only the
      ops and the data flowing between them;
    * ``direction`` -- ``"LR"``, ``"TB"`` or ``"auto"`` (left to right when that fits a
      notebook's width, else the narrower), as ``show_graph``'s.

    >>> import learntorch as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    >>> graph = torch.fx.capture(model, torch.randn(4, 3))
    >>> view = show_program(graph, groups={"fused": ["linear", "tanh"]}, show_weights=False)
    >>> view.graph.clusters
    [Cluster(g0, 'fused', ['n3', 'n4'])]
    """
    return ProgramView(program, groups=groups, show_weights=show_weights, direction=direction)


class ProgramView(DotPicture):
    """The state of one program picture: ``.graph`` (the picture model, ``.source`` ``"fx"``
    or ``"onnx"``), ``.dot``, ``.svg()``, ``set_highlight(names)`` (the program's names or
    DOT ids), ``set_show_weights(bool)``, ``set_direction(...)``, ``describe(name)`` and
    ``counts()``.

    >>> import learntorch as torch
    >>> graph = torch.fx.capture(torch.nn.ReLU(), torch.randn(2))
    >>> view = ProgramView(graph)
    >>> print(view.describe("relu"))
    relu = Relu.apply(input) # float32[2] <top>: ReLU
    >>> view.dot == ProgramView(graph).dot      # deterministic
    True
    """

    def __init__(self, program, *, groups=None, show_weights=True, highlight=(),
                 direction="auto"):
        check_direction(direction)
        self.program, self.groups, self.show_weights = program, groups, bool(show_weights)
        self.layout = direction
        self.highlighted = as_tuple(highlight)
        self.refresh()

    # --- state ---------------------------------------------------------------
    def refresh(self):
        """Build the picture model again (after ``set_show_weights``)."""
        self.graph = program_graph(self.program, self.groups, self.show_weights)
        self._choose_direction()
        self._redraw()

    def set_show_weights(self, show):
        """Draw the initializers (``get_attr`` nodes) or leave them out."""
        self.show_weights = bool(show)
        self.refresh()

    def set_highlight(self, keys):
        """Highlight nodes by the program's names (``"relu"``, ``"/linear/Gemm"``,
        ``"0.weight"``) or DOT ids; ``()`` clears the highlight."""
        keys = as_tuple(keys)
        unknown = [k for k in keys if self.graph.node_id(k) is None]
        if unknown:
            raise KeyError(f"no node {unknown[0]!r} in this graph; its nodes are "
                           f"{', '.join(self.graph.names.values())}")
        self.highlighted = keys
        self._redraw()

    def counts(self):
        """``{"input": ..., "initializer": ..., "op": ..., "output": ..., "groups": ...}``."""
        found = {kind: 0 for kind in ("input", "initializer", "op", "output")}
        for node in self.graph.nodes:
            found[node.kind] += 1
        found["groups"] = len(self.graph.clusters)
        return found

    def describe(self, key):
        """One node in words: its statement (fx) or its inputs, outputs and attributes (ONNX)."""
        node_id = self.graph.node_id(key)
        if node_id is None:
            return f"no node {key!r} in this graph"
        return self.graph.details.get(node_id, self.graph.by_id[node_id].tooltip)

    def __repr__(self):
        counts, words = self.counts(), _WORDS[self.graph.source]
        parts = [plural(counts[kind], words[kind]) for kind in ("input", "initializer", "op",
                                                                 "output")
                 if counts[kind] or kind != "initializer" or self.show_weights]
        groups = f"; {plural(counts['groups'], 'group')}" if counts["groups"] else ""
        return f"ProgramView({_TITLES[self.graph.source]}: {', '.join(parts)}{groups})"

    # --- view ----------------------------------------------------------------
    def _build_view(self):
        import ipywidgets as w

        node = w.SelectionSlider(options=self._node_options(), value=NO_HIGHLIGHT,
                                 description="node", continuous_update=True, readout=False,
                                 layout=w.Layout(width="420px"),
                                 tooltip="Highlight one node and read what it does")
        node_name = w.HTML(f"<code>{node.label}</code>")
        weights = w.Checkbox(value=self.show_weights, description="weights", indent=False,
                             tooltip="Draw the initializers (the weights the program holds)")
        layout = w.Dropdown(options=list(LAYOUT_CHOICES.items()), value=self.layout,
                            description="layout",
                            tooltip="Which way the graph runs; auto: left to right when it fits")
        self._picture = w.HTML(self._picture_html(), layout=w.Layout(width="100%"))
        self._info = w.HTML(self._info_html())

        def on_node(change):
            node_name.value = f"<code>{node.label}</code>"
            self.set_highlight(() if change["new"] == NO_HIGHLIGHT else change["new"])

        def on_weights(change):
            self.set_show_weights(change["new"])
            # a hidden weight cannot stay highlighted: the slider lists what is drawn
            current = node.value if self.graph.node_id(node.value) else NO_HIGHLIGHT
            node.options = self._node_options()
            node.value = current

        node.observe(on_node, names="value")
        weights.observe(on_weights, names="value")
        layout.observe(lambda change: self.set_direction(change["new"]), names="value")
        self._controls = {"node": node, "node_name": node_name, "weights": weights,
                          "layout": layout}
        return w.VBox([w.HBox([layout, weights]), w.HBox([node, node_name]), self._picture,
                       self._info])

    def _node_options(self):
        labels = [(f"{self.graph.names[n.id]} ({n.fields[0]})" if n.kind == "op"
                   else f"{self.graph.names[n.id]} ({n.kind})", n.id) for n in self.graph.nodes]
        return [("none", NO_HIGHLIGHT)] + labels

    def _info_html(self):
        from html import escape

        if not self.highlighted:
            return "<p>Move the node slider to highlight a node and read what it does.</p>"
        return "".join(f"<p><code>{escape(self.describe(k))}</code></p>"
                       for k in self.highlighted)

    def _redraw(self):
        if self._view is not None:
            self._picture.value = self._picture_html()
            self._info.value = self._info_html()
