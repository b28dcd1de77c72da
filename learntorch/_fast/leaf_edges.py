"""A leaf's edge made once: the same ``(AccumulateGrad node, 0)`` tuple for every use.

Replaces: ``Tensor._edge()`` for a leaf (``_grad_fn`` None), which builds a new
``(self._accumulate_node, 0)`` tuple each time a node records the leaf as an input.  A
parameter is an input of every step's ops (``y * w + b`` uses ``w`` and ``b`` once
each), and each of those tuples holds a node, so Python's cycle collector tracks it and,
while the graph lives, counts it towards its next collection: with torch and Numba
loaded (about 190,000 objects), the full collections those counts bring on were about a
quarter of a small op's time.

The tuple is kept in the leaf's ``__dict__`` beside ``_accumulate_node`` (which is where
the reference keeps the node) and is used only while its node *is* the leaf's
``_accumulate_node``: when that changes (``Tensor.__init__`` called again drops it), the
reference ``_edge()`` runs and its new tuple is kept instead.  So the edge is always the
reference's ``(t._accumulate_node, 0)``: same node, same numbers, same
``next_functions``.  It makes no new cycle: the leaf already holds its node and the node
its leaf.  Proven by ``tests/tiers/test_fast_leaf_edges.py``.
"""

_KEY = "_fast_leaf_edge"  # the leaf's __dict__ entry


def leaf_edge(t):
    """``t._edge()`` for a leaf ``t`` that requires grad, one tuple per grad accumulator."""
    try:
        edge = t._fast_leaf_edge
    except AttributeError:  # first use of this leaf
        edge = None
    if edge is None or edge[0] is not t._accumulate_node:
        edge = t._edge()  # the reference makes the node (on first use) and the tuple
        t.__dict__[_KEY] = edge
    return edge
