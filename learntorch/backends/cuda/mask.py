"""Boolean masks on the GPU: ``np.nonzero``, and ``x[mask]`` as integer indexing.

Where do the True elements of a mask go in the result?  Element i goes to
slot ``(number of Trues before i)`` -- a *scan* of the mask (``scan.py``)::

    mask        F T T F T
    scan        0 1 2 2 3        (inclusive: the Trues up to and including i)
    slot        -  0 1 - 2       (scan - 1, for the True elements)

The scan's last value is how many Trues there are: the size of the result.
That one number has to come back to the host before the result can be
allocated (torch synchronizes here too: ``nonzero`` and ``x[mask]`` are the
operations whose output *shape* depends on the data).  Then one kernel
writes, for every True element, its coordinates into its slot.

``x[mask]`` is then ``x[nonzero(mask)]``: a mask over k dims is the same
index as the k integer arrays of its True coordinates, which the gather
kernels of ``indexing.py`` already serve -- reads, writes and ``np.add.at``.
"""
import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda
from .scan import cumsum

cuda = numba_cuda()


@cuda.jit
def write_coordinates(n, mask, slots, shape, count, out):
    """For each True ``mask[i]``: the coordinates of i in ``shape`` go to column ``slots[i] - 1``.

    One thread per mask element (``cuda.grid(1)``).  ``mask`` is the flat
    C-contiguous mask, ``slots`` its inclusive scan, ``shape`` the mask's shape
    (int64), ``out`` a flat (ndim, count) array: row d holds the dim-d coordinates.
    The threads of False elements write nothing; no two True ones share a slot.
    """
    i = cuda.grid(1)
    if i < n and mask[i]:
        slot = slots[i] - 1
        rest = i
        for d in range(shape.size - 1, -1, -1):  # unravel i, last dim fastest
            out[d * count + slot] = rest % shape[d]
            rest //= shape[d]


def nonzero(a):
    """``np.nonzero(a)``: a tuple of int64 arrays, the coordinates of the nonzero elements."""
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    mask = a if a.dtype == np.bool_ else np.not_equal(a, a.dtype.type(0))
    mask = mask.reshape(-1)  # (a copy when the mask is a strided view: C order counts)
    slots = cumsum(mask, dtype=np.int64)
    count = int(slots[-1].item()) if mask.size else 0  # the one wait for the GPU
    out = CudaArray.empty((a.ndim, count), np.int64)
    if count:
        shape = CudaArray.from_host(np.array(a.shape, np.int64))
        launch(write_coordinates, mask.size)(mask.size, mask._flat(), slots._flat(),
                                             shape._flat(), count, out._flat())
    return tuple(out[d] for d in range(a.ndim))


def expand_masks(key):
    """``key`` with each boolean array replaced by the integer arrays of its True coordinates.

    A host (numpy) mask is resolved on the host; a device mask by ``nonzero``.
    """
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, CudaArray) and k.dtype == np.bool_:
            if k.ndim == 0:  # (the engine turns these into Python bools before they get here)
                raise IndexError("a 0-d boolean array is not a valid index of a cuda array; "
                                 "use x[None] for True or x[None][:0] for False")
            out += list(nonzero(k))
        elif isinstance(k, (np.ndarray, list)) and np.asarray(k).dtype == np.bool_:
            out += [CudaArray.from_host(i) for i in np.nonzero(np.asarray(k))]
        else:
            out.append(k)
    return tuple(out)
