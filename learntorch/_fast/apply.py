"""The fast ``Function.apply``: what ``autograd/function.py``'s ``Function.apply`` does, with
the bookkeeping of a recorded op made as cheap as Python allows.

Replaces: ``learntorch.autograd.function.Function.apply`` (and, inside it, the node
construction ``BackwardNode.__init__``, ``_link_outputs`` and the ``np.errstate`` switch).
Proven equal by ``tests/tiers/`` (same outputs, same graph: edges, names, metadata,
saved tensors) on every op the oracle suite runs.

What makes it fast, each piece a measured win on the per-op benchmarks
(``benchmarks/bench_autograd.py``):

* nodes are created without an ``__init__`` call (``object.__new__`` and slot writes),
  unary and binary ops without lists or generator expressions;
* few objects per recorded op for Python's cycle collector: equal small tuples (which
  inputs need a gradient, saved versions, ``(shape, dtype)`` metadata) are shared, one
  object each.  With the collector on, a chain of one-element ops went 9.4 -> 4.9 us/op;
* an op that is not recorded gets a ``_Unrecorded`` ctx whose ``save_for_backward``
  keeps nothing and whose ``needs_input_grad`` is computed only if forward asks;
* numpy's float-error state is switched with its private context variable (two C
  calls) instead of ``np.errstate`` (about 1 us per op, as much as a small op);
* ops whose forward works on arrays alone leave grad mode as it is; a few hot forwards
  (``arithmetic.FAST_FORWARD``) skip the reference forward's general checks.

When the active backend is not one this tier knows (a learner's backend), the
reference forward runs: every array operation then reaches the learner's code.
"""
import weakref

from .. import backends
from .._tensor import Tensor
from ..autograd import function as _function, grad_mode
from ..autograd.function import BackwardNode, _bind_arguments, _returned_input, _sequence
from ..backends.numba_cpu import NumbaBackend
from ..backends.reference import NumpyBackend
from .float_errors import ignore_float_errors, restore_float_errors
from .leaf_edges import leaf_edge

KNOWN_BACKENDS = (NumpyBackend, NumbaBackend)
#: a live view of Function's attributes, made once (``Function.__dict__`` builds a new one
#: at each read, and ``shortcuts_allowed`` runs on every ``*`` and ``+``)
_FUNCTION_ATTRIBUTES = _function.Function.__dict__


def tier_in_charge():
    """True when this tier's ``apply`` is in place (no profiler or capture wraps it) and the
    backend is one this tier knows (a learner's own backend must see every array operation):
    the half of ``shortcuts_allowed`` that every shortcut needs (``cast.py`` adds its own
    autocast rule)."""
    return (_FUNCTION_ATTRIBUTES["apply"] is FAST_APPLY
            and backends.current.__class__ in KNOWN_BACKENDS)


#: method name -> the functions the numpy and the Numba backend define for it, as learntorch
#: made them (taken at import: a method replaced later, on a learner's subclass or on the
#: engine's classes themselves, is not among them)
_ENGINES_OWN = {}
for _name in dir(NumbaBackend):
    if not _name.startswith("__") and callable(getattr(NumbaBackend, _name)):
        _ENGINES_OWN[_name] = tuple({getattr(NumpyBackend, _name, None),
                                     getattr(NumbaBackend, _name)} - {None})


def engines_own(backend_class, name):
    """True when ``backend_class``'s method ``name`` is the numpy or the Numba backend's own:
    what a fast forward that makes that method's numpy calls itself may replace (a
    learner's backend that overrides the method must have it called).  Both engine
    backends' ``matmul`` and ``linear``, for instance, are numpy's for numpy's own floats;
    the Numba backend's add kernels for bfloat16 only (``bfloat16_backend.py``)."""
    return getattr(backend_class, name) in _ENGINES_OWN.get(name, ())


def shortcuts_allowed():
    """True when a shortcut that makes an op without ``Function.apply`` (``operators.py``,
    ``matmul.py``) may run: ``tier_in_charge()``, and no autocast region would cast the
    op's inputs."""
    return _function._autocast_hook is None and tier_in_charge()

#: Function class -> a forward that computes exactly what the class's forward computes,
#: faster (filled by ``arithmetic.py`` of this tier)
FAST_FORWARD = {}

#: Function classes whose forward computes on arrays alone (no tensor op inside), so
#: grad mode need not be switched off around it
ARRAYS_ONLY = set()

_NO_EDGE = (None, 0)
_new_node = object.__new__
_state = grad_mode._state


class _Unrecorded(BackwardNode):
    """The ctx of an op the tape does not record (no_grad, or no input requires grad, as
    every op inside a backward pass): nothing will read what it saves."""

    __slots__ = ("_args",)
    _saved = None
    constants = None
    _edges = _number_positions = _input_meta = _output_meta = ()

    def save_for_backward(self, *tensors):
        pass

    @property
    def needs_input_grad(self):  # torch's value (requires_grad per input), made if asked
        return tuple(isinstance(a, Tensor) and a._requires_grad for a in self._args)


