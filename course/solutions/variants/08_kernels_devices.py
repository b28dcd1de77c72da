"""Learner variants of chapter 08 (kernels and devices): 08.1 a fused tanh backward kernel in a
backend, 08.2 a CUDA row-sum kernel with a shared-memory tree.  See course/variants.py for the
format."""
from course.variants import correct, mistake


def _fused(kernel_body, method_body):
    """08.1's cell: the @njit kernel with ``kernel_body``, FusedBackend.tanh_backward with
    ``method_body`` (both indented 8, as in the class)."""
    return ("@njit\ndef tanh_backward_kernel(y, grad, out):\n" + kernel_body
            + "\n\nclass FusedBackend(NumpyBackend):\n    def tanh_backward(self, y, grad):\n"
            + method_body)


RIGHT_KERNEL = """\
    for i in range(y.size):
        out[i] = grad[i] * (1 - y[i] * y[i])
"""
RIGHT_METHOD = """\
        flat_y = np.ascontiguousarray(y).reshape(-1)
        flat_grad = np.ascontiguousarray(grad).reshape(-1)
        out = np.empty(flat_grad.size, dtype=grad.dtype)
        tanh_backward_kernel(flat_y, flat_grad, out)
        return out.reshape(grad.shape)
"""


def _row_sum(kernel_body, launch="    row_sum_kernel[x.shape[0], THREADS](x, out)\n"):
    """08.2's cell: its first lines, the kernel with ``kernel_body`` (indented 4), row_sum."""
    return ("from numba import float32\n\nTHREADS = 8\n\n\n@cuda.jit\ndef row_sum_kernel(x, out):\n"
            + kernel_body + "\n\ndef row_sum(x):\n"
            "    out = np.zeros(x.shape[0], dtype=np.float32)\n" + launch + "    return out\n")


FOLD = """\
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    acc = float32(0)
    for j in range(t, x.shape[1], THREADS):
        acc += x[row, j]
    partial[t] = acc
"""
TREE = """\
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[row] = partial[0]
"""


VARIANTS = {
    "08.1": [
        correct("a 2-D loop over a reshaped view, out made with np.empty_like(grad)", _fused("""\
    n = y.shape[0]
    for i in range(n):
        g = grad[i]
        out[i] = g - g * y[i] * y[i]
""", """\
        y_flat = np.ascontiguousarray(y).ravel()
        g_flat = np.ascontiguousarray(grad).ravel()
        out = np.empty_like(g_flat)
        tanh_backward_kernel(y_flat, g_flat, out)
        return out.reshape(grad.shape)
""")),
        correct("a prange kernel; np.array(..., copy) flattens", """\
@njit(parallel=True)
def tanh_backward_kernel(y, grad, out):
    for i in prange(y.size):
        yi = y[i]
        out[i] = grad[i] * (1.0 - yi * yi)


class FusedBackend(NumpyBackend):
    def tanh_backward(self, y, grad):
        result = np.zeros(grad.size, dtype=grad.dtype)
        tanh_backward_kernel(np.array(y, copy=True).reshape(-1), np.array(grad).reshape(-1),
                             result)
        return result.reshape(grad.shape)
"""),
        mistake("tanh taken again: 1 - tanh(y)**2 where y already is tanh(x)", _fused("""\
    for i in range(y.size):
        t = np.tanh(y[i])
        out[i] = grad[i] * (1 - t * t)
""", RIGHT_METHOD), feedback=["tanh_backward_kernel(y, grad, out)", "1 - y[i]**2"]),
        mistake("the result in float64 (np.empty's default dtype)", _fused(RIGHT_KERNEL, """\
        flat_y = np.ascontiguousarray(y).reshape(-1)
        flat_grad = np.ascontiguousarray(grad).reshape(-1)
        out = np.empty(flat_grad.size)
        tanh_backward_kernel(flat_y, flat_grad, out)
        return out.reshape(grad.shape)
"""), feedback=["dtype", "grad's shape and dtype"]),
        mistake("the result written into grad (a view of it), changing the engine's gradient",
                _fused(RIGHT_KERNEL, """\
        flat_y = np.ascontiguousarray(y).reshape(-1)
        flat_grad = np.ascontiguousarray(grad).reshape(-1)
        tanh_backward_kernel(flat_y, flat_grad, flat_grad)
        return flat_grad.reshape(grad.shape)
"""), feedback=["y and grad unchanged", "never into grad"]),
        mistake("numpy in the method: the kernel never runs", _fused(RIGHT_KERNEL, """\
        return grad * (1 - y * y)
"""), feedback=["call tanh_backward_kernel", "not in numpy"]),
        mistake("the flat result returned without its shape", _fused(RIGHT_KERNEL, """\
        flat_y = np.ascontiguousarray(y).reshape(-1)
        flat_grad = np.ascontiguousarray(grad).reshape(-1)
        out = np.empty(flat_grad.size, dtype=grad.dtype)
        tanh_backward_kernel(flat_y, flat_grad, out)
        return out
"""), feedback=["2-D float32", "shape"]),
    ],
    "08.2": [
        correct("the tree with a for loop over the steps; the launch from the row count", _row_sum(
            FOLD + """\
    cuda.syncthreads()
    for level in range(3):                   # THREADS = 8: steps 4, 2, 1
        step = THREADS >> (level + 1)
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
    if t == 0:
        out[row] = partial[0]
""", launch="    rows = x.shape[0]\n    row_sum_kernel[rows, THREADS](x, out)\n")),
        correct("a while loop over j for the fold, one barrier at the top of each round",
                _row_sum("""\
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    total = float32(0)
    j = t
    while j < x.shape[1]:
        total += x[row, j]
        j += THREADS
    partial[t] = total
    step = THREADS
    while step > 1:
        cuda.syncthreads()
        step //= 2
        if t < step:
            partial[t] = partial[t] + partial[t + step]
    if t == 0:
        out[row] = partial[0]
""")),
        mistake("no cuda.syncthreads(): threads read slots before they are written", _row_sum(
            FOLD + """\
    step = THREADS // 2
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        step //= 2
    if t == 0:
        out[row] = partial[0]
"""), feedback=["cuda.syncthreads()"]),
        mistake("no `if t < step`: every thread reads slot t + step, past the shared array",
                _row_sum(FOLD + """\
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[row] = partial[0]
"""), feedback=["the error row_sum(x) raised", "IndexError", "only threads t < step"]),
        mistake("the fold steps by 1, not by THREADS: elements counted several times", _row_sum("""\
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    acc = float32(0)
    for j in range(t, x.shape[1]):
        acc += x[row, j]
    partial[t] = acc
""" + TREE), feedback=["row_sum(x) for x of shape", "does the fold step by threads"]),
        mistake("the fold starts at x[row, t] without a bounds check: short rows go past the end",
                _row_sum("""\
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    acc = x[row, t]
    for j in range(t + THREADS, x.shape[1], THREADS):
        acc += x[row, j]
    partial[t] = acc
""" + TREE), feedback=["the error row_sum(x) raised", "IndexError", "the fold's bounds"]),
        mistake("the grid one block short: the last row is never summed", _row_sum(
            FOLD + TREE, launch="    row_sum_kernel[x.shape[0] - 1, THREADS](x, out)\n"),
            feedback=["the last row was never summed", "one block per row"]),
    ],
}
