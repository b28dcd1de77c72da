"""One kernel per ufunc: out[i] = f(a[i], b[i], ...) over broadcast, strided inputs.

Every elementwise operation on cuda tensors -- ``a + b``, ``x.exp()``,
``x > 0``, a copy into a transposed layout, a dtype cast -- is this one
kernel with a different ``f`` (see ``scalar_math.py``).

**Thread layout.**  One thread per output element: thread ``i = cuda.grid(1)``
(``i < n``) computes element ``i`` of the output in C order.  No thread reads
another thread's output, so there is no synchronisation.

**Contract.**  Arrays are passed as a flat device buffer plus ``offset`` and
``strides`` counted in elements (the layout of a numpy view).  Broadcasting
costs nothing: an input that is repeated along a dimension gets stride 0
there, so every thread of that dimension reads the same element.
``position(i, shape, strides, offset)`` turns the output's C-order index
``i`` into an input's buffer index -- the index arithmetic MiniTorch calls
``index_to_position``.  A Python number operand is passed as a kernel
argument instead of an array (``load_scalar``).  The output may be strided
too (``np.add(a, b, out=view)``), which is how in-place ops write into views.

Kernels are compiled lazily, once per (ufunc, which operands are numbers);
numba-cuda then specialises each for the dtypes and number of dimensions
it meets.
"""
from .driver import launch, numba_cuda
from . import scalar_math

cuda = numba_cuda()


@cuda.jit(device=True)
def position(i, shape, strides, offset):
    """Buffer index of the element with C-order index ``i`` in an array of ``shape``."""
    p = offset
    for d in range(len(shape) - 1, -1, -1):
        p += (i % shape[d]) * strides[d]
        i //= shape[d]
    return p


@cuda.jit(device=True)
def load_array(a, offset, strides, i, shape):
    return a[position(i, shape, strides, offset)]


@cuda.jit(device=True)
def load_scalar(a, offset, strides, i, shape):
    return a


def _make_kernel(fn, loaders):
    f = cuda.jit(device=True)(fn)
    if len(loaders) == 1:
        load_a, = loaders

        @cuda.jit
        def map1(n, shape, out, o_off, o_strides, a, a_off, a_strides):
            i = cuda.grid(1)
            if i < n:
                out[position(i, shape, o_strides, o_off)] = f(
                    load_a(a, a_off, a_strides, i, shape))
        return map1
    if len(loaders) == 2:
        load_a, load_b = loaders

        @cuda.jit
        def map2(n, shape, out, o_off, o_strides, a, a_off, a_strides, b, b_off, b_strides):
            i = cuda.grid(1)
            if i < n:
                out[position(i, shape, o_strides, o_off)] = f(
                    load_a(a, a_off, a_strides, i, shape), load_b(b, b_off, b_strides, i, shape))
        return map2
    load_a, load_b, load_c = loaders

    @cuda.jit
    def map3(n, shape, out, o_off, o_strides, a, a_off, a_strides, b, b_off, b_strides,
             c, c_off, c_strides):
        i = cuda.grid(1)
        if i < n:
            out[position(i, shape, o_strides, o_off)] = f(
                load_a(a, a_off, a_strides, i, shape), load_b(b, b_off, b_strides, i, shape),
                load_c(c, c_off, c_strides, i, shape))
    return map3


_kernels = {}


def kernel_for(name, fn, scalar_mask):
    """The compiled kernel applying ``fn`` (cached by ``name`` and which operands are numbers)."""
    key = (name, scalar_mask)
    k = _kernels.get(key)
    if k is None:
        loaders = [load_scalar if is_scalar else load_array for is_scalar in scalar_mask]
        k = _kernels[key] = _make_kernel(fn, loaders)
    return k


def run(name, fn, operands, out):
    """``out[...] = fn(*operands)`` elementwise.

    ``operands``: CudaArrays already broadcast to ``out.shape`` (stride-0 views)
    or numbers already converted to the computation's numpy scalar type.
    """
    n = out.size
    if n == 0:
        return out
    shape = out.shape or (1,)  # a 0-d array is walked as one element
    args = [n, shape, out._buffer, out._offset, _strides(out, shape)]
    mask = []
    for x in operands:
        if hasattr(x, "_buffer"):
            args += [x._buffer, x._offset, _strides(x, shape)]
            mask.append(False)
        else:
            args += [x, 0, (0,) * len(shape)]
            mask.append(True)
    launch(kernel_for(name, fn, tuple(mask)), n)(*args)
    return out


def _strides(a, shape):
    return a._strides if a.shape else (0,) * len(shape)


UFUNCS = scalar_math.UFUNCS