def apply(cls, *args, **kwargs):
    """``Function.apply`` (see the module docstring for what differs, and why)."""
    if kwargs:
        args = _bind_arguments(cls, args, kwargs)
    if _function._autocast_hook is not None:
        args = _function._autocast_hook(cls, args)
    enabled = _state.enabled
    ctx = _recorded_node(cls, args) if enabled else None
    if ctx is None:
        ctx = _new_node(_Unrecorded)
        ctx._function = cls
        ctx._args = args
    forward = FAST_FORWARD.get(cls) if backends.current.__class__ in KNOWN_BACKENDS else None
    if forward is None:
        forward = cls.forward
    quiet = ignore_float_errors()
    if enabled and cls not in ARRAYS_ONLY:
        _state.enabled = False  # ops that forward itself calls are not recorded
        try:
            outputs = forward(ctx, *args)
        finally:
            _state.enabled = True
            restore_float_errors(quiet)
    else:
        try:
            outputs = forward(ctx, *args)
        finally:
            restore_float_errors(quiet)
    if ctx.__class__ is BackwardNode:
        outputs = _link_outputs(ctx, outputs, args)
    return outputs


FAST_APPLY = classmethod(apply)  # what ``install`` puts in place of ``Function.apply``


# ---- few objects per recorded op ----------------------------------------------------------
_SHARED_LIMIT = 4096  # a cache, not a leak: emptied when it grows past this
_shared = {}


def shared_tuple(t):
    """One shared object for every equal small tuple (of bools, numbers, None, metadata)."""
    found = _shared.get(t)
    if found is None:
        if len(_shared) > _SHARED_LIMIT:
            _shared.clear()
        found = _shared[t] = t
    return found


def save_pair(ctx, first, second):
    """``ctx.save_for_backward(first, second)`` written into the node's slots, with a shared
    tuple of versions (either may be None: an operand no asked-for gradient reads)."""
    ctx._saved = (first, second)
    ctx._saved_versions = shared_tuple((0 if first is None else first._version_counter[0],
                                        0 if second is None else second._version_counter[0]))


_metas = {}  # (shape, dtype) -> ((shape, dtype),): the meta and the 1-tuple holding it


def single_meta(shape, dtype):
    """The shared ``((shape, dtype),)``: what ``_output_meta`` of a one-output node holds."""
    key = (shape, dtype)
    single = _metas.get(key)
    if single is None:
        if len(_metas) > _SHARED_LIMIT:
            _metas.clear()
        single = _metas[key] = (key,)
    return single


def _input_meta(a, fn):
    """(shape, dtype) of input ``a``: the very tuple its node recorded for it, when it matches."""
    if fn is not None:
        meta = fn._output_meta[a._output_nr]
        if meta is not None and meta[0] == a._data.shape and meta[1] is a._dtype:
            return meta
    return single_meta(a._data.shape, a._dtype)[0]


def _recorded_node(cls, args):
    """``BackwardNode(cls, args, recorded=True)`` made by hand; None when no argument is a
    tensor that requires grad (nothing to record)."""
    if len(args) == 1:  # unary ops, the commonest case: no lists
        a = args[0]
        if not (isinstance(a, Tensor) and a._requires_grad):
            return None
        fn = a._grad_fn
        ctx = _new_node(BackwardNode)
        ctx._function = cls
        ctx._saved = ctx.constants = None
        ctx._edges = ((fn, a._output_nr) if fn is not None else leaf_edge(a),)
        ctx._number_positions = ()
        ctx.needs_input_grad = (True,)
        if fn is not None and len(fn._output_meta) == 1:
            single = fn._output_meta  # the producer's own ((shape, dtype),), if it matches
            meta = single[0]
            if meta is None or meta[0] != a._data.shape or meta[1] is not a._dtype:
                single = single_meta(a._data.shape, a._dtype)
        else:
            single = single_meta(a._data.shape, a._dtype)
        ctx._input_meta = single
        ctx._sequence_nr = next(_sequence)
        return ctx
    if len(args) == 2:
        return _recorded_binary(cls, *args)
    edges, needs, meta = [], [], []
    numbers = None
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                fn = a._grad_fn
                edges.append((fn, a._output_nr) if fn is not None else leaf_edge(a))
                needs.append(True)
                meta.append(_input_meta(a, fn))
                continue
        elif numbers is None:
            numbers = (len(edges),)
        else:
            numbers += (len(edges),)
        edges.append(_NO_EDGE)
        needs.append(False)
        meta.append(None)
    if True not in needs:
        return None
    ctx = _new_node(BackwardNode)
    ctx._function = cls
    ctx._saved = ctx.constants = None
    ctx._edges = tuple(edges)
    ctx._number_positions = () if numbers is None else shared_tuple(numbers)
    ctx.needs_input_grad = shared_tuple(tuple(needs))
    ctx._input_meta = shared_tuple(tuple(meta))
    ctx._sequence_nr = next(_sequence)
    return ctx


