"""The reference backend: every primitive in plain numpy.

This is the backend contract.  Autograd functions (``learntorch/ops``) call
these primitives on raw arrays; a backend is any object with the same methods.
The numba CPU backend overrides the ones where a compiled kernel measurably
beats numpy, and the tests use this class as the oracle for those kernels.

Every method takes and returns numpy arrays (never Tensors) and must not
modify its inputs.  ``dim`` arguments are already normalised (non-negative).
Results are always ``ndarray``s, 0-d ones included: numpy ufuncs turn a 0-d
result into a numpy *scalar* (``np.float32(1.0)``), which has no memory for an
in-place op to write to, so the methods below wrap such results with
``np.asarray`` (a no-op for arrays).
"""
import numpy as np


class NumpyBackend:
    name = "numpy"

    # ---- elementwise binary (arrays already cast to the result dtype) ----
    def add(self, a, b):
        return np.asarray(np.add(a, b))

    def sub(self, a, b):
        return np.asarray(np.subtract(a, b))

    def mul(self, a, b):
        return np.asarray(np.multiply(a, b))

    def div(self, a, b):
        return np.asarray(np.true_divide(a, b))

    # ---- activations and their derivatives ----
    def exp(self, x):
        return np.asarray(np.exp(x))

    def tanh(self, x):
        return np.asarray(np.tanh(x))

    def tanh_backward(self, y, grad):
        """d tanh(x)/dx = 1 - tanh(x)^2, written with the saved output y."""
        return np.asarray(grad * (1 - y * y))

    def sigmoid(self, x):
        # split by sign so that exp never overflows: both branches stay in (0, 1]
        out = np.empty_like(x)
        pos = x >= 0
        out[pos] = 1 / (1 + np.exp(-x[pos]))
        ex = np.exp(x[~pos])
        out[~pos] = ex / (1 + ex)
        return out

    def sigmoid_backward(self, y, grad):
        return np.asarray(grad * y * (1 - y))

    def relu(self, x):
        return np.asarray(np.maximum(x, 0), dtype=x.dtype)

    def relu_backward(self, x, grad):
        return np.where(x > 0, grad, 0).astype(grad.dtype, copy=False)

    def gelu(self, x):
        # exact gelu (torch's default approximate='none'): x * Phi(x)
        return np.asarray(0.5 * x * (1 + _erf(x / np.sqrt(2))), dtype=x.dtype)

    def gelu_backward(self, x, grad):
        cdf = 0.5 * (1 + _erf(x / np.sqrt(2)))
        pdf = np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
        return np.asarray(grad * (cdf + x * pdf), dtype=grad.dtype)

    def silu(self, x):
        return np.asarray(x * self.sigmoid(x))

    def silu_backward(self, x, grad):
        s = self.sigmoid(x)
        return np.asarray(grad * s * (1 + x * (1 - s)))

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
        return np.asarray(out if keepdim else np.squeeze(out, axis=dims))

    # ---- reductions ----
    def sum(self, x, dims, keepdim):
        return np.asarray(np.sum(x, axis=dims, keepdims=keepdim))

    # ---- linear algebra ----
    def matmul(self, a, b):
        return np.asarray(np.matmul(a, b))


_math_erf = None


def _erf(x):
    """Exact erf from the standard library, element by element (numpy has none)."""
    global _math_erf
    if _math_erf is None:
        import math
        _math_erf = np.frompyfunc(math.erf, 1, 1)
    # np.asarray: for a 0-d input frompyfunc returns a bare Python float, not an array
    return np.asarray(_math_erf(np.asarray(x, dtype=np.float64)), dtype=np.float64)
