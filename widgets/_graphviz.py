"""DOT text -> SVG text, with whatever this machine has; never raises.

Public in the package::

    render_svg(dot, timeout=10.0) -> str          # the SVG picture
    render(dot, timeout=10.0) -> (str, str)        # (SVG, which renderer drew it)
    fitting_direction(dot_for) -> "LR" or "TB"     # the layout that fits a notebook better
    find_programs() -> [(name, path), ...]         # the Graphviz programs found, best first

The renderers, best first:

1. ``dot`` on PATH (Debian's ``graphviz`` package: ``apt-get install graphviz``);
2. ``graphviz-pure``, a Rust port of Graphviz's ``dot`` shipped as a pip package
   (``pip install graphviz-pure``): found on PATH, or next to the running Python
   (a virtual environment's ``bin`` folder is often not on PATH inside Jupyter);
3. a plain matplotlib drawing made here: layers by longest path from the inputs,
   boxes and arrows, and a one-line hint on how to install Graphviz.  It reads the
   subset of DOT that ``widgets._dot`` writes (one statement per line);
4. if even that fails, the DOT text itself in an SVG, with the same hint.

Rendering is cached per (DOT text, programs found), so showing a graph again,
or moving back to a step already seen, costs nothing.
"""
import functools
import os
import re
import shutil
import subprocess
import sys
from xml.sax.saxutils import escape

INSTALL_HINT = ("Drawn without Graphviz: for the full picture install it "
                "(sudo apt-get install graphviz, or pip install graphviz-pure).")


def find_programs():
    """The Graphviz programs this machine has, best first, as (name, path) pairs."""
    found = []
    dot = shutil.which("dot")
    if dot:
        found.append(("dot", dot))
    pure = (shutil.which("graphviz-pure")
            or shutil.which("graphviz-pure", path=os.path.dirname(sys.executable)))
    if pure:
        found.append(("graphviz-pure", pure))
    return found


def render_svg(dot, timeout=10.0):
    """SVG text of a DOT graph, drawn by the best renderer available.

    >>> svg = render_svg('digraph { a -> b }')
    >>> svg.lstrip().startswith(("<?xml", "<svg"))
    True
    """
    return render(dot, timeout)[0]


def render(dot, timeout=10.0):
    """``(svg, renderer)``: the picture and the name of what drew it
    (``"dot"``, ``"graphviz-pure"``, ``"matplotlib"`` or ``"text"``)."""
    return _render_cached(dot, tuple(find_programs()), timeout)


@functools.lru_cache(maxsize=64)
def _render_cached(dot, programs, timeout):
    for name, path in programs:
        try:
            done = subprocess.run([path, "-Tsvg"], input=dot.encode("utf-8"),
                                  capture_output=True, timeout=timeout, check=True)
            return done.stdout.decode("utf-8"), name
        except (OSError, subprocess.SubprocessError):
            continue  # a broken or hanging program: try the next renderer
    try:
        return draw_with_matplotlib(parse_dot(dot)), "matplotlib"
    except Exception:  # the last resort must never fail: show the text
        return _text_svg(dot), "text"


# Left to right is the picture learners know (micrograd's, torchviz's), but a graph of a
# few layers is soon wider than the output area and shrinks to fit it.  An output area
# in a 1400 px wide window is about 1200 px: a picture up to 1100 px wide shows there at
# its own size (node text 10 pt, 13 px); a wider one is drawn top to bottom when that is
# narrower.
LEFT_TO_RIGHT_MAX_PX = 1100


def fitting_direction(dot_for, timeout=10.0):
    """``"LR"`` or ``"TB"``: left to right when that picture is at most
    ``LEFT_TO_RIGHT_MAX_PX`` wide, else whichever of the two is narrower.
    ``dot_for(direction)`` gives the DOT text; renders are cached, so drawing the
    chosen one afterwards costs nothing."""
    from ._svg_fit import natural_size

    widths = {}
    for direction in ("LR", "TB"):
        size = natural_size(render(dot_for(direction), timeout)[0])
        widths[direction] = size[0] if size else 0.0
        if direction == "LR" and widths["LR"] <= LEFT_TO_RIGHT_MAX_PX:
            return "LR"
    return "TB" if widths["TB"] < widths["LR"] else "LR"


def _text_svg(dot):
    lines = [INSTALL_HINT, ""] + dot.splitlines()
    width = 7 * max(len(line) for line in lines) + 20
    rows = "".join(f'<text x="10" y="{16 * (i + 1)}">{escape(line)}</text>'
                   for i, line in enumerate(lines))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{16 * len(lines) + 10}" font-family="monospace" font-size="12">'
            f'{rows}</svg>')


# --- reading the DOT that widgets._dot writes ----------------------------------

