"""The chain rule at one node, in words: what each common backward node computes.

A node's backward receives ``g`` -- the gradient of the loss with respect to
the node's output, ``∂loss/∂out`` -- and sends each input ``g`` times the local
derivative ``∂out/∂input`` (for matrix products "times" is a matrix product).
This table writes that rule out for the nodes learners meet first, so the
``BackpropStepper`` can print it next to the numbers the engine really
computed.  It is text for people, never used to compute anything: the numbers
always come from the engine's own backward.

Each rule is keyed by torch's node name and by the position of the argument
in the forward call (``a * b``: ``a`` is 0 and ``b`` is 1), which is the
position the engine reports its gradients in.  Positions that are not tensors
(``alpha``, ``dim``, an exponent given as a number) simply never receive a
gradient.  A node missing here is shown with "see the node's backward".
"""
import re


class Rule:
    """One node's chain rule: ``forward`` (what the node computed) and, per argument
    position, ``(argument name, local derivative, gradient sent)``.

    >>> rule = local_rule("MulBackward0")
    >>> rule.forward
    'out = a · b'
    >>> rule.args[0]
    ('a', '∂out/∂a = b', 'g · b')
    """

    __slots__ = ("forward", "args")

    def __init__(self, forward, args):
        self.forward = forward
        self.args = args

    def __repr__(self):
        return f"Rule({self.forward!r})"


def _times_g(derivative):
    """``g`` times a derivative, written so that it reads right: the derivative in brackets
    when it is a sum or a quotient (``g · (1 − tanh²x)``, never ``g · 1 − tanh²x``).

    >>> _times_g("eˣ"), _times_g("1 − tanh²x"), _times_g("σ(x)·(1 − σ(x))"), _times_g("1")
    ('g · eˣ', 'g · (1 − tanh²x)', 'g · σ(x)·(1 − σ(x))', 'g')
    """
    if derivative == "1":
        return "g"
    top_level, inner = derivative, None
    while inner != top_level:  # drop bracketed groups, innermost first: what is left is top level
        inner, top_level = top_level, re.sub(r"\([^()]*\)", "", top_level)
    if any(op in top_level for op in (" + ", " − ", "/")) or derivative.startswith("−"):
        return f"g · ({derivative})"
    return f"g · {derivative}"


def _elementwise(forward, derivative, sent=None):
    """A one-input elementwise node: ``out = f(x)`` sends ``g · f'(x)`` (or ``sent``)."""
    return Rule(forward, {0: ("x", f"∂out/∂x = {derivative}", sent or _times_g(derivative))})


def _shape_only(forward, sent):
    """A node that only moves numbers around: its backward moves ``g`` back."""
    return Rule(forward, {0: ("x", "∂out/∂x = 1 for each element it moved", sent)})


def _reduction(forward, local, sent):
    return Rule(forward, {0: ("x", local, sent)})