_BOTH, _FIRST, _SECOND = (True, True), (True, False), (False, True)


def _recorded_binary(cls, a, b):
    """``_recorded_node`` for two arguments (a binary op, the other common case), unrolled."""
    a_grad = isinstance(a, Tensor) and a._requires_grad
    b_grad = isinstance(b, Tensor) and b._requires_grad
    if not (a_grad or b_grad):
        return None
    ctx = _new_node(BackwardNode)
    ctx._function = cls
    ctx._saved = ctx.constants = None
    if a_grad:
        fn = a._grad_fn
        edge_a = (fn, a._output_nr) if fn is not None else leaf_edge(a)
        meta_a = _input_meta(a, fn)
    else:
        edge_a, meta_a = _NO_EDGE, None
    if b_grad:
        fn = b._grad_fn
        edge_b = (fn, b._output_nr) if fn is not None else leaf_edge(b)
        meta_b = _input_meta(b, fn)
    else:
        edge_b, meta_b = _NO_EDGE, None
    ctx._edges = (edge_a, edge_b)
    if b.__class__ is float or not isinstance(b, Tensor):
        ctx._number_positions = (1,) if isinstance(a, Tensor) else (0, 1)
    else:
        ctx._number_positions = () if isinstance(a, Tensor) else (0,)
    ctx.needs_input_grad = _BOTH if a_grad and b_grad else (_FIRST if a_grad else _SECOND)
    ctx._input_meta = shared_tuple((meta_a, meta_b))
    ctx._sequence_nr = next(_sequence)
    return ctx


def _link_outputs(ctx, outputs, args):
    """``function._link_outputs``, with the one-new-tensor case first and without lists."""
    if outputs.__class__ is Tensor and ctx._non_differentiable is None:
        for a in args:
            if a is outputs:
                break
        else:
            ctx._output_meta = single_meta(outputs._data.shape, outputs._dtype)
            if outputs._dtype.is_floating_point:
                outputs._grad_fn = ctx  # output 0: _output_nr keeps its default, 0
                outputs._requires_grad = True
                saved = ctx._saved
                if saved is not None:
                    for t in saved:
                        if t is outputs:
                            _detach_saved_outputs(ctx, (outputs,))
                            break
            return outputs
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    non_diff = ctx._non_differentiable
    out_meta = []
    replaced = None
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            out_meta.append(None)
            continue
        differentiable = o._dtype.is_floating_point and (non_diff is None or id(o) not in non_diff)
        for a in args:
            if a is o:
                o = _returned_input(ctx, o)
                if replaced is None:
                    replaced = list(outs)
                replaced[i] = o
                break
        out_meta.append((o._data.shape, o._dtype))
        if differentiable:
            o._grad_fn = ctx
            if i or o._output_nr:
                o._output_nr = i
            o._requires_grad = True
    ctx._output_meta = tuple(out_meta)
    if replaced is not None:
        outs = replaced
    if ctx._saved is not None:
        _detach_saved_outputs(ctx, outs)
    if replaced is not None:
        return replaced[0] if single else tuple(replaced)
    return outputs


def _detach_saved_outputs(ctx, outputs):
    """``function._detach_saved_outputs``, without loops for one saved output."""
    saved = ctx._saved
    if len(saved) == 1:  # the output alone (exp, tanh, sigmoid, relu, softmax): no loops
        o = saved[0]
        # (only a differentiable output of this node: an input, or the indices of max(dim)
        # marked non-differentiable, are saved as they are, as the reference does)
        if o is not None and o._grad_fn is ctx and any(o is out for out in outputs):
            ctx._saved = (detached_alias(o),)
            ctx._saved_outputs = ((0, o._output_nr, weakref.ref(o)),)
        return
    saved = list(saved)
    positions = []
    for i, t in enumerate(saved):
        for o in outputs:
            if t is o and o._grad_fn is ctx:
                saved[i] = detached_alias(o)
                positions.append((i, o._output_nr, weakref.ref(o)))
                break
    if positions:
        ctx._saved = tuple(saved)
        ctx._saved_outputs = tuple(positions)


def detached_alias(t):
    """``function._detached_alias``: a tensor over ``t``'s memory and version counter."""
    alias = _new_node(Tensor)
    alias._data, alias._dtype, alias._device = t._data, t._dtype, t._device
    alias._requires_grad, alias._grad_fn = False, None
    alias._version_counter = t._version_counter
    return alias

