"""Tensor's ``*`` and ``+`` in one call, for the commonest operands of a training loop.

Replaces: ``Tensor.__mul__``/``__rmul__`` and ``Tensor.__add__``/``__radd__``, which are
``ops.arithmetic.mul`` and ``ops.arithmetic.add``, when both operands are plain: a
float32/float64 tensor on the CPU times (plus) a tensor of the same dtype and shape, or a
Python float.  Along that path the reference runs ``mul`` -> ``Mul.apply`` ->
``Function.apply`` (``BackwardNode.__init__``, ``Mul.forward``, ``_link_outputs``); here the
same node, the same output tensor and the same values are made by hand, in one Python
call instead of about twenty (a one-element op is nothing but that bookkeeping:
``benchmarks/bench_autograd.py``'s chains).  An op the tape does not record (no_grad, or
no operand requires grad) gets its plain output tensor the same way.  Everything else --
other dtypes or shapes (broadcasting), alpha, a learner's backend, an autocast region, and
``Function.apply`` wrapped by the profiler or ``fx`` capture -- goes to the reference
function (``apply.shortcuts_allowed``).

Proven equal by ``tests/tiers/test_fast_operators_equal_reference.py`` and the
differential tests of ``tests/tiers/test_fast_apply_equals_reference.py``: same node name,
edges, metadata, saved tensors and their versions, constants, same values bit for bit.
"""
from numpy import ndarray

from .. import _dtypes, backends
from .._device import CPU
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import BackwardNode, _sequence
from ..ops import arithmetic as reference
from .apply import _NO_EDGE, shared_tuple, shortcuts_allowed, single_meta
from .arithmetic import NOTHING_SAVED, _NO_VERSIONS, float_constant
from .float_errors import ignore_float_errors, restore_float_errors
from .leaf_edges import leaf_edge

_new = object.__new__
_state = grad_mode._state
_BOTH, _FIRST, _SECOND = (True, True), (True, False), (False, True)
_NUMBER_SECOND = (1,)
_ONE = 1  # Add's constants: its alpha
_WIDE_FLOATS = frozenset({_dtypes.float32, _dtypes.float64})



def _plain(a, b):
    """For ``a op b`` on operands this file handles: the node's metadata (see ``_metadata``)
    when the op is recorded, ``UNRECORDED`` when it is not; else None (the reference runs)."""
    if not shortcuts_allowed():  # (a profiler, a capture, autocast, a learner's backend)
        return None
    dtype = a._dtype
    x = a._data
    if dtype not in _WIDE_FLOATS or x.__class__ is not ndarray or a._device is not CPU:
        return None  # (float16 and bfloat16: torch's opmath rules; other devices: their
        # backend and the device check, in the reference)
    shape = x.shape
    if b.__class__ is float:
        recorded = a._requires_grad
    elif isinstance(b, Tensor) and b._dtype is dtype and b._data.__class__ is ndarray \
            and b._data.shape == shape and b._device is CPU:
        recorded = a._requires_grad or b._requires_grad
    else:
        return None
    if not (recorded and _state.enabled):
        return UNRECORDED
    found = _metadata.get((shape, dtype))
    return found if found is not None else _new_metadata(shape, dtype)


UNRECORDED = "unrecorded"  # what _plain says of plain operands under no_grad, or needing none


def _output_tensor(array, a):
    """``Tensor._wrap(array)`` (no history yet), with what ``_init_from_array`` would find."""
    t = _new(Tensor)
    t._data = array if array.__class__ is ndarray else reference.as_array(array)
    t._dtype = a._dtype
    t._device = a._device
    t._version_counter = _state.new_counter()
    t._grad_fn = None
    t._requires_grad = False
    return t


#: (shape, dtype) -> (output meta, input meta of (both, first, second) needing a gradient):
#: one lookup gives every shared metadata tuple of the node (``apply.single_meta``'s objects)
_metadata = {}