_RULES = {
    # arithmetic ------------------------------------------------------------
    # torch.add(a, b, alpha=2) computes a + 2·b; a + b is alpha = 1
    "AddBackward0": Rule("out = a + alpha·b (alpha: torch.add's multiplier, 1 for a + b)", {
        0: ("a", "∂out/∂a = 1", "g"),
        1: ("b", "∂out/∂b = alpha (1 for a + b)", "alpha · g (g for a + b)")}),
    "SubBackward0": Rule("out = a − alpha·b (alpha: torch.sub's multiplier, 1 for a − b)", {
        0: ("a", "∂out/∂a = 1", "g"),
        1: ("b", "∂out/∂b = −alpha (−1 for a − b)", "−alpha · g (−g for a − b)")}),
    "MulBackward0": Rule("out = a · b", {
        0: ("a", "∂out/∂a = b", "g · b"),
        1: ("b", "∂out/∂b = a", "g · a")}),
    "DivBackward0": Rule("out = a / b", {
        0: ("a", "∂out/∂a = 1/b", "g / b"),
        1: ("b", "∂out/∂b = −a/b²", "−g · a/b²")}),
    "NegBackward0": _elementwise("out = −x", "−1", "−g"),
    "PowBackward0": Rule("out = xⁿ (n a number)", {
        0: ("x", "∂out/∂x = n·xⁿ⁻¹", "g · n·xⁿ⁻¹")}),
    "PowBackward1": Rule("out = aᵇ (both tensors)", {
        0: ("a", "∂out/∂a = b·aᵇ⁻¹", "g · b·aᵇ⁻¹"),
        1: ("b", "∂out/∂b = aᵇ·ln a", "g · aᵇ·ln a")}),
    "PowBackward2": Rule("out = cˣ (c a number)", {
        1: ("x", "∂out/∂x = cˣ·ln c", "g · cˣ·ln c")}),
    "ReciprocalBackward0": _elementwise("out = 1/x", "−1/x²"),
    # elementwise functions -------------------------------------------------
    "ExpBackward0": _elementwise("out = eˣ (its own derivative)", "eˣ"),
    "LogBackward0": _elementwise("out = ln x", "1/x"),
    "SqrtBackward0": _elementwise("out = √x", "1/(2√x)"),
    "AbsBackward0": _elementwise("out = |x|", "sign(x)"),
    "SinBackward0": _elementwise("out = sin x", "cos x"),
    "CosBackward0": _elementwise("out = cos x", "−sin x"),
    "TanhBackward0": _elementwise("out = tanh x", "1 − tanh²x"),
    "SigmoidBackward0": _elementwise("out = σ(x)", "σ(x)·(1 − σ(x))"),
    "ReluBackward0": _elementwise("out = max(x, 0)", "1 where x > 0, else 0",
                                  "g where x > 0, else 0"),
    "LeakyReluBackward0": Rule("out = x if x > 0 else slope·x", {
        0: ("x", "∂out/∂x = 1 where x > 0, else slope", "g where x > 0, else slope·g")}),
    "ClampBackward1": _elementwise("out = clamp(x, min, max)", "1 inside [min, max], else 0",
                                   "g inside [min, max], else 0"),
    "CloneBackward0": _elementwise("out = a copy of x", "1"),
    # reductions: the gradient is spread back over what was reduced ---------
    "SumBackward0": _reduction("out = Σ x (all elements)", "∂out/∂xᵢ = 1 for every i",
                               "g copied to every element of x"),
    "SumBackward1": _reduction("out = Σ x along dim", "∂out/∂xᵢ = 1 for every i summed",
                               "g copied along the summed dim"),
    "MeanBackward0": _reduction("out = (Σ x) / n (all n elements)", "∂out/∂xᵢ = 1/n",
                                "g / n copied to every element of x"),
    "MeanBackward1": _reduction("out = mean of x along dim (n elements each)", "∂out/∂xᵢ = 1/n",
                                "g / n copied along the averaged dim"),
    "MaxBackward0": _reduction("out = max of x along dim", "∂out/∂xᵢ = 1 for the largest, else 0",
                               "g to the position of each maximum, 0 elsewhere"),
    "MaxBackward1": _reduction("out = max of all of x", "∂out/∂xᵢ = 1 for the largest, else 0",
                               "g to the position(s) of the maximum, 0 elsewhere"),
    # matrix products: "times" is a matrix product, the other operand transposed
    "MmBackward0": Rule("out = A @ B", {
        0: ("A", "∂outᵢⱼ/∂Aᵢₖ = Bₖⱼ", "g @ Bᵀ"),
        1: ("B", "∂outᵢⱼ/∂Bₖⱼ = Aᵢₖ", "Aᵀ @ g")}),
    "BmmBackward0": Rule("out = A @ B (one matrix product per batch entry)", {
        0: ("A", "∂outᵢⱼ/∂Aᵢₖ = Bₖⱼ in each batch entry", "g @ Bᵀ"),
        1: ("B", "∂outᵢⱼ/∂Bₖⱼ = Aᵢₖ in each batch entry", "Aᵀ @ g")}),
    "MvBackward0": Rule("out = A @ v", {
        0: ("A", "∂outᵢ/∂Aᵢⱼ = vⱼ", "the outer product g vᵀ"),
        1: ("v", "∂outᵢ/∂vⱼ = Aᵢⱼ", "Aᵀ @ g")}),
    "DotBackward0": Rule("out = Σ aᵢ·bᵢ (dot product)", {
        0: ("a", "∂out/∂aᵢ = bᵢ", "g · b"),
        1: ("b", "∂out/∂bᵢ = aᵢ", "g · a")}),
    "LinearBackward0": Rule("out = x @ Wᵀ + bias", {
        0: ("x", "∂outᵢⱼ/∂xᵢₖ = Wⱼₖ", "g @ W"),
        1: ("W", "∂outᵢⱼ/∂Wⱼₖ = xᵢₖ", "gᵀ @ x"),
        2: ("bias", "∂outᵢⱼ/∂biasⱼ = 1", "g summed over the batch rows")}),
    # shape changes: the gradient goes back to where each number came from --
    "TBackward0": _shape_only("out = xᵀ", "gᵀ (transposed back)"),
    "TransposeBackward0": _shape_only("out = x with two dims swapped", "g with the dims swapped back"),
    "PermuteBackward0": _shape_only("out = x with its dims reordered", "g with the dims put back"),
    "ViewBackward0": _shape_only("out = x viewed in a new shape", "g viewed in x's shape"),
    "UnsqueezeBackward0": _shape_only("out = x with a new dim of size 1", "g with that dim removed"),
    "SqueezeBackward0": _shape_only("out = x without its size-1 dims", "g with those dims put back"),
    "SqueezeBackward1": _shape_only("out = x without a size-1 dim", "g with that dim put back"),
    "ExpandBackward0": _shape_only("out = x repeated along new or size-1 dims (no copy)",
                                   "g summed over the dims that were expanded"),
    "SelectBackward0": _shape_only("out = x[i] (one index)", "g put at index i, zeros elsewhere"),
    "SliceBackward0": _shape_only("out = x[start:stop] (a slice)", "g put in the slice, zeros elsewhere"),
    "IndexBackward0": _shape_only("out = x[indices]", "g added at the indexed places, zeros elsewhere"),
    # losses and softmax ------------------------------------------------------
    "MseLossBackward0": Rule("out = mean((input − target)²)", {
        0: ("input", "∂out/∂input = 2·(input − target)/n", "g · 2·(input − target)/n"),
        1: ("target", "∂out/∂target = −2·(input − target)/n", "−g · 2·(input − target)/n")}),
    "SoftmaxBackward0": _reduction("out = softmax(x) along dim",
                                   "∂outᵢ/∂xⱼ = outᵢ·(δᵢⱼ − outⱼ)",
                                   "out · (g − Σ g·out) along dim"),
    "LogSoftmaxBackward0": _reduction("out = log softmax(x) along dim",
                                      "∂outᵢ/∂xⱼ = δᵢⱼ − softmax(x)ⱼ",
                                      "g − softmax(x) · Σ g along dim"),
    "NllLossBackward0": _reduction("out = −mean of x[i, target[i]]",
                                   "∂out/∂x[i, target[i]] = −1/n, 0 elsewhere",
                                   "−g/n at each target class, 0 elsewhere"),
    "CrossEntropyLossBackward0": _reduction("out = mean of −log softmax(x)[i, target[i]]",
                                            "∂out/∂x = (softmax(x) − one_hot(target))/n",
                                            "g · (softmax(x) − one_hot(target))/n"),
    "BinaryCrossEntropyWithLogitsBackward0": _reduction(
        "out = mean of −[y·log σ(x) + (1−y)·log(1−σ(x))]",
        "∂out/∂x = (σ(x) − y)/n", "g · (σ(x) − y)/n"),
}


def local_rule(name):
    """The ``Rule`` for a node name such as ``"MulBackward0"``, or None when the table has none.

    >>> local_rule("ReluBackward0").args[0][2]
    'g where x > 0, else 0'
    >>> local_rule("MyOwnFunctionBackward") is None
    True
    """
    return _RULES.get(name)


def known_nodes():
    """The node names the table describes (sorted), e.g. for a chapter's reference list."""
    return sorted(_RULES)
