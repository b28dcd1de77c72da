"""The error ``fullgraph=True`` raises at a graph break, and the words for each kind of break.

torch raises ``torch._dynamo.exc.Unsupported`` (a ``RuntimeError``) when it cannot put
something into one graph; learntorch raises its own ``Unsupported``, also a
``RuntimeError``, also importable as ``learntorch._dynamo.exc.Unsupported``, whose message
has the same parts: what happened, why it stops the graph, what to do instead, and
"from user code:" with the line of your code that did it.
"""

# what Python did with a tensor (fx/_python.py's "how") -> (title, explanation, hint)
_BREAKS = {
    "bool": ("Data-dependent branching",
             "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`): which "
             "code runs next depends on a tensor's values, which a graph of tensor ops "
             "cannot say.",
             "Make the code branchless: torch.where, torch.clamp or a mask computes both "
             "sides and picks per element, inside the graph."),
    "item": ("Tensor.item() call",
             "A tensor's value was turned into a Python number: the graph ends there, "
             "and what Python computes with the number is not in it.",
             "Keep the value a tensor (x.sum() instead of x.sum().item()), or move the "
             ".item() out of the compiled function."),
    "tolist": ("Tensor.tolist() call",
               "A tensor's values were turned into Python lists: the graph ends there.",
               "Keep the values as tensors, or move the call out of the compiled function."),
    "numpy": ("Tensor.numpy() call",
              "A tensor's values were handed to numpy: the graph ends there.",
              "Use the engine's ops on tensors instead of numpy inside a compiled function."),
    "print": ("Failed to trace builtin operator `print`",
              "print() is a Python side effect: it is not an op of a graph.",
              "Print outside the compiled function, or return what you want to see."),
    "repr": ("Formatting a tensor's values",
             "Printing or formatting a tensor reads its values into Python: the graph "
             "ends there.",
             "Print outside the compiled function, or return what you want to see."),
}
_ALIASES = {"float": "item", "int": "item", "index": "item", "__array__": "numpy",
            "str": "repr", "format": "repr"}


def break_message(how):
    """The title and explanation of a graph break of kind ``how`` (``"bool"``, ``"item"``, ...)."""
    title, explanation, hint = _BREAKS[_ALIASES.get(how, how)]
    return f"{title}\n  Explanation: {explanation}\n  Hint: {hint}"


class Unsupported(RuntimeError):
    """learntorch.compile(fullgraph=True) met something it cannot put in one graph.

    ``where`` is the line of the user's code (``fx._python.Where``), named at the end of
    the message after "from user code:", as torch does.
    """

    def __init__(self, message, where=None):
        self.where = where
        if where is not None:
            message += (f"\n\nfrom user code:\n   {where}\n    {where.line}")
        super().__init__(message)
