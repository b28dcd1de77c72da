"""The Numba CPU backend (placeholder until the kernels land): numpy everywhere."""
from ..reference import NumpyBackend


class NumbaBackend(NumpyBackend):
    name = "numba"
