"""Constants a method computes on the host (weights, averaging matrices), placed on the
device of the data they are combined with.

numpy makes them; a device array (``backends/cuda``) refuses to meet host arrays in
arithmetic, as torch refuses to mix devices, so they are copied there first.
"""
import numpy as np


def like(constant, data):
    """``constant`` (a numpy array) where ``data`` lives: itself for a numpy array, else a
    copy made by the device array's own class."""
    if data.__class__ is np.ndarray or not hasattr(data, "tensor_device"):
        return constant
    return type(data).from_host(np.ascontiguousarray(constant))
