"""``x.to(dtype)`` between floating dtypes in one call: the cast autocast puts in front of
every 16-bit op.

Replaces: ``ops.shape.to_dtype`` (what ``Tensor.to(dtype)`` and autocast's
``_cached_cast`` call) when the input is a plain CPU tensor of a floating dtype and the
target is another floating dtype.  Along that path the reference runs ``to_dtype`` ->
``ToDtype.apply`` -> ``Function.apply`` (autocast's hook, which leaves a cast's own
arguments alone; ``BackwardNode.__init__``; ``ToDtype.forward``, which keeps the input's
dtype and calls the backend's ``cast``; ``_link_outputs``).  Here the same node -- a
``ToCopyBackward0`` with the input's edge and the dtype argument as a number position, no
saved tensors, ``input_dtype`` set -- the same output tensor and the same values are made by
hand, as ``apply._recorded_binary`` and ``apply._link_outputs`` make them; an op the tape
does not record (no_grad, or an input that needs no gradient) gets its plain output tensor
the same way.  Autocast casts some six tensors per step of a small MLP (each weight, the
input, the logits back to float32), each from inside the ``apply`` of the op it feeds:
this replaces the nested ``apply`` of each (on the MLP step of ``benchmarks/bench_training.py``
under autocast, about 372 -> 363 us; the step without autocast, 275 us).

Everything else -- integer or bool dtypes on either side, a tensor on another device, a
learner's backend, a profiler or ``fx`` capture wrapping ``Function.apply``, an autocast
hook that is not learntorch's or whose policy casts ``ToDtype`` -- goes to the reference.

Proven equal by ``tests/tiers/test_fast_cast_equals_reference.py``: same node name,
edges, metadata, values and dtypes, gradients, version-counter errors and hooks.
"""
from numpy import ndarray

from .. import _dtypes, backends
from .._device import CPU
from .._tensor import Tensor
from ..amp import autocast_mode
from ..autograd import function as _function, grad_mode
from ..autograd.function import BackwardNode, _sequence
from ..ops import shape as reference
from .apply import _NO_EDGE, shared_tuple, single_meta, tier_in_charge
from .float_errors import ignore_float_errors, restore_float_errors
from .leaf_edges import leaf_edge

_new = object.__new__
_state = grad_mode._state
_ToDtype = reference.ToDtype
_FLOATS = frozenset(d for d in _dtypes.ALL_DTYPES if d.is_floating_point)
_FIRST = (True, False)   # needs_input_grad: the tensor, not the dtype
_DTYPE_SECOND = (1,)     # _number_positions: the dtype argument is not a tensor
_NUMPY_TO_DTYPE = _dtypes._NUMPY_TO_DTYPE
_autocast_state = autocast_mode._State
_autocast_caster = autocast_mode._cast_for


def to_dtype(input, dtype):
    """``ops.shape.to_dtype(input, dtype)``, see the module docstring."""
    if dtype is input._dtype:
        return input
    x = input._data
    hook = _function._autocast_hook
    if not (dtype in _FLOATS and input._dtype in _FLOATS and x.__class__ is ndarray
            and input._device is CPU and isinstance(input, Tensor)
            # ``apply.shortcuts_allowed`` for a cast: no autocast hook -- or autocast's own,
            # while its policy leaves ``ToDtype``'s arguments alone (its tables never list
            # ``ToDtype``: a cast is how it casts), which is what ``apply`` would then hand
            # the forward -- and this tier in charge
            and (hook is None or (hook is _autocast_caster
                                  and _ToDtype not in _autocast_state.active))
            and tier_in_charge()):
        return reference_to_dtype(input, dtype)
    recorded = input._requires_grad and _state.enabled
    if recorded:  # the node first, as apply makes it before forward runs
        ctx = _new(BackwardNode)
        ctx._function = _ToDtype
        ctx._saved = ctx.constants = None
        fn = input._grad_fn
        ctx._edges = ((fn, input._output_nr) if fn is not None else leaf_edge(input), _NO_EDGE)
        ctx._number_positions = _DTYPE_SECOND
        ctx.needs_input_grad = _FIRST
        key = (x.shape, input._dtype)
        meta = _input_metas.get(key)  # ((shape, dtype), None), one object per key
        if meta is None:
            meta = _new_input_meta(key)
        ctx._input_meta = meta
        ctx._sequence_nr = next(_sequence)
        ctx.input_dtype = input._dtype  # ToDtype.forward's one saved fact
    quiet = ignore_float_errors()  # (float32 -> float16 overflows to inf, as in torch)
    try:
        out = backends.current.cast(x, dtype.np)
    finally:
        restore_float_errors(quiet)
    t = _new(Tensor)  # Tensor._wrap(out)
    t._data = out
    t._dtype = _NUMPY_TO_DTYPE.get(out.dtype) or _dtypes.from_numpy_dtype(out.dtype)
    t._device = CPU
    t._version_counter = _state.new_counter()
    if recorded:  # _link_outputs: one new floating output
        ctx._output_meta = single_meta(out.shape, t._dtype)
        t._grad_fn = ctx
        t._requires_grad = True
    else:
        t._grad_fn = None
        t._requires_grad = False
    return t


_input_metas = {}


def _new_input_meta(key):
    """``_input_meta`` of a cast of a ``key = (shape, dtype)`` input: what ``apply`` records
    (``shared_tuple((meta, None))``), kept per key."""
    if len(_input_metas) > 1024:
        _input_metas.clear()
    found = _input_metas[key] = shared_tuple((single_meta(*key)[0], None))
    return found


reference_to_dtype = reference.to_dtype  # what this replaces
