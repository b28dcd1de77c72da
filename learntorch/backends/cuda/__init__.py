"""The CUDA backend: learntorch's operations as numba-cuda kernels on a GPU.

A cuda tensor holds a ``CudaArray`` (``array.py``) where a cpu tensor holds
a numpy array.  ``CudaArray`` implements numpy's array protocols, so the op
code in ``learntorch/ops`` runs unchanged on it, and each numpy call becomes
a kernel.  Files, one idea each:

* ``driver.py``      -- the one place numba.cuda is imported; launch geometry;
* ``allocator.py``   -- the caching allocator (freed blocks are reused);
* ``array.py``       -- ``CudaArray``: shape/strides/offset views over device memory;
* ``scalar_math.py`` -- what each ufunc computes for one element;
* ``elementwise.py`` -- the broadcasting, strided elementwise kernel;
* ``reduction.py``   -- sum/prod/max/min/argmax/argmin rows, shared-memory trees;
* ``matmul.py``      -- the shared-memory tiled (batched) matmul;
* ``indexing.py``    -- views for basic indexing; gather/scatter kernels for index arrays;
* ``scan.py``        -- cumsum: a per-row Hillis-Steele scan with a carry across tiles;
* ``mask.py``        -- nonzero and boolean masks: a scan numbers the Trues, then a scatter;
* ``sort.py``        -- argsort (sort/topk): a stable bitonic sort per row, in shared memory
  up to 1024 elements, in global memory (one launch per step) beyond;
* ``einsum.py``      -- einsum lowered to diagonal views, sums and the batched matmul;
* ``numpy_api.py``   -- which numpy functions a CudaArray answers, and how;
* ``backend.py``     -- ``CudaBackend``: the backend primitives (fused activations,
  softmax rows) for CudaArrays;
* ``conv.py``        -- conv2d forward and its three gradients, one thread per output;
* ``pooling.py``     -- max_pool2d (values + argmax) and avg_pool2d, forward and backward;
* ``optim_kernels.py`` -- fused SGD / Adam / RMSprop / Adagrad updates;
* ``random.py``      -- counter-based random numbers generated on the device.

Nothing here is imported by ``import learntorch``: numba.cuda loads with the
first cuda tensor.  Without a GPU, run with ``NUMBA_ENABLE_CUDASIM=1`` and
Numba's simulator runs every kernel on the CPU.
"""
from . import backend, indexing, numpy_api  # noqa: F401,E402  (each registers itself on CudaArray)
