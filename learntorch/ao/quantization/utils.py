"""Code ranges and checks shared by the observers (torch's ``ao/quantization/utils.py``)."""
import warnings

from ... import _dtypes


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The (quant_min, quant_max) an observer quantizes onto.

    Without a custom range: the dtype's 8-bit range, halved by ``reduce_range`` (x86's int8
    instructions sum pairs of products in 16 bits; one bit less headroom avoids overflow):
    qint8 -128..127 (-64..63), quint8 0..255 (0..127), qint32 the int32 range.
    """
    if has_customized_qrange:
        initial_min, initial_max = quant_min, quant_max
        length = initial_max - initial_min + 1
        if dtype in (_dtypes.qint8, _dtypes.int8) and not 0 < length <= 256:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=256).")
        if dtype in (_dtypes.qint32, _dtypes.int32) and not 0 < length <= 2 ** 32:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (_dtypes.qint8, _dtypes.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (_dtypes.quint8, _dtypes.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (_dtypes.qint32, _dtypes.int32):
        return -(2 ** 31), 2 ** 31 - 1
    return 0, 15  # torch's fallback (quint4x2)


def validate_qmin_qmax(quant_min, quant_max):
    """A user-given range must contain 0 and have quant_min < quant_max."""
    if not quant_min <= 0 <= quant_max:
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError("qmin must be strictly less than qmax for user-specified "
                             "quantization range.")


def check_min_max_valid(min_val, max_val):
    """False (with torch's warning) while an observer has seen nothing; an error if min > max."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default "
                      "values.", stacklevel=3)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=3)
            return False
        if float(min_val) > float(max_val):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif bool((min_val > max_val).any()):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True
