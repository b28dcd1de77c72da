"""What the tier tests compare of an autograd graph: its nodes in one walk order, and the
facts a reader (or the backward engine) can see on each."""


def nodes_behind(t):
    """Every node behind ``t`` (a tensor), its own first, in a walk order both tiers share."""
    seen, order, stack = set(), [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return order


def node_facts(node):
    """A node as comparable facts: name, edges, input/output metadata, saved tensors (shape,
    dtype), their versions, constants and a cast's input dtype; an AccumulateGrad's name."""
    if not hasattr(node, "_function"):
        return node.name()
    saved = [None if s is None else (s.shape, s.dtype.name) for s in (node._saved or ())]
    versions = node._saved_versions if node._saved is not None else None
    return (node.name(), [(type(n).__name__, nr) for n, nr in node.next_functions],
            node.needs_input_grad, node._number_positions, node._input_meta, node._output_meta,
            saved, versions, node.constants, getattr(node, "input_dtype", None))


def graph_facts(t):
    """``node_facts`` of every node behind ``t``."""
    return [node_facts(node) for node in nodes_behind(t)]
