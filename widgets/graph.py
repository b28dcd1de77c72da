"""``show_graph(loss)``: the graph autograd recorded behind a tensor, drawn micrograd's way.

Values are records ``name (shape) / data / grad``, their cells stacked (blue: leaves that
require grad, green: the output, orange and dashed: tensors saved for backward); ops are
small grey boxes named after torch's backward nodes (``MulBackward0`` drawn as ``Mul``),
with the shape they computed; arrows go left to right, the way the forward pass went.  More
than 6 values are summarised (dtype, min, mean, max), and the legend is one row.

    >>> import learntorch as torch
    >>> from widgets import show_graph
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> w = torch.tensor([3., 4.], requires_grad=True)
    >>> loss = (x * w).sum()
    >>> show_graph(loss, params={"x": x, "w": w})
    GraphView(7 nodes: 3 values, 4 ops)

Building blocks, for other widgets (``BackpropStepper`` draws its current node with them)::

    widgets._dot.build_dot(tensor, params=None, highlight=(), styles=None, **options) -> str
    widgets._dot.build_graph(tensor, params=None, *, model=None, collapse_modules=False,
                             show_data=True, show_grad=True, show_saved=True,
                             max_values=6) -> Graph      # .nodes, .edges, .to_dot(highlight)
    widgets._graphviz.render_svg(dot) -> str              # dot, graphviz-pure or matplotlib
    widgets._graphviz.render(dot) -> (svg, renderer)

Node ids are stable: ``n<i>`` is node ``i`` of ``learntorch.autograd.graph.walk(tensor)``
(the order backward runs them), ``v<i>`` the leaf behind AccumulateGrad node ``n<i>``,
``out`` the output, ``s0, s1, ...`` saved tensors, ``m0, m1, ...`` collapsed modules.
"""
import learntorch

from ._dot import MAX_VALUES, build_graph, shape_text as _shape
from ._dot_picture import (LAYOUT_CHOICES, DotPicture, as_tuple as _as_tuple,
                           check_direction as _check_direction, plural as _plural)

# the display dropdown: label -> (show_data, show_grad)
DISPLAY_CHOICES = {"data and grad": (True, True), "data": (True, False),
                   "grad": (False, True), "shapes only": (False, False)}
NO_HIGHLIGHT = -1


def show_graph(tensor, params=None, *, model=None, collapse_modules=False, highlight=(),
               max_values=MAX_VALUES, direction="auto"):
    """The recorded graph behind ``tensor`` as a ``GraphView`` (displays itself in Jupyter).

    * ``params`` -- labels: a dict name -> tensor, e.g. ``dict(model.named_parameters())``
      or ``{"x": x, "w": w}``; the output is labelled by its name here, else "output";
    * ``model`` -- an ``nn.Module``: labels its parameters and names collapsed modules;
    * ``collapse_modules`` -- True: one box per submodule owning parameters
      (``Linear 0 (weight, bias)``); an int N: group by the first N parts of the names;
    * ``highlight`` -- walk ids (ints) or node ids (``"n3"``) drawn with a red border;
    * ``max_values`` -- tensors up to this many elements show their values, larger
      ones a summary (dtype, min, mean, max);
    * ``direction`` -- ``"LR"`` (the forward pass left to right), ``"TB"`` (top to bottom)
      or ``"auto"``: left to right unless that is wider than a notebook shows at full size (1100 px),
      else the narrower of the two.  The picture shrinks to the output's width.

    >>> import learntorch as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    >>> loss = model(torch.randn(5, 3)).pow(2).mean()
    >>> show_graph(loss, model=model, collapse_modules=True)
    GraphView(8 nodes: 3 values, 3 ops, 2 modules)
    """
    return GraphView(tensor, params, model=model, collapse_modules=collapse_modules,
                     highlight=highlight, max_values=max_values, direction=direction)


