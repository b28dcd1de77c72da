"""What learntorch.compile tells when asked: ``learntorch._logging.set_logs(...)``.

torch's ``torch._logging.set_logs(recompiles=True, graph_breaks=True, output_code=True)``
(or ``TORCH_LOGS="recompiles,graph_breaks,output_code"``) makes the compiler log why it
recompiled, where the graph broke, and the code it generated.  learntorch has the same
switches (``guards=True`` too); the messages are printed to stderr, with the name of the
switch in front, as torch's log lines have ``[__recompiles]``.
"""
import os
import sys

_enabled = set(filter(None, os.environ.get("LEARNTORCH_LOGS", "").split(",")))
SWITCHES = ("recompiles", "graph_breaks", "output_code", "guards")


def set_logs(*, recompiles=False, graph_breaks=False, output_code=False, guards=False):
    """Switch the compiler's logs on (or off: call with no arguments)."""
    _enabled.clear()
    for name, on in (("recompiles", recompiles), ("graph_breaks", graph_breaks),
                     ("output_code", output_code), ("guards", guards)):
        if on:
            _enabled.add(name)


def log(switch, message):
    """Print ``message`` to stderr when ``switch`` is on."""
    if switch in _enabled:
        prefix = f"[__{switch}] "
        print("\n".join(prefix + line for line in message.splitlines()), file=sys.stderr)


def enabled(switch):
    return switch in _enabled
