"""``NumbaBackend``: the numpy reference backend, with compiled kernels where they win.

Every primitive first asks one question: *is this array worth a kernel?*  Only
when all of these hold does a Numba kernel run; otherwise the call goes to the
``NumpyBackend`` method it overrides (``super()``), which gives the same values:

* the array has at least ``min_sizes[op]`` elements -- below that, waking the
  threads and the call into compiled code cost more than numpy's whole loop
  (and small tensors never import Numba or compile anything);
* the dtype is float32 or float64 (float16 and integers have no kernel);
* the operands have one dtype and one shape (broadcasting stays with numpy);
* the memory is C-contiguous -- or the op is in ``copy_pays_off``: its kernel
  wins by so much that copying a strided input first still beats numpy;
* this process was not forked after kernels ran (see ``loader.py``).

The thresholds come from ``tuning.json`` (``tuning.py``), written by ``python -m
benchmarks.calibrate``, which times the numpy reference against the kernel
(including this dispatch) for 10^2 .. 10^7 elements on the machine it runs on;
each threshold is the size from which the kernel won at every larger size.
``None`` means it did not win reliably, so numpy keeps the op.  What the
measurements on the machine of BENCHMARKS.md showed:

* tanh: numpy's SIMD ``tanh`` is ~10x faster per element than the scalar
  ``libm`` call Numba emits (it vectorizes it only with Intel's SVML
  library).  The softmax family had the same problem with ``exp`` until it got
  ``fast_exp.py``, an exp made of plain arithmetic that compiles to SIMD code;
* add/sub/mul/div: one operation per 12 bytes moved, so numpy already runs at
  memory speed; the kernel gained 1.1-1.2x from 10^6 elements, within the
  noise of a shared machine.

Below about 10^6 elements a kernel runs on one thread (``loader.use_threads``):
waking a second thread costs more than it saves.

Rerun the calibration on your machine, or pass your own numbers:
``NumbaBackend(min_sizes={"softmax": 100_000})``; ``NumbaBackend(min_size=0)``
runs every kernel on every float array (the tests use that).
"""
import math
import numpy as np

from ..reference import NumpyBackend
from . import tuning
from .bfloat16_backend import NumbaBfloat16
from .cast_backend import NumbaCasts
from .conv_backend import NumbaConv
from .loader import kernels, kernels_allowed, use_threads
from .losses_backend import NumbaLosses
from .optim_backend import NumbaOptimizers
from .pooling_backend import NumbaPooling
from .quantized_backend import NumbaQuantized

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# x.sum() of one long row: cut into rows of this many elements (128 KiB of float32,
# cache-sized), so that the row kernel has many rows to spread over the cores
_SUM_CHUNK = 1 << 15


def _compact(a):
    """True when ``a`` is laid out as every kernel expects: C-contiguous, aligned, writeable.

    One layout means one compiled version of each kernel per dtype, and no
    surprise compile when a read-only or unaligned array shows up.
    """
    flags = a.flags
    return flags.c_contiguous and flags.aligned and flags.writeable


#: Numba overrides of the larger families (conv, pooling, losses, optimizers, ...): one
#: mixin class per file in this package, listed here; each calls ``super()`` for what
#: its kernels do not serve, so the numpy reference answers the rest
FAMILIES = (NumbaCasts, NumbaBfloat16, NumbaConv, NumbaPooling, NumbaLosses, NumbaOptimizers, NumbaQuantized)


