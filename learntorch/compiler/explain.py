"""``learntorch._dynamo.explain(fn)(*args)``: how many graphs a call makes, and why it breaks.

torch's ``torch._dynamo.explain`` runs the function under the compiler and reports the
graphs it captured, the graph breaks between them with the reason and the line of user
code, and the ops of each graph.  Here the same, from one capture: the ops between two
graph breaks form one graph (a piece without ops -- between two breaks with nothing in
between -- is not a graph, as in torch).
"""
from typing import NamedTuple

from ..fx import op_kinds
from .errors import break_message


class GraphCompileReason(NamedTuple):
    """Why a graph ended early (torch's name): the reason and the user's line."""

    reason: str
    user_stack: list
    graph_break: bool = True


class ExplainOutput:
    """What ``explain`` found: ``graphs`` (lists of op nodes), ``graph_count``,
    ``graph_break_count``, ``break_reasons``, ``op_count``, ``ops_per_graph``, and the
    captured ``fx.Graph`` itself (``graph``)."""

    def __init__(self, graph):
        self.graph = graph
        pieces, current, reasons = [], [], []
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            if node.kind == op_kinds.PYTHON:
                pieces.append(current)
                current = []
                title = break_message(node.meta["python"]).splitlines()[0]
                reasons.append(GraphCompileReason(title, [node.meta["where"]]))
            elif node.op_name != "getitem" and node.kind != op_kinds.COPY:
                current.append(node)
        pieces.append(current)
        self.graphs = [p for p in pieces if p]
        self.graph_count = len(self.graphs)
        self.graph_break_count = len(reasons)
        self.break_reasons = reasons
        self.ops_per_graph = [[n.op_name for n in p] for p in self.graphs]
        self.op_count = sum(len(p) for p in self.graphs)

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, reason in enumerate(self.break_reasons, 1):
            where = reason.user_stack[0]
            lines += [f"  Break Reason {i}:", f"    Reason: {reason.reason}", "    User Stack:",
                      f"      <FrameSummary file {where.filename}, line {where.lineno} in "
                      f"{where.function}>"]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines += [f"  Ops {i}:"] + [f"    {op}" for op in ops]
        return "\n".join(lines) + "\n"

    __repr__ = __str__


def explain(fn):
    """``explain(fn)(*args, **kwargs)`` -> ExplainOutput (torch._dynamo.explain's form)."""
    def run(*args, **kwargs):
        from .compile import CompiledFunction
        compiled = CompiledFunction(fn, backend="eager")
        compiled(*args, **kwargs)
        graphs = compiled.graphs
        if not graphs:  # it ran eagerly: unsupported
            raise RuntimeError(f"explain(): the function could not be captured: "
                               f"{compiled.cache_entries[0].eager}")
        return ExplainOutput(graphs[-1])
    return run
