"""Which converter writes which op: a table keyed by the op's ``Function`` class name.

As in ``learntorch.fx.op_kinds``, a class not listed takes the converter of its
nearest listed base (``Mm`` and ``Bmm`` are ``Matmul``s), and only the engine's own
classes are looked up: a learner's ``Function`` is not exported under the name of
the engine's op it happens to share.
"""

CONVERTERS = {}


def converts(*names):
    """Decorator: ``@converts("Relu")`` registers ``fn(ctx)`` for those Function names."""
    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return register


def converter_for(function):
    """(the listed name that matched, its converter), or (None, None)."""
    for klass in getattr(function, "__mro__", ()):
        fn = CONVERTERS.get(klass.__name__)
        if fn is not None and klass.__module__.startswith("learntorch."):
            return klass.__name__, fn
    return None, None


def supported_ops():
    """The names of the ops the exporter writes, for messages and the docs."""
    return sorted(CONVERTERS)
