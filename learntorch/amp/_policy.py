"""Autocast's op lists: which operations run in 16 bits, which in float32, which in the widest
type among their inputs -- torch 2.13's lists (``aten/src/ATen/autocast_mode.cpp`` and
``autocast_mode.h``), one table per device type, as data.

The four policies (what ``autocast_mode.py`` does to an op's floating tensor inputs that are on
the autocast device and not float64 -- "eligible" inputs; other arguments pass unchanged):

* ``LOWER``   -- cast to the autocast dtype (bfloat16 on the CPU by default, float16 on cuda):
  matmuls and convolutions, where 16 bits are fast and accurate enough (the products are
  summed in float32 inside the kernel);
* ``FP32``    -- cast to float32: ops whose result loses too much in 16 bits -- sums of
  many terms, exp/log and their kin, softmax, norms, losses;
* ``PROMOTE`` -- cast to the widest type among the eligible inputs and the autocast dtype:
  ops that need their inputs to agree (``cat`` of a bfloat16 and a float32 tensor);
* ``BANNED``  -- refuse: ``binary_cross_entropy`` after a float16 sigmoid is unsafe.

Every other op runs as it is, in the dtype its inputs have (``relu`` of bfloat16 is bfloat16,
``bfloat16 + float32`` is float32 by the usual promotion).

torch keys its lists by ATen op; learntorch's unit of work is a ``Function`` class, so each
entry is the Function that computes that op.  A functional that learntorch composes from
several Functions (``l1_loss``, ``kl_div``, ``cosine_similarity``) follows its parts.
"""
from ..nn._functional import (activation_functions, conv, interpolate, linear, loss_binary,
                              loss_cross_entropy, loss_nll, loss_regression, normalization)
from ..ops import (activations, arithmetic, cumulative, diagonals, einsum, indexing, joining,
                   linalg, pointwise_binary, pointwise_ternary, reductions, softmax, unary)

LOWER, FP32, PROMOTE, BANNED = "lower_precision_fp", "fp32", "promote", "banned"

# (module under learntorch, Function class names) per policy, per device type
_LOWER_BOTH = [
    ("ops.linalg", "Matmul Mm Bmm"),
    ("nn._functional.linear", "Linear"),
    ("nn._functional.conv", "Convolution ConvolutionTranspose"),
    ("nn._functional.activation_functions", "Prelu"),
]

CPU = {
    # (einsum is not on torch's CPU list, but torch computes it with bmm, which is)
    LOWER: _LOWER_BOTH + [("ops.einsum", "Einsum")],
    FP32: [
        ("ops.reductions", "Prod ProdAll"),
        ("ops.linalg", "Cdist"),
        ("ops.diagonals", "Trace"),
        ("nn._functional.loss_regression", "MseLoss SmoothL1Loss HuberLoss"),
        ("nn._functional.loss_nll", "NllLoss"),
        ("nn._functional.loss_cross_entropy", "CrossEntropy CrossEntropyProbabilities"),
        ("nn._functional.loss_binary", "BinaryCrossEntropy BinaryCrossEntropyWithLogits"),
    ],
    PROMOTE: [
        ("ops.joining", "Cat Stack"),
    ],
    BANNED: [],
}

CUDA = {
    LOWER: _LOWER_BOTH + [
        ("ops.linalg", "Mv"),
        ("ops.einsum", "Einsum"),
    ],
    FP32: [
        ("ops.unary", "Acos Asin Cosh Exp Expm1 Log Log10 Log2 Log1p Reciprocal Rsqrt Sinh Tan"),
        ("ops.arithmetic", "Pow PowNumberBase PowTensors"),
        ("ops.activations", "Softplus"),
        ("nn._functional.normalization", "LayerNorm GroupNorm"),
        ("ops.linalg", "Cdist"),
        ("nn._functional.loss_regression", "MseLoss SmoothL1Loss HuberLoss"),
        ("nn._functional.loss_nll", "NllLoss"),
        # cross_entropy is log_softmax (fp32) then nll_loss (fp32) in torch: float32 throughout
        ("nn._functional.loss_cross_entropy", "CrossEntropy CrossEntropyProbabilities"),
        ("nn._functional.loss_binary", "BinaryCrossEntropyWithLogits"),
        ("ops.reductions", "Logsumexp Prod ProdAll Sum SumAll Norm"),
        ("nn._functional.interpolate", "UpsampleNearest UpsampleLinear"),
        # torch's "fp32_set_opt_dtype" ops: run in float32 unless a dtype= is given
        ("ops.softmax", "Softmax LogSoftmax"),
        ("ops.cumulative", "Cumsum Cumprod"),
    ],
    PROMOTE: [
        ("ops.pointwise_ternary", "Addcdiv Addcmul"),
        ("ops.pointwise_binary", "Atan2"),
        ("ops.linalg", "Cross Dot"),
        ("ops.indexing", "IndexPut ScatterAdd"),
    ],
    BANNED: [
        ("nn._functional.loss_binary", "BinaryCrossEntropy"),
    ],
}

TABLES = {"cpu": CPU, "cuda": CUDA}

BANNED_MESSAGES = {
    "BinaryCrossEntropy": (
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
        "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
        "In this case, combine the two layers using "
        "torch.nn.functional.binary_cross_entropy_with_logits\n"
        "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
        "safe to autocast."),
}


_MODULES = {
    "ops.activations": activations, "ops.arithmetic": arithmetic, "ops.cumulative": cumulative,
    "ops.diagonals": diagonals, "ops.einsum": einsum, "ops.indexing": indexing,
    "ops.joining": joining, "ops.linalg": linalg, "ops.pointwise_binary": pointwise_binary,
    "ops.pointwise_ternary": pointwise_ternary, "ops.reductions": reductions,
    "ops.softmax": softmax, "ops.unary": unary,
    "nn._functional.activation_functions": activation_functions, "nn._functional.conv": conv,
    "nn._functional.interpolate": interpolate, "nn._functional.linear": linear,
    "nn._functional.loss_binary": loss_binary,
    "nn._functional.loss_cross_entropy": loss_cross_entropy,
    "nn._functional.loss_nll": loss_nll, "nn._functional.loss_regression": loss_regression,
    "nn._functional.normalization": normalization,
}


def resolve(device_type):
    """The table of ``device_type`` as {Function class: policy}."""
    by_class = {}
    for policy, entries in TABLES[device_type].items():
        for module, names in entries:
            mod = _MODULES[module]
            for name in names.split():
                by_class[getattr(mod, name)] = policy
    return by_class
