"""The norm of many gradients together: what ``nn.utils.clip_grad_norm_`` measures.

``norm_of_arrays(arrays, norm_type)`` is the ``norm_type``-norm of every element of
``arrays`` seen as one long vector, computed as torch computes it: the norm of each
array (accumulated in float64 here, then rounded once to the array's dtype, so a
float32 norm is the correctly rounded value), then the norm of those norms.  The
result is a Python float; the caller rounds it to the gradients' dtype.
"""
import numpy as np


class GradNormFamily:
    def norm_of_arrays(self, arrays, norm_type):
        per_array = np.array([np.asarray(_vector_norm(a, norm_type), dtype=a.dtype)
                              for a in arrays], dtype=np.float64)
        return _vector_norm(per_array, norm_type)


def _vector_norm(a, norm_type):
    """The ``norm_type``-norm of all elements of ``a``, in float64 (a Python float)."""
    x = np.abs(a.astype(np.float64, copy=False)).reshape(-1)
    if norm_type == float("inf") or norm_type == float("-inf"):
        if x.size == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {norm_type} norm on an empty tensor "
                "because the operation does not have an identity")
        return float(x.max() if norm_type > 0 else x.min())
    if norm_type == 0:
        return float(np.count_nonzero(x))
    if norm_type == 2:
        return float(np.sqrt(np.dot(x, x)))
    if norm_type == 1:
        return float(x.sum())
    return float(np.sum(x ** norm_type) ** (1.0 / norm_type))
