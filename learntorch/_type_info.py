"""``finfo`` and ``iinfo``: the numeric limits of a dtype (torch.finfo / torch.iinfo).

    torch.finfo(torch.float16).max        65504.0   the largest finite number
    torch.finfo(torch.float32).eps        1.19e-07  the gap between 1.0 and the next number
    torch.finfo(torch.float16).tiny       6.10e-05  the smallest positive normal number
    torch.iinfo(torch.uint8).max          255

The numbers come from numpy's own tables (``np.finfo`` / ``np.iinfo``) of the dtype's
numpy twin.  A floating dtype without a numpy twin (bfloat16, from the ``ml_dtypes``
package) registers its table in ``_FLOAT_INFO`` -- one function.
"""
import numpy as np

from . import _dtypes

#: dtype name -> a function giving numpy's limits table for it
_FLOAT_INFO = {name: np.finfo for name in ("float16", "float32", "float64")}


def _bfloat16_finfo(np_dtype):
    import ml_dtypes  # (imported on the first use of bfloat16, not with learntorch: slow)
    return ml_dtypes.finfo(np_dtype)


_FLOAT_INFO["bfloat16"] = _bfloat16_finfo


class finfo:
    """Limits of a floating dtype: bits, eps, max, min, tiny (= smallest_normal),
    smallest_normal, resolution, dtype (its name)."""

    def __init__(self, type=None):
        d = _dtypes.get_default_dtype() if type is None else _dtypes.to_dtype(type)
        if d.name not in _FLOAT_INFO:
            raise TypeError(f"torch.finfo() requires a floating point input type (got {d}). "
                            "Use torch.iinfo to handle 'torch.finfo'")
        info = _FLOAT_INFO[d.name](d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # torch's: a power of ten
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))


class iinfo:
    """Limits of an integer dtype: bits, max, min, dtype (its name)."""

    def __init__(self, type):
        d = _dtypes.to_dtype(type)
        if d.is_floating_point:
            raise TypeError(f"torch.iinfo() requires an integer input type (got {d}). Use "
                            "torch.finfo to handle floating types")
        if d is _dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = d.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
