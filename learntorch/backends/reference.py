"""The reference backend: the primitive array operations every op calls, in plain numpy.

This is the backend contract.  Operations (``learntorch/ops``, ``nn``, ``optim``)
compute on raw arrays only through the methods of the current backend
(``learntorch.backends.current``); a backend is any object with these methods.
``NumpyBackend`` defines every one of them: the core ones below (elementwise
arithmetic, activations and their derivatives, the softmax family, reductions,
matmul), the larger families in ``backends/numpy_families/`` (one file each).

The Numba CPU backend (``backends/numba_cpu``) overrides the methods where a compiled
kernel measurably beats numpy, and the tests use this class as the oracle for those
kernels; a learner's backend subclasses it and overrides what it wants to replace --
forward and backward then both call it.

Every method takes and returns arrays (never Tensors) and must not modify its
inputs.  ``dim`` arguments are already normalised (non-negative).  Results are
always arrays, 0-d ones included: numpy ufuncs turn a 0-d result into a numpy
*scalar* (``np.float32(1.0)``), which has no memory for an in-place op to write to,
so the methods wrap such results with ``as_array`` (a no-op for arrays).

The same methods run on cuda tensors: their ``CudaArray`` answers numpy's ufuncs
and functions with CUDA kernels (``backends/cuda``).  The few methods numpy cannot
express that way (boolean-mask assignment, ``math.erf``) hand a device array to its
own backend (``on_device``).
"""
import numpy as np

from . import opmath
from .opmath import SUM_DTYPES
from .numpy_families import FAMILIES


def as_array(x, dtype=None):
    """``np.asarray(x, dtype)``, except that a device array stays on its device.

    numpy makes 0-d results scalars, which ``np.asarray`` turns back into arrays;
    a ``CudaArray`` is never a scalar, and ``np.asarray`` would have to copy it to
    the host, so it is returned as it is (cast on the device if ``dtype`` differs).
    """
    if x.__class__ is np.ndarray or not hasattr(x, "tensor_device"):
        return np.asarray(x, dtype)
    return x if dtype is None or x.dtype == dtype else x.astype(dtype)


def on_device(x):
    """The backend of the device ``x`` lives on (None for a numpy array)."""
    return None if x.__class__ is np.ndarray else getattr(x, "backend", None)


class NumpyBackend(*FAMILIES):
    name = "numpy"

    # ---- elementwise binary (arrays already cast to the result dtype) ----
    # (the ``__class__`` test first: on one-element tensors a call to as_array is a
    # measurable part of the op, and only 0-d results need it)
    def add(self, a, b):
        out = np.add(a, b)
        return out if out.__class__ is np.ndarray else as_array(out)

    def sub(self, a, b):
        out = np.subtract(a, b)
        return out if out.__class__ is np.ndarray else as_array(out)

    def mul(self, a, b):
        out = np.multiply(a, b)
        return out if out.__class__ is np.ndarray else as_array(out)

    def div(self, a, b):
        out = np.true_divide(a, b)
        return out if out.__class__ is np.ndarray else as_array(out)

    def exp(self, x):
        return as_array(np.exp(x))

    # ---- activations and their derivatives (``ops/activation_backward.py``) ----
    def tanh(self, x):
        return as_array(np.tanh(x))

    def tanh_backward(self, y, grad):
        """d tanh(x)/dx = 1 - tanh(x)^2, written with the saved output y."""
        return as_array(grad * (1 - y * y))

    def sigmoid(self, x):
        device = on_device(x)
        if device is not None:
            return device.sigmoid(x)
        # split by sign so that exp never overflows: both branches stay in (0, 1]
        out = np.empty_like(x)
        pos = x >= 0
        out[pos] = 1 / (1 + np.exp(-x[pos]))
        ex = np.exp(x[~pos])
        out[~pos] = ex / (1 + ex)
        return out

    def sigmoid_backward(self, y, grad):
        return as_array(grad * y * (1 - y))

    def relu(self, x):
        return as_array(np.maximum(x, 0), dtype=x.dtype)

    def relu_backward(self, y, grad):
        """grad where the output y > 0, 0 where y <= 0 -- and grad where y is nan (relu(nan)
        is nan, and nan <= 0 is False: torch's threshold_backward passes it)."""
        return np.where(y <= 0, 0, grad).astype(grad.dtype, copy=False)

    def gelu(self, x):
        device = on_device(x)
        if device is not None:
            return device.gelu(x)
        # exact gelu (torch's default approximate='none'): x * Phi(x)
        return as_array(0.5 * x * (1 + _erf(x / np.sqrt(2))), dtype=x.dtype)

    def gelu_backward(self, x, grad):
        device = on_device(x)
        if device is not None:
            return device.gelu_backward(x, grad)
        cdf = 0.5 * (1 + _erf(x / np.sqrt(2)))
        pdf = np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
        return as_array(grad * (cdf + x * pdf), dtype=grad.dtype)

    def silu(self, x):
        return as_array(x * self.sigmoid(x))

    def silu_backward(self, x, grad):
        s = self.sigmoid(x)
        return as_array(grad * s * (1 + x * (1 - s)))

    # ---- softmax family: shift by the max so exp never overflows ----
    def softmax(self, x, dim):
        shifted = x - x.max(axis=dim, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=dim, keepdims=True)

    def log_softmax(self, x, dim):
        shifted = x - x.max(axis=dim, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))

    def softmax_backward(self, y, grad, dim):
        """Jacobian-vector product of softmax: y * (g - sum(g * y))."""
        return y * (grad - (grad * y).sum(axis=dim, keepdims=True))

    def log_softmax_backward(self, y, grad, dim):
        """For log-softmax output y: g - exp(y) * sum(g)."""
        return grad - np.exp(y) * grad.sum(axis=dim, keepdims=True)

    def logsumexp(self, x, dims, keepdim):
        if x.size == 0:
            return np.log(np.exp(x).sum(axis=dims, keepdims=keepdim))
        m = x.max(axis=dims, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)  # all -inf rows: keep -inf, not nan
        out = np.log(np.exp(x - m).sum(axis=dims, keepdims=True)) + m
        return as_array(out if keepdim else np.squeeze(out, axis=dims))

    # ---- reductions, and their backward: broadcasting a result back ----
    def sum(self, x, dims, keepdim):
        """numpy's sum, except that a bfloat16 sum adds in float32 and returns the float32
        sum (``opmath.py``): its callers round it once to their result's dtype."""
        return as_array(np.sum(x, axis=dims, keepdims=keepdim, dtype=SUM_DTYPES.get(x.dtype.kind)))

    def broadcast_to(self, x, shape):
        """``x`` repeated along its size-1 dims to ``shape``: a read-only view, no copy."""
        return np.broadcast_to(x, shape)

    # ---- linear algebra ----
    def matmul(self, a, b):
        out = np.matmul(a, b)
        return out if out.__class__ is np.ndarray else as_array(out)


_math_erf = None


def _erf(x):
    """Exact erf from the standard library, element by element (numpy has none)."""
    global _math_erf
    if _math_erf is None:
        import math
        _math_erf = np.frompyfunc(math.erf, 1, 1)
    # np.asarray: for a 0-d input frompyfunc returns a bare Python float, not an array
    return as_array(_math_erf(as_array(x, dtype=np.float64)), dtype=np.float64)


# bfloat16 arrays: the methods that compute more than one ufunc run in float32 and round
# once, as torch's kernels do (``opmath.py``)
opmath.install(NumpyBackend)
