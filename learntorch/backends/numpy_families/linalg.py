"""Products beyond ``matmul`` (a core method), in numpy: the dot product of two vectors,
einsum of an equation in letters only, and the cross product of 3-vectors."""
import numpy as np


def _arr(out, dtype=None):
    from ..reference import as_array
    return as_array(out, dtype)


class LinearAlgebra:
    def dot(self, a, b):
        return _arr(np.dot(a, b))

    def einsum(self, equation, *arrays):
        """``np.einsum`` of an equation without '...' (the op rewrites ellipses first)."""
        return _arr(np.einsum(equation, *arrays, optimize=True))

    def cross(self, a, b, dim):
        """a x b along ``dim`` (size 3), the operands broadcast together."""
        return _arr(np.cross(a, b, axis=dim))
