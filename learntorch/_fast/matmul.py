"""The fast matrix product: ``a @ b`` and ``torch.mm`` of two matrices.

``mm_forward`` replaces ``Matmul.forward`` of ``learntorch/ops/linalg.py`` for ``Mm``
(through ``apply.FAST_FORWARD``).  The reference forward is the backend's ``matmul`` on
the two arrays; for numpy float arrays on the numpy or Numba backend that is ``np.matmul``
(opmath's wrapper around it changes bfloat16 arrays only), which is called here directly.
The values are the reference's bit for bit; what it saves per call:

* the backend method and opmath's wrapper around it: two Python calls;
* an op that is not recorded (no_grad, or no operand requires grad) keeps nothing: the
  reference writes ``a_vec``/``b_vec`` into the node (a ``__dict__`` per call) and reads
  its ``needs_input_grad``, which ``apply._Unrecorded`` makes as a new tuple when asked;
  a recorded one writes what ``save_for_backward`` would, with shared tuples;
* ``Mm`` is in ``ARRAYS_ONLY``: its forward calls no tensor op, so grad mode is not
  switched off and on around it.

``tensor_matmul`` replaces ``Tensor.__matmul__`` (``linalg.matmul``).  A product of two
float matrices that the tape does not record is, through ``matmul``, ``Mm.apply``, the fast
``apply`` and ``mm_forward``, ``np.matmul`` between numpy's float-error switches, wrapped in
a new tensor: done here in those steps when ``apply.shortcuts_allowed()`` (no profiler or
capture wraps ``Function.apply``, no autocast region) and the backend's matmul is numpy's
for these arrays.
Anything else goes to ``matmul``.
(Together, a 4x4 product's cost above numpy's fell from 6.1 to 2.4 us of CPU time.)
"""
import numpy as np

from .. import backends
from .._device import CPU
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops import linalg as reference
from .apply import ARRAYS_ONLY, FAST_FORWARD, engines_own, save_pair, shortcuts_allowed
from .float_errors import ignore_float_errors, restore_float_errors

# (``engines_own(backend, "matmul")``: the backend's matmul is ``np.matmul`` for numpy's own
# floats (kind "f") -- the numpy backend's, inside opmath's wrapper, which changes only
# bfloat16 arrays (kind "V"), and the Numba backend's, which adds a kernel for bfloat16
# matrices only and hands everything else to the numpy backend's)


def mm_forward(ctx, a, b):
    if ctx._edges:  # a recorded node (an _Unrecorded one has no edges): save as the reference
        needs_a, needs_b = ctx.needs_input_grad
        save_pair(ctx, a if needs_b else None, b if needs_a else None)
        ctx.a_vec = ctx.b_vec = False  # Mm's operands are matrices
    x, y = a._data, b._data
    if (x.__class__ is np.ndarray and x.dtype.kind == "f" and y.__class__ is np.ndarray
            and engines_own(backends.current.__class__, "matmul")):
        return Tensor._wrap(np.matmul(x, y))
    out = backends.current.matmul(x, y)
    return Tensor._wrap(out if out.__class__ is np.ndarray else reference.as_array(out))


FAST_FORWARD[reference.Mm] = mm_forward
ARRAYS_ONLY.add(reference.Mm)


_state = grad_mode._state


def tensor_matmul(a, b):
    """``a @ b``: ``reference.matmul``, with an unrecorded product of float matrices first."""
    if (b.__class__ is Tensor and a.__class__ is Tensor
            and not (_state.enabled and (a._requires_grad or b._requires_grad))):
        x, y = a._data, b._data
        if (x.__class__ is np.ndarray and y.__class__ is np.ndarray
                and x.ndim == 2 and y.ndim == 2 and x.shape[1] == y.shape[0]
                and a._dtype is b._dtype and x.dtype.kind == "f"
                and a._device is CPU and b._device is CPU  # (others: the device check)
                and shortcuts_allowed()
                and engines_own(backends.current.__class__, "matmul")):
            quiet = ignore_float_errors()
            try:
                return Tensor._wrap(np.matmul(x, y))
            finally:
                restore_float_errors(quiet)
    return reference.matmul(a, b)