_NODE = re.compile(r'^\s*(\w+) \[(.*)\];$')
_EDGE = re.compile(r'^\s*(\w+) -> (\w+)(?: \[(.*)\])?;$')
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[\w.]+)')


class ParsedGraph:
    """Nodes (id -> attributes, in order), edges (src, dst, attributes), legend, label."""

    def __init__(self):
        self.nodes, self.edges, self.legend = {}, [], []
        self.label = None  # the top-level graph label (a message), once read


def parse_dot(dot):
    """Read one-statement-per-line DOT (what ``widgets._dot`` writes) into a ParsedGraph."""
    graph = ParsedGraph()
    depth = 0  # inside how many subgraphs (the legend's cluster) the line is
    for line in dot.splitlines():
        stripped = line.strip()
        if stripped.startswith("subgraph"):
            depth += 1
        elif stripped == "}" and depth:
            depth -= 1
        edge = _EDGE.match(line)
        if edge:
            attrs = _parse_attrs(edge.group(3) or "")
            if attrs.get("style") != "invis":
                graph.edges.append((edge.group(1), edge.group(2), attrs))
            continue
        node = _NODE.match(line)
        if not node:
            continue
        name, attrs = node.group(1), _parse_attrs(node.group(2))
        if name == "graph":
            if depth == 0 and "label" in attrs:  # the top level's message, not the legend's
                graph.label = _label_lines(attrs["label"])[0]
        elif name in ("node", "edge"):
            continue
        elif name.startswith("legend_"):
            graph.legend.append(attrs)
        else:
            attrs["fields"] = (_label_lines(attrs.get("label", name))
                               if "record" not in attrs.get("shape", "").lower()
                               else _record_fields(attrs.get("label", name)))
            graph.nodes[name] = attrs
    return graph


def _parse_attrs(text):
    attrs = {}
    for key, value in _ATTR.findall(text):
        if value.startswith('"'):
            value = value[1:-1].replace('\\"', '"')
        attrs[key] = value
    return attrs


def _record_fields(label):
    """``{a | b\\nc}`` -> ``["a", "b\\nc"]``: the cells, split on unescaped bars."""
    return _unescape(label, record=True)


def _label_lines(label):
    """A plain label as one cell (Graphviz's ``\\n``, ``\\l`` become newlines)."""
    return _unescape(label, record=False)


def _unescape(label, record):
    fields, current, i = [], [], 0
    while i < len(label):
        ch = label[i]
        if ch == "\\" and i + 1 < len(label):
            nxt = label[i + 1]
            current.append("\n" if nxt in "nlr" else nxt)
            i += 2
            continue
        if record and ch == "|":
            fields.append("".join(current).strip())
            current = []
        elif not (record and ch in "{}"):
            current.append(ch)
        i += 1
    fields.append("".join(current).strip())
    return fields


# --- the matplotlib drawing ----------------------------------------------------

FONT_SIZE = 8
CHAR_W, LINE_H, PAD = 0.62 * FONT_SIZE, 1.3 * FONT_SIZE, 5  # in points
GAP_X, GAP_Y = 40, 14


def layers_by_longest_path(nodes, edges):
    """Layer of each node: 0 for inputs, else 1 + the largest layer among its predecessors.

    Kahn's order, so it is iterative (no recursion limit on deep graphs); a node left on a
    cycle (never the case for an autograd graph) stays in the layer it reached.
    """
    preds = {n: [] for n in nodes}
    succs = {n: [] for n in nodes}
    for src, dst in edges:
        if src in preds and dst in preds:
            preds[dst].append(src)
            succs[src].append(dst)
    waiting = {n: len(preds[n]) for n in nodes}
    layer = {n: 0 for n in nodes}
    ready = [n for n in nodes if waiting[n] == 0]
    while ready:
        n = ready.pop()
        for m in succs[n]:
            layer[m] = max(layer[m], layer[n] + 1)
            waiting[m] -= 1
            if waiting[m] == 0:
                ready.append(m)
    return layer


def _box_size(fields):
    widths = [max(len(line) for line in f.split("\n")) * CHAR_W + 2 * PAD for f in fields]
    height = max(f.count("\n") + 1 for f in fields) * LINE_H + 2 * PAD
    return widths, height