def _new_metadata(shape, dtype):
    if len(_metadata) > 1024:
        _metadata.clear()
    single = single_meta(shape, dtype)
    meta = single[0]
    found = _metadata[(shape, dtype)] = (single, shared_tuple((meta, meta)),
                                         shared_tuple((meta, None)), shared_tuple((None, meta)))
    return found


def _recorded(function, a, b, metadata, array):
    """The output tensor around ``array`` and its node: ``BackwardNode(function, (a, b),
    recorded=True)`` as ``apply._recorded_binary`` makes it, linked as ``_link_outputs``
    links output 0 (``a`` a tensor; ``b`` a tensor or a float; at least one requires grad)."""
    ctx = _new(BackwardNode)
    ctx._function = function
    ctx._saved = None
    if a._requires_grad:  # (a._edge(), without the call for a non-leaf)
        fn = a._grad_fn
        edge_a = (fn, a._output_nr) if fn is not None else leaf_edge(a)
    else:
        edge_a = _NO_EDGE
    if b.__class__ is float:
        ctx._number_positions = _NUMBER_SECOND
        ctx.needs_input_grad = _FIRST
        ctx._edges = (edge_a, _NO_EDGE)
        ctx._input_meta = metadata[2]
    else:
        ctx._number_positions = ()
        if b._requires_grad:
            fn = b._grad_fn
            ctx._edges = (edge_a, (fn, b._output_nr) if fn is not None else leaf_edge(b))
            if edge_a is _NO_EDGE:
                ctx.needs_input_grad, ctx._input_meta = _SECOND, metadata[3]
            else:
                ctx.needs_input_grad, ctx._input_meta = _BOTH, metadata[1]
        else:
            ctx._edges = (edge_a, _NO_EDGE)
            ctx.needs_input_grad, ctx._input_meta = _FIRST, metadata[2]
    ctx._output_meta = metadata[0]
    ctx._sequence_nr = next(_sequence)
    t = _output_tensor(array, a)
    t._grad_fn = ctx
    t._requires_grad = True
    return t


def mul(self, other):
    """``self * other`` (``ops.arithmetic.mul``), see the module docstring."""
    metadata = _plain(self, other)
    if metadata is None:
        return reference_mul(self, other)
    number = other.__class__ is float
    quiet = ignore_float_errors()
    try:
        out = backends.current.mul(self._data, float_constant(other, self._data) if number
                                   else other._data)
    finally:
        restore_float_errors(quiet)
    if metadata is UNRECORDED:
        return _output_tensor(out, self)
    t = _recorded(reference.Mul, self, other, metadata, out)
    ctx = t._grad_fn
    # Mul.forward's _save: d(ab)/da = b, d(ab)/db = a; numbers are constants
    if number:
        ctx._saved, ctx._saved_versions = NOTHING_SAVED, _NO_VERSIONS
        ctx.constants = shared_tuple((None, other))
    else:
        needs = ctx.needs_input_grad
        ta = self if needs[1] else None
        tb = other if needs[0] else None
        ctx._saved = (ta, tb)
        va = 0 if ta is None else ta._version_counter[0]
        vb = 0 if tb is None else tb._version_counter[0]
        ctx._saved_versions = shared_tuple((va, vb)) if va or vb else _NO_VERSIONS
        ctx.constants = NOTHING_SAVED
    return t


def add(self, other, *, alpha=1):
    """``self + other`` (``ops.arithmetic.add``), see the module docstring."""
    metadata = _plain(self, other) if alpha.__class__ is int and alpha == 1 else None
    if metadata is None:
        return reference_add(self, other, alpha=alpha)
    quiet = ignore_float_errors()
    try:
        out = backends.current.add(self._data, float_constant(other, self._data)
                                   if other.__class__ is float else other._data)
    finally:
        restore_float_errors(quiet)
    if metadata is UNRECORDED:
        return _output_tensor(out, self)
    t = _recorded(reference.Add, self, other, metadata, out)
    t._grad_fn.constants = _ONE  # Add.forward keeps alpha
    return t


reference_mul, reference_add = reference.mul, reference.add  # what these replace
