"""The words and numbers the BackpropStepper shows for one step (plain text and HTML).

Both forms are built from the same sentences, so the printed description and
the live panel never disagree.  Values are shown in full for small tensors and
as a summary (shape, mean, min, max) for large ones, with a fixed precision so
that the output is the same on every run.
"""
import html

import numpy as np

from ._stepper_rules import local_rule

# tensors with at most this many elements are printed in full
SMALL_TENSOR = 24
PRECISION = 4


def format_values(array, small=SMALL_TENSOR):
    """The values of a (recorded) gradient: all of them up to ``small`` elements, else a summary.

    >>> format_values(np.array([1.0, -0.5]))
    '[ 1. , -0.5]'
    >>> format_values(np.zeros((10, 10)))
    'shape (10, 10): mean 0, min 0, max 0'
    >>> format_values(None)
    'None'
    """
    if array is None:
        return "None"
    if array.size <= small:
        values = np.array2string(array, precision=PRECISION, separator=", ", suppress_small=True)
        return values.replace("\n", "\n    ")  # the rows of a matrix line up, indented
    return (f"shape {tuple(array.shape)}: mean {_number(array.mean())}, "
            f"min {_number(array.min())}, max {_number(array.max())}")


def _number(value):
    return np.format_float_positional(float(value), precision=PRECISION, trim="-")


def shape_text(shape):
    return str(tuple(int(s) for s in shape))


def argument_name(name, position):
    """How the text names an input of a node: ``input a`` with its name in the node's rule
    (``a``, ``b``, ``W``...), else ``input <position>``.  Always "input ...", so that it is never
    taken for a leaf that happens to have the same name (a leaf is "leaf b").

    >>> argument_name("MulBackward0", 1), argument_name("MyFunctionBackward", 0)
    ('input b', 'input 0')
    """
    rule = local_rule(name)
    if rule is not None and position in rule.args:
        return f"input {rule.args[position][0]}"
    return f"input {position}"


def broadcast_sentence(sent):
    """Why a sent gradient has a smaller shape than the returned one (None when it has not)."""
    if not sent.broadcast:
        return None
    return (f"returned shape {shape_text(sent.returned.shape)}, summed over dims "
            f"{sent.summed_dims} to match input shape {shape_text(sent.sent.shape)}")


def receiver_text(sent, leaf_labels_by_node):
    """Where a gradient goes: the next node, or for a leaf its ``.grad``."""
    label = leaf_labels_by_node.get(sent.receiver_id)
    if label is not None:
        return f"leaf {label}, into {label}.grad (AccumulateGrad, node {sent.receiver_id})"
    return f"{sent.receiver_name} (node {sent.receiver_id})"


def headline(position, n_steps, record, next_name):
    """One line: which step this is, or what happens next when no step has run."""
    if record is None:
        return (f"Step 0 of {n_steps}: nothing has run yet; Next runs the first node "
                f"({next_name}) with g = ∂loss/∂loss = 1")
    return f"Step {position} of {n_steps}: {record.name} (node {record.node_id})"


def step_lines(record, leaf_labels, leaf_labels_by_node, uses=1):
    """The step as (kind, text) lines: kinds are "incoming", "rule", "sent", "broadcast", "leaf".

    ``uses`` is how many edges of the graph lead into this node: a value used
    twice in the forward gets the sum of two gradients (the multivariable chain
    rule).  The kind lets the HTML form style each line; the plain text joins them.
    """
    lines = []
    paths = f" (the sum of the {uses} gradients sent here, one per use)" if uses > 1 else ""
    # at a leaf the gradient that arrives is ∂loss/∂leaf itself
    out = leaf_labels[record.leaf_index] if record.is_leaf else "out"
    for i, g in enumerate(record.grad_outputs):
        which = f" (output {i})" if len(record.grad_outputs) > 1 else ""
        shape = "None" if g is None else shape_text(g.shape)
        lines.append(("incoming", f"incoming g = ∂loss/∂{out}{which}{paths}, shape {shape}: "
                                  f"{format_values(g)}"))
    if record.is_leaf:
        label = leaf_labels[record.leaf_index]
        if record.leaf_grad_before is None:
            action = f"{label}.grad was None, so {label}.grad = g"
        else:
            action = (f"{label}.grad += g (it held a gradient from an earlier backward: "
                      "gradients accumulate until you zero them)")
        lines.append(("leaf", f"{action}: {label}.grad = {format_values(record.leaf_grad)}"))
        return lines
    rule = local_rule(record.name)
    if rule is None:
        lines.append(("rule", f"local derivative: see the node's backward ({record.name})"))
    else:
        lines.append(("rule", f"this node's forward: {rule.forward}"))
    for sent in record.sent:
        arg = argument_name(record.name, sent.position)
        formula = ""
        if rule is not None and sent.position in rule.args:
            _, local, chain = rule.args[sent.position]
            formula = f"{local}, so it gets {chain} = "
        lines.append(("sent", f"{arg} -> {receiver_text(sent, leaf_labels_by_node)}: "
                              f"{formula}{format_values(sent.sent)}"))
        reason = broadcast_sentence(sent)
        if reason is not None:
            lines.append(("broadcast", f"{arg}: {reason}"))
    return lines


def leaf_lines(leaf_labels, leaf_shapes, leaf_grads):
    """Every leaf's ``.grad`` as recorded at this step."""
    return [f"{label} {shape_text(shape)}: .grad = {format_values(grad)}"
            for label, shape, grad in zip(leaf_labels, leaf_shapes, leaf_grads)]


_STYLES = {
    "incoming": "color:#1f4e9a",
    "rule": "color:#444",
    "sent": "color:#1b6e2a",
    "broadcast": "color:#a34a00;font-weight:bold",
    "leaf": "color:#6a1b9a;font-weight:bold",
}


def panel_html(title, lines, leaves, note=None):
    """The live panel: the headline, the step's lines, then the leaves' ``.grad``."""
    parts = [f"<div style='font-family:monospace;font-size:12px;line-height:1.5'>",
             f"<b>{html.escape(title)}</b>"]
    if note:
        parts.append(f"<div style='color:#b00020'>{html.escape(note)}</div>")
    parts.append("<ul style='margin:4px 0;padding-left:18px'>")
    for kind, text in lines:
        parts.append(f"<li style='{_STYLES[kind]}'><pre style='margin:0;white-space:pre-wrap'>"
                     f"{html.escape(text)}</pre></li>")
    parts.append("</ul><b>leaves</b><ul style='margin:4px 0;padding-left:18px'>")
    for text in leaves:
        parts.append(f"<li><pre style='margin:0;white-space:pre-wrap'>{html.escape(text)}</pre></li>")
    parts.append("</ul></div>")
    return "".join(parts)