def layout(graph):
    """Positions (x, y of the top-left corner), cell widths and heights of every node.

    Columns are the layers; within a column, nodes are ordered by the mean height of
    their neighbours (inputs on a sweep to the right, consumers on a sweep back), the
    usual barycentre heuristic, which keeps most arrows short and uncrossed.
    """
    ids = list(graph.nodes)
    links = [(s, d) for s, d, _ in graph.edges if s in graph.nodes and d in graph.nodes]
    layer = layers_by_longest_path(ids, links)
    sizes = {n: _box_size(graph.nodes[n]["fields"]) for n in ids}
    columns = {}
    for n in ids:
        columns.setdefault(layer[n], []).append(n)
    centre = {n: float(i) for i, n in enumerate(ids)}

    def restack(members):
        total = sum(sizes[n][1] + GAP_Y for n in members)
        y = -total / 2
        for n in members:
            centre[n] = y + sizes[n][1] / 2
            y += sizes[n][1] + GAP_Y

    def mean_y(n, neighbours):
        ys = [centre[m] for m in neighbours.get(n, ())]
        return sum(ys) / len(ys) if ys else centre[n]

    inputs, consumers = {}, {}
    for s, d in links:
        inputs.setdefault(d, []).append(s)
        consumers.setdefault(s, []).append(d)
    for col in sorted(columns):
        restack(columns[col])
    for _ in range(2):
        for col in sorted(columns):
            columns[col].sort(key=lambda n: mean_y(n, inputs))
            restack(columns[col])
        for col in sorted(columns, reverse=True):
            columns[col].sort(key=lambda n: mean_y(n, consumers))
            restack(columns[col])
    top = min(centre[n] - sizes[n][1] / 2 for n in ids)
    x, placed = 10.0, {}
    for col in sorted(columns):
        for n in columns[col]:
            widths, height = sizes[n]
            placed[n] = (x, centre[n] - height / 2 - top + 10, widths, height)
        x += max(sum(sizes[n][0]) for n in columns[col]) + GAP_X
    return placed


def _colour(name, default):
    """A colour matplotlib knows: Graphviz's X11 names (``gray50``) that CSS lacks fall back."""
    from matplotlib.colors import is_color_like

    return name if name and is_color_like(name) else default


def draw_with_matplotlib(graph):
    """SVG text: boxes in layers, arrows between them, the legend and the install hint."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from ._base import figure_to_svg

    placed = layout(graph)
    width = max([x + sum(w) for x, _, w, _ in placed.values()] + [300]) + 10
    graph_height = max([y + h for _, y, _, h in placed.values()] + [20])
    footer = [graph.label] if graph.label else []
    footer.append(INSTALL_HINT)
    height = graph_height + LINE_H * (len(footer) + 1) + (30 if graph.legend else 0) + 10
    fig = Figure(figsize=(width / 72, height / 72))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    for node_id, (x, y, widths, h) in placed.items():
        attrs = graph.nodes[node_id]
        style = attrs.get("style", "")
        left = x
        for k, (cell, w) in enumerate(zip(attrs["fields"], widths)):
            box = Rectangle((left, y), w, h, facecolor=_colour(attrs.get("fillcolor"), "white")
                            if "filled" in style else "white",
                            edgecolor=_colour(attrs.get("color"), "black"),
                            linewidth=float(attrs.get("penwidth", 1)),
                            linestyle="--" if "dashed" in style else "-", zorder=2)
            box.set_gid(node_id if k == 0 else f"{node_id}_cell{k}")
            ax.add_patch(box)
            ax.text(left + w / 2, y + h / 2, cell, ha="center", va="center",
                    fontsize=FONT_SIZE, family="DejaVu Sans", zorder=3)
            left += w
    for src, dst, attrs in graph.edges:
        if src not in placed or dst not in placed:
            continue
        sx, sy, sw, sh = placed[src]
        dx, dy, _, dh = placed[dst]
        start, end = (sx + sum(sw), sy + sh / 2), (dx, dy + dh / 2)
        arrow = {"none": "-"}.get(attrs.get("arrowhead"), "<-" if attrs.get("dir") == "back" else "->")
        line = {"dashed": "--", "dotted": ":"}.get(attrs.get("style"), "-")
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle=arrow, color=_colour(attrs.get("color"), "black"),
                                    linestyle=line, shrinkA=0, shrinkB=0), zorder=1)
        # arrows under the boxes: a long arrow passes behind a box instead of over its text
        if attrs.get("label"):
            ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 - 3, attrs["label"],
                    ha="center", va="bottom", fontsize=FONT_SIZE - 1)
    y = graph_height + 20
    if graph.legend:
        x = 10
        for entry in graph.legend:
            text = entry.get("label", "")
            w = len(text) * CHAR_W + 2 * PAD
            ax.add_patch(Rectangle((x, y), w, LINE_H + PAD, facecolor=_colour(entry.get("fillcolor"), "white"),
                                   edgecolor="black",
                                   linestyle="--" if "dashed" in entry.get("style", "") else "-"))
            ax.text(x + w / 2, y + (LINE_H + PAD) / 2, text, ha="center", va="center",
                    fontsize=FONT_SIZE - 1)
            x += w + 8
        y += 30
    for line in footer:
        ax.text(10, y, line, ha="left", va="top", fontsize=FONT_SIZE)
        y += LINE_H
    return figure_to_svg(fig)