class GraphView(DotPicture):
    """The state of one graph picture: what to show, what is highlighted, the DOT and SVG.

    ``.graph`` (nodes and edges), ``.dot`` (DOT text, deterministic), ``.svg()``,
    ``.renderer`` (what drew it), ``refresh()`` (read data and grads again, e.g. after
    ``backward()``), ``set_highlight(ids)``, ``set_display(show_data, show_grad)``,
    ``describe(id)`` (a node in words), ``set_direction("LR" | "TB" | "auto")`` and
    ``.direction`` (the layout drawn).

    >>> import learntorch as torch
    >>> a = torch.tensor(2., requires_grad=True)
    >>> view = GraphView(a * a, {"a": a})
    >>> [node.id for node in view.graph.nodes]
    ['out', 'n0', 'n1', 'v1']
    >>> view.dot == GraphView(a * a, {"a": a}).dot   # deterministic
    True
    """

    def __init__(self, tensor, params=None, *, model=None, collapse_modules=False,
                 show_data=True, show_grad=True, show_saved=True, highlight=(), max_values=MAX_VALUES,
                 direction="auto"):
        _check_arguments(tensor, params, model)
        _check_direction(direction)
        self.layout = direction  # what was asked for; .direction is what is drawn
        self.tensor, self.params, self.model = tensor, params, model
        self.collapse_modules, self.show_saved, self.max_values = (collapse_modules, show_saved,
                                                                   max_values)
        self.show_data, self.show_grad = show_data, show_grad
        self.highlighted = _as_tuple(highlight)
        self.refresh()

    # --- state ---------------------------------------------------------------
    def refresh(self):
        """Read the tensors again (values and ``.grad`` change after ``backward()``/``step()``)."""
        self.graph = build_graph(self.tensor, self.params, model=self.model,
                                 collapse_modules=self.collapse_modules,
                                 show_data=self.show_data, show_grad=self.show_grad,
                                 show_saved=self.show_saved, max_values=self.max_values)
        self._choose_direction()
        self._redraw()

    def set_highlight(self, ids):
        """Highlight walk ids (ints) or node ids (strs); ``()`` clears the highlight."""
        self.highlighted = _as_tuple(ids)
        self._redraw()

    def set_display(self, show_data=None, show_grad=None):
        """Show or hide the data and grad cells of the value records."""
        if show_data is not None:
            self.show_data = bool(show_data)
        if show_grad is not None:
            self.show_grad = bool(show_grad)
        self.refresh()

    @property
    def message(self):
        """Why there is no graph to draw ("" when there is one)."""
        return self.graph.message

    def counts(self):
        """``{"values": ..., "ops": ..., "modules": ...}``: the nodes drawn, by kind."""
        nodes = self.graph.nodes
        return {"values": sum(n.is_value for n in nodes),
                "ops": sum(n.kind == "op" for n in nodes),
                "modules": sum(n.kind == "module" for n in nodes)}

    def describe(self, key):
        """One node in words: a walk id (int) or a node id (str).

        >>> import learntorch as torch
        >>> a = torch.tensor([1., 2.], requires_grad=True)
        >>> print(GraphView((a * a).sum(), {"a": a}).describe(1))
        n1 MulBackward0: inputs (2,) from n2, (2,) from n2; output (2,); saved (2,), (2,)
        """
        node_id = self.graph.node_id(key)
        if node_id is None:
            return f"no node {key!r} in this graph"
        node = self.graph.by_id[node_id]
        if node.kind != "op" or len(node.walk_ids) != 1:
            return f"{node_id}: " + "; ".join(f.replace("\n", " ") for f in node.fields)
        info = self.graph.infos[node.walk_ids[0]]
        if info.is_leaf:
            return (f"{node_id} AccumulateGrad: adds the incoming gradient into .grad of "
                    f"v{info.id} {_shape(info.output_shapes[0])}")
        inputs = ", ".join("no grad needed" if src is None else f"{_shape(shape)} from n{src}"
                           for (src, _), shape in zip(info.inputs, info.input_shapes))
        outputs = ", ".join(_shape(s) for s in info.output_shapes if s is not None)
        saved = (", ".join(_shape(s) for s in info.saved_shapes) if info.saved_shapes
                 else "nothing (or freed by backward)")
        return f"{node_id} {info.name}: inputs {inputs}; output {outputs}; saved {saved}"

    def __repr__(self):
        c = self.counts()
        parts = [_plural(c["values"], "value"), _plural(c["ops"], "op")]
        if c["modules"]:
            parts.append(_plural(c["modules"], "module"))
        text = f"GraphView({_plural(len(self.graph.nodes), 'node')}: {', '.join(parts)})"
        return text[:-1] + "; no graph recorded: the tensor does not require grad)" \
            if self.message else text

    # --- view ----------------------------------------------------------------
    def _build_view(self):
        import ipywidgets as w

        display = w.Dropdown(options=list(DISPLAY_CHOICES), value=self._display_label(),
                             description="show", tooltip="What the value records show")
        layout = w.Dropdown(options=list(LAYOUT_CHOICES.items()), value=self.layout,
                            description="layout",
                            tooltip="Which way the graph runs; auto: left to right when it fits")
        options = [("none", NO_HIGHLIGHT)] + [
            (f"n{i} {name}", i) for i, name in enumerate(self.graph.walk_names)]
        # the node's name is shown in a label of its own: a slider's read-out is cut
        # to a few characters, too short for "n12 NativeBatchNormBackward0"
        node = w.SelectionSlider(options=options, value=NO_HIGHLIGHT, description="node",
                                 continuous_update=True, readout=False,
                                 layout=w.Layout(width="420px"),
                                 tooltip="Highlight one node; nodes are numbered in the "
                                         "order backward runs them")
        node_name = w.HTML(f"<code>{options[0][0]}</code>")
        refresh = w.Button(description="refresh", icon="refresh",
                           tooltip="Read data and .grad again (e.g. after loss.backward())")
        self._picture = w.HTML(self._picture_html(), layout=w.Layout(width="100%"))
        self._info = w.HTML(self._info_html())

        def on_display(change):
            self.set_display(*DISPLAY_CHOICES[change["new"]])

        def on_node(change):
            node_name.value = f"<code>{node.label}</code>"
            self.set_highlight(() if change["new"] == NO_HIGHLIGHT else change["new"])

        display.observe(on_display, names="value")
        layout.observe(lambda change: self.set_direction(change["new"]), names="value")
        node.observe(on_node, names="value")
        refresh.on_click(lambda _: self.refresh())
        self._controls = {"display": display, "layout": layout, "node": node,
                          "node_name": node_name, "refresh": refresh}
        # two rows, so that no control covers another in a narrow output area
        return w.VBox([w.HBox([display, layout, refresh]), w.HBox([node, node_name]),
                       self._picture, self._info])

    def _display_label(self):
        return next(k for k, v in DISPLAY_CHOICES.items() if v == (self.show_data, self.show_grad))

    def _info_html(self):
        from html import escape

        if self.message:
            return f"<p>{escape(self.message)}</p>"
        if not self.highlighted:
            return "<p>Move the node slider to highlight a node and read what it holds.</p>"
        return "".join(f"<p><code>{escape(self.describe(k))}</code></p>" for k in self.highlighted)

    def _redraw(self):
        if self._view is not None:
            self._picture.value = self._picture_html()
            self._info.value = self._info_html()


def _check_arguments(tensor, params, model):
    if not isinstance(tensor, learntorch.Tensor):
        raise TypeError(f"show_graph expects a learntorch Tensor (e.g. a loss), got "
                        f"{type(tensor).__name__}; call it on the result of a computation.")
    if isinstance(params, learntorch.nn.Module):
        raise TypeError("params is a dict name -> tensor; for a module pass "
                        "params=dict(model.named_parameters()) or model=model.")
    if params is not None and not hasattr(params, "items"):
        raise TypeError(f"params must be a dict name -> tensor, e.g. "
                        f"dict(model.named_parameters()) or {{'x': x}}; got {type(params).__name__}.")
    if model is not None and not isinstance(model, learntorch.nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}.")
