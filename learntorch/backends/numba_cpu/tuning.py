"""Where a compiled kernel starts to pay, on *this* machine: the tuning table.

Every choice the Numba backend makes between numpy and a kernel, or between one
thread and all of them, compares a size (or an expected time) with a threshold.
Thresholds depend on the machine -- its cores, caches, SIMD width, how long it takes
to wake a sleeping thread -- so they are not written in the code: they are measured
by ``python -m benchmarks.calibrate`` and kept in ``tuning.json`` beside this file,
with the machine they came from.  ``load()`` reads it; a key the file lacks (or a
missing file) takes the default below, a conservative value that is right on
typical machines.

The keys:

* ``min_sizes`` -- per kernel, the smallest number of elements for which it runs
  (``None``: numpy always wins here);
* ``ns_per_element`` -- per kernel, its one-thread cost, for ``loader.use_threads``;
* ``parallel_min_ns`` -- a kernel call expected to take this long on one thread
  uses every thread (waking the others costs tens of microseconds);
* ``layer_min_sizes`` -- the same as ``min_sizes`` for the layers' kernels (pooling,
  col2im, cross-entropy rows), the fused optimizer updates and the int8 kernels
  (``quantized_matmul``'s counts multiply-adds, M * N * K); ``bfloat16_matmul_blas`` is
  the other way round: the multiply-adds from which a bfloat16 product leaves its kernel
  for float32 BLAS (``bfloat16_backend.py``);
* ``layer_ns_per_element`` -- the same as ``ns_per_element`` for the layers' kernels
  (forward: per element of the input, backward: of the gradient; ``im2col``: of the
  columns it writes).
"""
import json
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuning.json")

DEFAULTS = {
    "min_sizes": {
        "relu": 10_000, "relu_backward": 10_000, "tanh": None, "tanh_backward": 100_000,
        "sigmoid": 10_000, "sigmoid_backward": 100_000, "gelu": 1_000, "gelu_backward": 1_000,
        "silu": 10_000, "silu_backward": 10_000, "add": None, "sub": None, "mul": None,
        "div": None, "sum": 100_000, "softmax": 10_000, "log_softmax": 10_000,
        "softmax_backward": 10_000, "log_softmax_backward": 10_000, "logsumexp": 10_000,
        "to_bfloat16": 2_000, "from_bfloat16": 4_000,
    },
    "ns_per_element": {
        "relu": 0.08, "relu_backward": 0.12, "tanh": 14.0, "tanh_backward": 0.13,
        "sigmoid": 6.4, "sigmoid_backward": 0.13, "gelu": 6.9, "gelu_backward": 9.9,
        "silu": 6.4, "silu_backward": 4.5, "add": 0.12, "sub": 0.12, "mul": 0.1, "div": 0.1,
        "sum": 0.04, "softmax": 0.29, "log_softmax": 0.3, "softmax_backward": 0.1,
        "log_softmax_backward": 0.28, "logsumexp": 0.26, "to_bfloat16": 0.11,
        "from_bfloat16": 0.12,
        "quantized_matmul": 0.03, "quantize_per_tensor": 0.5, "dequantize_matmul": 0.5,
        "quantized_linear": 0.015,
    },
    "parallel_min_ns": 120_000,
    "layer_min_sizes": {
        "max_pool2d": 4_096, "col2im": 4_096, "im2col": 4_096, "cross_entropy": 1_024,
        "sgd": 30_000, "adam": 10_000, "rmsprop": 10_000, "adagrad": 10_000,
        "quantized_matmul": 4_096, "quantize_per_tensor": 1_024, "dequantize_matmul": 1_024,
        "bfloat16_matmul_blas": 2_000_000,
    },
    "layer_ns_per_element": {
        "max_pool2d": 0.45, "max_pool2d_backward": 0.45, "col2im": 0.3, "im2col": 0.3,
    },
}

_loaded = None


def load(path=PATH):
    """The tuning table: ``tuning.json`` over the defaults, key by key (cached)."""
    global _loaded
    if _loaded is not None and path == PATH:
        return _loaded
    table = json.loads(json.dumps(DEFAULTS))  # a deep copy
    try:
        with open(path, encoding="utf-8") as f:
            measured = json.load(f)
    except (OSError, ValueError):
        measured = {}
    for key, value in measured.items():
        if isinstance(table.get(key), dict) and isinstance(value, dict):
            table[key].update({k: v for k, v in value.items() if k in table[key]})
        elif key in table:
            table[key] = value
    if path == PATH:
        _loaded = table
    return table


def threshold(group, name):
    """``load()[group][name]``: one kernel's threshold."""
    return load()[group][name]