class NumbaBackend(*FAMILIES, NumpyBackend):
    name = "numba"

    #: smallest number of elements for which each kernel runs (None: numpy always), and
    #: each kernel's one-thread cost in ns per float32 element (float64: twice that),
    #: which decides the thread count of a call (``loader.use_threads``).  Measured per
    #: machine by ``python -m benchmarks.calibrate`` into ``tuning.json`` (``tuning.py``).
    min_sizes = tuning.load()["min_sizes"]
    ns_per_element = tuning.load()["ns_per_element"]

    #: ops whose kernel still beats numpy after copying a strided input to a contiguous
    #: one (transposed input, 1e5 and 1e6 elements: gelu 9-16x, relu_backward 2.4-2.9x;
    #: relu, tanh_backward, sigmoid_backward and the softmax family lose, 0.1-0.8x; the
    #: softmax family still loses with fast_exp: softmax over dim 0 of 1024 x 1024 float32
    #: took numpy 0.8 ms, transposing copies + kernel 8.7 ms)
    copy_pays_off = frozenset({"relu_backward", "sigmoid", "gelu", "gelu_backward", "silu",
                               "silu_backward"})

    def __init__(self, min_size=None, min_sizes=None):
        import importlib.util
        if importlib.util.find_spec("numba") is None:
            raise ImportError("the 'numba' backend needs the numba package (pip install numba); "
                              "use learntorch.backends.set_backend('numpy') meanwhile")
        self.min_sizes = dict(type(self).min_sizes)
        if min_size is not None:
            self.min_sizes = dict.fromkeys(self.min_sizes, min_size)
        if min_sizes is not None:
            unknown = set(min_sizes) - set(self.min_sizes)
            if unknown:
                raise ValueError(f"min_sizes names no kernel: {sorted(unknown)}; the kernels are "
                                 f"{sorted(self.min_sizes)}")
            self.min_sizes.update(min_sizes)
        # a switched-off binary kernel costs a dispatch on every tiny op of a training
        # loop for nothing: call numpy's method directly instead
        for op in ("add", "sub", "mul", "div"):
            if self.min_sizes[op] is None:
                setattr(self, op, getattr(NumpyBackend, op).__get__(self))

    def __repr__(self):
        return f"NumbaBackend(min_sizes={self.min_sizes})"

    # ------------------------------------------------------------ dispatch
    def _accepts(self, op, *arrays):
        """True when kernel ``op`` should handle ``arrays``: big, float, one dtype and shape."""
        first = arrays[0]
        limit = self.min_sizes[op]
        if limit is None or type(first) is not np.ndarray or first.size < max(limit, 1):
            return False
        if first.dtype not in _FLOATS or not kernels_allowed():
            return False
        for a in arrays[1:]:
            if type(a) is not np.ndarray or a.dtype != first.dtype or a.shape != first.shape:
                return False
        return True

    def _elementwise(self, family, op, reference, *arrays):
        """Run kernel ``family.op(*flat_arrays, flat_out)`` or, if not worth it, ``reference``."""
        if not self._accepts(op, *arrays):
            return reference(*arrays)
        if not all(_compact(a) for a in arrays):
            if op not in self.copy_pays_off:
                return reference(*arrays)
            arrays = [a if _compact(a) else np.array(a, order="C") for a in arrays]
        out = np.empty(arrays[0].shape, arrays[0].dtype)
        module = kernels(family)
        self._use_threads(op, out)
        getattr(module, op)(*[a.reshape(-1) for a in arrays], out.reshape(-1))
        return out

    def _along_dim(self, op, dim, reference, *arrays):
        """Run row kernel ``softmax.<op>_rows`` with ``dim`` moved last, or ``reference``."""
        if not self._accepts(op, *arrays) or arrays[0].ndim == 0:
            return reference(*arrays, dim)
        last = arrays[0].ndim - 1
        if dim == last and all(_compact(a) for a in arrays):
            moved = arrays
        elif op in self.copy_pays_off:
            # move dim to the end and copy, so every row is contiguous
            moved = [np.ascontiguousarray(np.moveaxis(a, dim, -1)) for a in arrays]
        else:
            return reference(*arrays, dim)
        n = moved[0].shape[-1]
        out = np.empty(moved[0].shape, moved[0].dtype)
        module = kernels("softmax")
        self._use_threads(op, out)
        getattr(module, op + "_rows")(*[a.reshape(-1, n) for a in moved],
                                                  out.reshape(-1, n))
        # a contiguous result, as the reference gives for contiguous input
        return out if moved is arrays else np.ascontiguousarray(np.moveaxis(out, -1, dim))

    def _use_threads(self, op, a):
        """One thread, or all of them when kernel ``op`` over ``a`` is long enough to share."""
        use_threads(a.size * self.ns_per_element[op] * (a.itemsize / 4))

    @staticmethod
    def _as_rows(x, dims):
        """``x`` as a C-contiguous (rows, n) array whose rows are the groups reduced over ``dims``."""
        kept = [d for d in range(x.ndim) if d not in dims]
        order = kept + list(dims)
        n = math.prod([x.shape[d] for d in dims])
        if order != list(range(x.ndim)) or not _compact(x):
            x = np.ascontiguousarray(x.transpose(order))
        return x.reshape(-1, n)

    @staticmethod
    def _reduced_shape(out, shape, dims, keepdim):
        if keepdim:
            return out.reshape([1 if d in dims else s for d, s in enumerate(shape)])
        return out.reshape([s for d, s in enumerate(shape) if d not in dims])

    # ------------------------------------------------------------ elementwise binary
    def add(self, a, b):
        return self._elementwise("arithmetic", "add", super().add, a, b)

    def sub(self, a, b):
        return self._elementwise("arithmetic", "sub", super().sub, a, b)

    def mul(self, a, b):
        return self._elementwise("arithmetic", "mul", super().mul, a, b)

    def div(self, a, b):
        return self._elementwise("arithmetic", "div", super().div, a, b)

    # ------------------------------------------------------------ activations
    def relu(self, x):
        return self._elementwise("activations", "relu", super().relu, x)

    def relu_backward(self, y, grad):
        return self._elementwise("activations", "relu_backward", super().relu_backward, y, grad)

    def tanh(self, x):
        return self._elementwise("activations", "tanh", super().tanh, x)

    def tanh_backward(self, y, grad):
        return self._elementwise("activations", "tanh_backward", super().tanh_backward, y, grad)

    def sigmoid(self, x):
        return self._elementwise("activations", "sigmoid", super().sigmoid, x)

    def sigmoid_backward(self, y, grad):
        return self._elementwise("activations", "sigmoid_backward", super().sigmoid_backward,
                                 y, grad)

    def gelu(self, x):
        return self._elementwise("activations", "gelu", super().gelu, x)

    def gelu_backward(self, x, grad):
        return self._elementwise("activations", "gelu_backward", super().gelu_backward, x, grad)

    def silu(self, x):
        return self._elementwise("activations", "silu", super().silu, x)

    def silu_backward(self, x, grad):
        return self._elementwise("activations", "silu_backward", super().silu_backward, x, grad)

    # ------------------------------------------------------------ softmax family
    def softmax(self, x, dim):
        return self._along_dim("softmax", dim, super().softmax, x)

    def log_softmax(self, x, dim):
        return self._along_dim("log_softmax", dim, super().log_softmax, x)

    def softmax_backward(self, y, grad, dim):
        return self._along_dim("softmax_backward", dim, super().softmax_backward, y, grad)

    def log_softmax_backward(self, y, grad, dim):
        return self._along_dim("log_softmax_backward", dim, super().log_softmax_backward,
                               y, grad)

    def logsumexp(self, x, dims, keepdim):
        if not dims or x.ndim == 0 or not self._accepts("logsumexp", x):
            return super().logsumexp(x, dims, keepdim)
        rows = self._as_rows(x, dims)
        out = np.empty(rows.shape[0], x.dtype)
        module = kernels("softmax")
        self._use_threads("logsumexp", rows)
        module.logsumexp_rows(rows, out)
        return self._reduced_shape(out, x.shape, dims, keepdim)

    # ------------------------------------------------------------ reductions
    def sum(self, x, dims, keepdim):
        # only the free layout: summing the trailing dims of a contiguous array.  Any
        # other layout would need a transposed copy, which costs as much as numpy's sum.
        if (not dims or x.ndim == 0 or not self._accepts("sum", x) or not _compact(x)
                or tuple(dims) != tuple(range(x.ndim - len(dims), x.ndim))):
            return super().sum(x, dims, keepdim)
        rows = self._as_rows(x, dims)
        sum_rows = kernels("reduction").sum_rows
        self._use_threads("sum", rows)
        if rows.shape[0] == 1 and rows.shape[1] >= 2 * _SUM_CHUNK:
            # one long row (x.sum()): one chunk per row, so that every core gets work
            row, whole = rows[0], rows.shape[1] - rows.shape[1] % _SUM_CHUNK
            partial = np.empty(whole // _SUM_CHUNK, x.dtype)
            sum_rows(row[:whole].reshape(-1, _SUM_CHUNK), partial)
            out = np.array([partial.sum() + row[whole:].sum()], dtype=x.dtype)
        else:
            out = np.empty(rows.shape[0], x.dtype)
            sum_rows(rows, out)
        return self._reduced_shape(out, x.shape, dims, keepdim)
