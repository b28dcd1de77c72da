"""The BackpropStepper's picture: the graph behind the loss, coloured by how far backward got.

Colours: the node running now is orange, nodes that already ran are green,
nodes still waiting are white; a leaf box turns purple once its ``.grad`` is
set.  Edges point the way gradients flow (from the loss towards the leaves).

The picture is drawn by Graphviz's ``dot`` (Debian's, or graphviz-pure's); when
neither is installed ``render_svg`` says so with ``DotMissing`` and the stepper
shows its text panel alone.
"""
import html


class DotMissing(RuntimeError):
    """Graphviz's ``dot`` program is not installed, so no picture can be drawn."""


_FILL = {"current": "#ffb74d", "done": "#c8e6c9", "waiting": "#ffffff", "leaf_set": "#e1bee7"}


def _escape(text):
    return html.escape(str(text), quote=True)


def stepper_dot(nodes, leaf_labels_by_node, current_id, done_ids, filled_leaf_ids):
    """DOT source for the graph ``nodes`` (``walk`` NodeInfos) in one state of the stepper.

    >>> from learntorch.autograd.graph import walk
    >>> import learntorch as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> dot = stepper_dot(walk((w * 3).sum()), {2: "w"}, current_id=1, done_ids={0}, filled_leaf_ids=())
    >>> 'n1 [label=<<b>MulBackward0</b>>' in dot
    True
    """
    lines = ["digraph backprop {", '  graph [rankdir=TB, nodesep=0.25, ranksep=0.3];',
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
             'height=0.3];', '  edge [fontname="Helvetica", fontsize=9, color="#555555"];']
    for info in nodes:
        if info.id == current_id:
            fill = _FILL["current"]
        elif info.is_leaf and info.id in filled_leaf_ids:
            fill = _FILL["leaf_set"]
        elif info.id in done_ids:
            fill = _FILL["done"]
        else:
            fill = _FILL["waiting"]
        pen = ' penwidth=2.5 color="#e65100"' if info.id == current_id else ""
        if info.is_leaf:
            label = leaf_labels_by_node[info.id]
            shape = "x".join(str(s) for s in info.output_shapes[0]) or "scalar"
            text = f"<b>{_escape(label)}</b><br/>{_escape(shape)}"
        else:
            text = f"<b>{_escape(info.name)}</b>"
        lines.append(f'  n{info.id} [label=<{text}>, fillcolor="{fill}", tooltip="node {info.id}"'
                     f'{pen}];')
    for info in nodes:
        for (target, _), shape in zip(info.inputs, info.input_shapes):
            if target is None:
                continue
            size = "x".join(str(s) for s in shape) if shape else "scalar"
            lines.append(f'  n{info.id} -> n{target} [label=" {size}"];')
    lines.append("}")
    return "\n".join(lines)


def render_svg(dot_source):
    """SVG text of a DOT graph, drawn by Graphviz's ``dot``; ``DotMissing`` when it is absent."""
    import graphviz

    try:
        svg = graphviz.Source(dot_source).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound as error:
        raise DotMissing(
            "Graphviz's `dot` program was not found, so the graph cannot be drawn; install it "
            "(`sudo apt-get install graphviz`, or `pip install graphviz-pure`)") from error
    # drop the XML prolog and comments (they name the Graphviz version): same text on every machine
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
