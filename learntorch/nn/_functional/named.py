"""One computation under torch's several node names.

torch names the node of the same computation after the layer that ran it
(``NativeBatchNormBackwardBackward0``, ``NativeLayerNormBackwardBackward0``;
``UpsampleNearest1DBackward0``, ``UpsampleNearest2DBackward0``), and a learner reads
those names in ``grad_fn``.  A node's name is its Function class's ``node_name``, so
each name gets a subclass that changes nothing else.
"""

_NAMED = {}


def named(kind, node_name):
    """The Function class ``kind`` under the node name ``node_name`` (made once)."""
    key = (kind, node_name)
    if key not in _NAMED:
        _NAMED[key] = type(kind.__name__, (kind,), {"node_name": node_name})
    return _NAMED[key]
