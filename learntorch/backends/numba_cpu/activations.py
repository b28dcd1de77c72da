"""Fused activation kernels: one pass over memory for ``f(x)`` and one for ``grad * f'(.)``.

Why a kernel beats numpy here: numpy evaluates ``grad * (1 - y * y)`` as three
separate loops, each reading and writing a whole temporary array.  A fused
kernel reads each input element once, does all the arithmetic in registers and
writes each output element once.  For sigmoid, gelu and silu the numpy
reference is slower still (boolean masks, ``math.erf`` one Python call at a
time), so these kernels win by a wide margin.  Inside the loops, ``exp`` and
``erf`` are ``fast_exp``/``fast_erf``/``fast_gelu`` where they would otherwise be the
only thing keeping a loop from running on SIMD lanes (gelu); ``math.exp`` elsewhere.

Contract shared by every kernel in this file:

* inputs are **1-D, C-contiguous** arrays of float32 or float64, all of one
  dtype and one length (the backend flattens and checks before calling);
* the last argument ``out`` is a 1-D array of the same dtype and length that the
  kernel fills (the backend allocates it with numpy, whose allocator asks the OS
  for huge pages: on 10^7 elements that halved the time against allocating
  inside the kernel); inputs are never written;
* thread layout: the main loop is a ``prange`` over elements, so each thread
  takes one contiguous block of indices; iteration ``i`` reads only element
  ``i`` of each input and writes only ``out[i]`` -- no two threads ever touch
  the same output element, and nothing but ``out[i]`` is written in the loop.

Values follow torch: NaN stays NaN, and sigmoid/silu stay finite for inputs of
+-1000 (see ``_sigmoid1``).  Which of these the backend actually uses, and from
what size, is decided by measurement in ``backend.py``.
"""
import math

from numba import njit, prange

from .fast_erf import fast_erf
from .fast_exp import fast_exp
from .fast_gelu import fast_gelu

# error_model="numpy": float division by zero gives inf/nan as in numpy, instead
# of Python's ZeroDivisionError (which would also stop the loop vectorizing).
_KERNEL = dict(parallel=True, cache=True, error_model="numpy")

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@njit(cache=True, error_model="numpy", inline="always")
def _sigmoid1(v):
    """Stable logistic function of one number.

    ``1 / (1 + exp(-v))`` overflows ``exp`` for v = -1000; splitting on the sign
    means exp only ever sees a non-positive argument, so it lies in (0, 1].
    """
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)  # NaN lands here too and stays NaN
    return e / (1.0 + e)


@njit(**_KERNEL)
def relu(x, out):
    """max(x, 0) elementwise; NaN passes through (``NaN <= 0`` is False), as in torch."""
    for i in prange(x.size):
        v = x[i]
        out[i] = 0.0 if v <= 0 else v


@njit(**_KERNEL)
def relu_backward(y, grad, out):
    """grad where the *output* y > 0 (y > 0 exactly where x > 0), 0 where y <= 0; a nan
    y (relu of nan) passes grad, as torch's threshold_backward (``nan <= 0`` is False)."""
    for i in prange(grad.size):
        out[i] = 0.0 if y[i] <= 0 else grad[i]


@njit(**_KERNEL)
def tanh(x, out):
    """tanh elementwise.  Kept as a lesson, off by default: there is nothing to fuse,
    and numpy's SIMD tanh beat this loop of scalar ``tanhf`` calls 30-100x (see
    ``backend.py``).  A kernel earns its place only where it removes passes over memory."""
    for i in prange(x.size):
        out[i] = math.tanh(x[i])


@njit(**_KERNEL)
def tanh_backward(y, grad, out):
    """grad * (1 - y^2), with y = tanh(x) the saved output."""
    for i in prange(grad.size):
        out[i] = grad[i] * (1 - y[i] * y[i])


@njit(**_KERNEL)
def sigmoid(x, out):
    for i in prange(x.size):
        out[i] = _sigmoid1(x[i])


@njit(**_KERNEL)
def sigmoid_backward(y, grad, out):
    """grad * y * (1 - y), with y = sigmoid(x) the saved output."""
    for i in prange(grad.size):
        out[i] = grad[i] * y[i] * (1 - y[i])


@njit(**_KERNEL)
def gelu(x, out):
    """Exact gelu, x * Phi(x) with Phi the normal distribution's CDF.

    ``fast_gelu`` (fast_gelu.py): on float32 computed in float32 (within 8 float32 ulp of
    the exact value; 16 numbers per SIMD instruction), on float64 in float64 with
    ``fast_erf``.  A call to the C library's scalar erf would keep the loop from
    vectorizing: on one thread, 32768 float32 took 580 us that way, 111 us in float64
    with fast_erf, 31 us in float32 (4 us for relu).
    """
    for i in prange(x.size):
        out[i] = fast_gelu(x[i])


@njit(**_KERNEL)
def gelu_backward(x, grad, out):
    """grad * (Phi(x) + x * phi(x)): the product rule on x * Phi(x), phi the normal pdf.

    In float64 with ``fast_erf`` and ``fast_exp`` (float64 forms), whatever the dtype."""
    for i in prange(grad.size):
        v = x[i]
        cdf = 0.5 * (1.0 + fast_erf(v * _INV_SQRT2))
        pdf = fast_exp(-0.5 * v * v) * _INV_SQRT_2PI
        out[i] = grad[i] * (cdf + v * pdf)


@njit(**_KERNEL)
def silu(x, out):
    """x * sigmoid(x) (also called swish)."""
    for i in prange(x.size):
        v = x[i]
        out[i] = v * _sigmoid1(v)


@njit(**_KERNEL)
def silu_backward(x, grad, out):
    """grad * s * (1 + x * (1 - s)) with s = sigmoid(x)."""
    for i in prange(grad.size):
        v = x[i]
        s = _sigmoid1(v)
        out[i] = grad[i] * s * (1.0 + v * (1.0 - s))
