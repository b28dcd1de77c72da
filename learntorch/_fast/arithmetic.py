"""Fast forwards of + - * / (the ops of every training loop and of the per-op benchmarks).

Replaces: ``Add.forward``, ``Sub.forward``, ``Rsub.forward``, ``Mul.forward`` and
``Div.forward`` of ``learntorch/ops/arithmetic.py`` (through ``apply.FAST_FORWARD``).
Each computes the same values with the same backend call; what it saves:

* a Python float operand becomes a cached read-only 0-d array of the tensor's dtype.
  numpy treats a Python float as a "weak" scalar and converts it on every call
  (0.42 us for a one-element multiply, 0.22 us with the 0-d array); the conversion
  gives the same value, so the product is the same, bit for bit;
* the common operand cases (a float tensor and a Python float; two tensors of one
  dtype and shape) are decided by a few attribute reads before any general check;
* saving writes the node's slots directly with shared tuples (``apply.shared_tuple``).
"""
import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..ops import arithmetic as reference
from .apply import ARRAYS_ONLY, FAST_FORWARD, save_pair, shared_tuple

_constants = {}  # (number, numpy dtype) -> read-only 0-d array


def float_constant(number, array):
    """A Python float as a 0-d array of ``array``'s float dtype, made once per value
    (device arrays keep the number: their own kernels take it)."""
    if array.__class__ is not np.ndarray:
        return number
    key = (number, array.dtype)
    constant = _constants.get(key)
    if constant is None:
        if len(_constants) > 1024:
            _constants.clear()
        constant = np.array(number, dtype=array.dtype)
        constant.flags.writeable = False
        _constants[key] = constant
    return constant


def _operands(a, b, op):
    """``reference._operands``, with the commonest case (float tensor op Python float) first."""
    if b.__class__ is float and a.__class__ is Tensor and a._dtype.is_floating_point and (
            a._dtype.itemsize > 2 or op not in reference._OPMATH_OPS):  # (float16: opmath)
        return a._data, float_constant(b, a._data), a._dtype
    if a.__class__ is Tensor and b.__class__ is Tensor and a._dtype is b._dtype:
        if a._device is not b._device and a._device != b._device:
            reference.check_same_device(a, b)
        if a._data.shape != b._data.shape:
            reference._check_broadcast(a._data.shape, b._data.shape, op)
        return a._data, b._data, a._dtype
    return reference._operands(a, b, op)


def _wrap(out, dtype):
    return Tensor._wrap(out if out.dtype is dtype.np or out.dtype == dtype.np
                        else out.astype(dtype.np))


NOTHING_SAVED, _NO_VERSIONS = (None, None), (0, 0)  # x * 2.0 saves no tensor


def _save(ctx, a, b):
    """``reference._save`` written into the node's slots, with shared tuples."""
    if ctx._edges == ():  # an _Unrecorded ctx: nothing will read what is saved
        return
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    if ta is None and tb is None:
        ctx._saved, ctx._saved_versions = NOTHING_SAVED, _NO_VERSIONS
    else:
        save_pair(ctx, ta, tb)
    ctx.constants = shared_tuple((None if isinstance(a, Tensor) else a,
                                  None if isinstance(b, Tensor) else b))


def _additive(op, kernel, check=None):
    """The fast forward of ``a + alpha * b`` (``op`` "add") or ``a - alpha * b`` ("sub")."""
    def forward(ctx, a, b, alpha=1):
        if check is not None:
            check(a, b)
        x, y, dtype = _operands(a, b, op)
        ctx.constants = alpha
        if not (alpha.__class__ is int and alpha == 1) and (alpha != 1 or isinstance(alpha, bool)):
            y = reference._scaled(y, alpha, dtype)
        return _wrap(getattr(backends.current, kernel)(x, y), dtype)
    forward.__name__ = f"{op}_forward"
    return forward


add_forward = _additive("add", "add")
sub_forward = _additive("sub", "sub", check=reference._check_no_bool_subtraction)


def mul_forward(ctx, a, b):
    x, y, dtype = _operands(a, b, "mul")
    needs = ctx.needs_input_grad if ctx._edges else None
    if needs is not None:
        _save(ctx, a if needs[1] else None, b if needs[0] else None)
    return _wrap(backends.current.mul(x, y), dtype)


def div_forward(ctx, a, b):
    dtype = _dtypes.result_type(a, b)
    if not dtype.is_floating_point:
        dtype = _dtypes.get_default_dtype()
        x, y, dtype = reference._operands(a, b, "div", dtype)
    else:
        x, y, dtype = _operands(a, b, "div")
    if ctx._edges:
        _save(ctx, a if ctx.needs_input_grad[1] else None, b)
    return _wrap(backends.current.div(x, y), dtype)


FAST_FORWARD.update({reference.Add: add_forward, reference.Sub: sub_forward,
                     reference.Rsub: sub_forward, reference.Mul: mul_forward,
                     reference.Div: div_forward})
ARRAYS_ONLY.update(FAST_FORWARD)
