"""Learner variants of chapter 11 (compile): 11.1 a fusion pass, 11.2 predicting recompiles.
See course/variants.py for the format."""
from course.variants import correct, edited, mistake

# A wrong body of fuse_consecutive (the run does not end at a change of shape); the next
# mistake is the same body that checks the shape but drops the node instead of starting a run.
SHAPE_IGNORED = """\
    groups, run = [], []
    for node in graph.nodes:
        if fusible(node):
            run.append(node)
            continue
        if len(run) >= 2:
            groups.append(run)
        run = []
    if len(run) >= 2:
        groups.append(run)
    return groups
"""


def _pass(body):
    """fuse_consecutive with ``body`` as its loop (indented 4), then the usual end."""
    return ("def fuse_consecutive(graph):\n" + body)


def _predict(body):
    return "def recompiles(calls):\n" + body


def _by_key(key):
    """recompiles() that compiles when ``key`` (an expression of t) was not seen before."""
    return _predict(f"""\
    seen, answers = set(), []
    for t in calls:
        key = {key}
        answers.append(key not in seen)
        seen.add(key)
    return answers
""")


VARIANTS = {
    "11.1": [
        correct("itertools.groupby on (fusible, shape), runs of 2+ kept", """
            import itertools


            def fuse_consecutive(graph):
                def key(node):
                    return (True, node.tensor_meta.shape) if fusible(node) else (False, None)
                groups = []
                for (is_fusible, _), run in itertools.groupby(graph.nodes, key=key):
                    run = list(run)
                    if is_fusible and len(run) >= 2:
                        groups.append(run)
                return groups
        """),
        correct("positions: each run from its first index, closed by a helper", _pass("""\
    groups, start = [], None
    nodes = list(graph.nodes)

    def close(end):
        if start is not None and end - start >= 2:
            groups.append(nodes[start:end])

    for i, node in enumerate(nodes):
        if start is not None and fusible(node) and node.tensor_meta.shape == nodes[start].tensor_meta.shape:
            continue
        close(i)
        start = i if fusible(node) else None
    close(len(nodes))
    return groups
""")),
        mistake("groups of one op kept", _pass("""\
    groups, run = [], []
    for node in graph.nodes:
        if fusible(node) and (not run or node.tensor_meta.shape == run[0].tensor_meta.shape):
            run.append(node)
            continue
        if run:
            groups.append(run)
        run = [node] if fusible(node) else []
    if run:
        groups.append(run)
    return groups
"""), feedback=["what the compiler says", "1 node(s)"]),
        mistake("the shape ignored: a run goes on through a change of shape",
                _pass(SHAPE_IGNORED), feedback=["what the compiler says", "one shape"]),
        mistake("a node of another shape dropped instead of starting a new run", _pass(edited(
            SHAPE_IGNORED, ("        if fusible(node):", "        if fusible(node) and (not run or "
                            "node.tensor_meta.shape == run[0].tensor_meta.shape):"))),
                feedback=["fuse_consecutive's groups", "a change of shape"]),
        mistake("a node that is not fusible skipped instead of ending the run", _pass("""\
    groups, run = [], []
    for node in graph.nodes:
        if not fusible(node):
            continue
        if run and node.tensor_meta.shape != run[0].tensor_meta.shape:
            if len(run) >= 2:
                groups.append(run)
            run = []
        run.append(node)
    if len(run) >= 2:
        groups.append(run)
    return groups
"""), feedback=["what the compiler says", "runs before the group's last op"]),
    ],
    "11.2": [
        correct("a list of the keys compiled so far, searched with `in`", _predict("""\
    compiled, answers = [], []
    for t in calls:
        key = (t.shape, t.dtype, t.requires_grad)
        if key in compiled:
            answers.append(False)
        else:
            compiled.append(key)
            answers.append(True)
    return answers
""")),
        correct("each call against every earlier call, with any()", _predict("""\
    return [not any(tuple(earlier.shape) == tuple(t.shape) and earlier.dtype == t.dtype
                    and earlier.requires_grad == t.requires_grad for earlier in calls[:i])
            for i, t in enumerate(calls)]
""")),
        mistake("only the previous call compared (the cache keeps every entry)", _predict("""\
    answers, previous = [], None
    for t in calls:
        key = (tuple(t.shape), t.dtype, t.requires_grad)
        answers.append(key != previous)
        previous = key
    return answers
"""), feedback=["recompiles(calls) for calls of", "the cache keeps every entry"]),
        mistake("the dtype ignored", _by_key("(tuple(t.shape), t.requires_grad)"),
                feedback=["a new dtype"]),
        mistake("requires_grad ignored", _by_key("(tuple(t.shape), t.dtype)"),
                feedback=["requires_grad changes"]),
        mistake("the number of elements compared, not the shape",
                _by_key("(t.numel(), t.dtype, t.requires_grad)"),
                feedback=["same number of elements, other shape"]),
        mistake("the first call counted as a reuse", _predict("""\
    seen, answers = set(), []
    for i, t in enumerate(calls):
        key = (tuple(t.shape), t.dtype, t.requires_grad)
        answers.append(i > 0 and key not in seen)
        seen.add(key)
    return answers
"""), feedback=["same shapes"]),
        mistake("asks the compiler instead of predicting", _predict("""\
    compiled = torch.compile(lambda t: t + 1, dynamic=False)
    answers = []
    for t in calls:
        before = compiled.stats["captures"]
        compiled(t)
        answers.append(compiled.stats["captures"] > before)
    return answers
"""), feedback=["which the exercise rules out", "do not compile anything"]),
    ],
}
