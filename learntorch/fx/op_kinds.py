"""What kind of computation each recorded op is: the one table both graph consumers read.

``learntorch.onnx`` needs it to say what it cannot export; a compiler needs it to
decide what may be fused: a chain of *elementwise* ops (each output element
depends only on the elements at the same position of its broadcast inputs) can
become one loop, while a *reduction*, a *matmul* or a *conv* ends such a chain.

The table is keyed by the name of the ``Function`` class that ``Function.apply``
ran -- the same name ``grad_fn`` shows, minus ``Backward0`` -- and a class not
in it inherits the kind of its nearest listed base (``Mm`` is a ``Matmul``).
``tests/deploy/test_fx_capture.py`` checks that every name here is still a
Function of the engine, so a rename there cannot silently turn an op into
``"other"``.
"""

ELEMENTWISE = "elementwise"      # out[i] = f(a[i], b[i], ...) after broadcasting
REDUCTION = "reduction"          # combines elements along dims into fewer (sum, mean, amax, var)
NORMALIZATION = "normalization"  # reduces along dims, then maps every element with the result
MATMUL = "matmul"                # products of matrices: matmul, linear, einsum
CONV = "conv"                    # sliding-window products
POOL = "pool"                    # sliding-window max / mean
VIEW = "view"                    # the same elements seen in another shape: no arithmetic
COPY = "copy"                    # the same values, new memory (contiguous, clone, to a device)
MOVEMENT = "movement"            # elements rearranged or repeated (cat, flip, pad)
INDEXING = "indexing"            # elements picked or written by index (gather, scatter)
SORT = "sort"
SCAN = "scan"                    # running totals (cumsum)
LOSS = "loss"
FUSED = "fused"                  # a kernel learntorch.compile generated for a group of ops
PYTHON = "python"                # Python reading a tensor's value, or print(): a graph break
OTHER = "other"

KINDS = {
    ELEMENTWISE: """Add Sub Mul Div Pow FloorDivide RoundedDiv Remainder Fmod
        Neg Exp Log Log2 Log10 Log1p Expm1 Sqrt Rsqrt Reciprocal Sin Cos Abs Erf
        _Piecewise RoundDecimals Tanh Sigmoid Relu Gelu Silu Softplus Clamp
        _Select Where Addcmul Addcdiv Lerp LerpTensorWeight ToDtype MaskedFill
        TanhBackward SigmoidBackward ReluBackward GeluBackward SiluBackward
        _Activation Prelu
        _PiecewiseLinearBackward EluBackward HardswishBackward MseLossBackward
        _OfInput _OfOutput Polygamma Logit NanToNum Atan2 Hypot Xlogy _ComparedInPlace""",
    REDUCTION: """Sum Mean Prod _Extreme _ExtremeWithIndices Var Std VarMean StdMean
        Logsumexp Norm SumToSize Trace Nansum""",
    NORMALIZATION: """Softmax LogSoftmax SoftmaxBackward LogSoftmaxBackward _Normalization
        BatchNorm LayerNorm GroupNorm NormalizeBackward NormalizeAffineBackward
        CrossEntropyBackward""",
    MATMUL: "Matmul Dot Linear Einsum Cross Cdist CdistDoubleBackward LinearDynamic",
    CONV: """Convolution ConvolutionBackwardInput ConvolutionBackwardWeight
        ConvolutionTranspose""",
    POOL: """MaxPool2d AvgPool2d AdaptiveAvgPool2d AdaptiveMaxPool2d MaxPool2dBackward
        AvgPool2dBackward AdaptiveAvgPool2dBackward AdaptiveMaxPool2dBackward
        UpsampleLinear UpsampleLinearBackward""",
    VIEW: """View UnsafeView Permute Transpose T Expand ExpandBack Squeeze Unsqueeze Narrow
        SliceView Diagonal""",
    COPY: "Contiguous Clone _ToCopy _Identity Fill Copy DiagonalCopy _Alias",
    MOVEMENT: """Flip Repeat Cat Stack ConstantPad GatherPad ScatterPad Im2col Col2im Roll
        DiagEmbed _Triangle UpsampleNearest UpsampleNearestBackward""",
    INDEXING: """Index IndexPut IndexPutAdd Gather Scatter ScatterAdd IndexSelect IndexAdd
        Embedding EmbeddingDenseBackward NllLossBackward ScatterWithReduce ScatterReduce
        DiagonalScatter""",
    SORT: "_SelectAlongDim _PickAlongDim MedianAll Unique",
    SCAN: "Cumsum Cumprod _RunningExtreme",
    LOSS: """_PointwiseLoss NllLoss CrossEntropy CrossEntropyProbabilities BinaryCrossEntropy
        BinaryCrossEntropyWithLogits""",
    FUSED: "FusedKernel",
}
_KIND_OF = {name: kind for kind, names in KINDS.items() for name in names.split()}

#: The engine's operations that are *not* Functions -- their results never require grad,
#: so they need no node in autograd's graph: comparisons, logical and bitwise ops, the
#: boolean reductions, argmax/argmin, ``detach``.  ``capture(..., python=True)`` (what
#: ``learntorch.compile`` uses) records them too, with the function as the node's target
#: (``fx/_python.py`` lists where each is bound); keyed by the function's name.
FUNCTION_KINDS = {
    ELEMENTWISE: """eq ne lt le gt ge logical_and logical_or logical_xor logical_not
        bitwise_and bitwise_or bitwise_xor bitwise_not isnan isinf isfinite""",
    REDUCTION: "all any argmax argmin",
    VIEW: "detach",
    COPY: "copy_into",
    PYTHON: "python_value python_print",
}
_KIND_OF_FUNCTION = {name: kind for kind, names in FUNCTION_KINDS.items()
                     for name in names.split()}


def kind_of(function):
    """The kind of a Function class (or of its nearest listed base); ``"other"`` if none.

    Only the engine's own classes are looked up: a learner's ``Function`` called
    ``Relu`` may compute anything, so it is ``"other"`` until it says otherwise.  A plain
    function of the engine (``gt``, recorded by ``capture(..., python=True)``) has the
    kind ``FUNCTION_KINDS`` gives it.
    """
    if not isinstance(function, type):
        if getattr(function, "__module__", "").startswith("learntorch."):
            return _KIND_OF_FUNCTION.get(getattr(function, "__name__", ""), OTHER)
        return OTHER
    for klass in getattr(function, "__mro__", ()):
        kind = _KIND_OF.get(klass.__name__)
        if kind is not None and klass.__module__.startswith("learntorch."):
            return kind
    return OTHER
