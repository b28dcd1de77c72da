"""``Function``: one differentiable operation, the unit the tape records.

Every operation in learntorch, built-in or written by a learner, is a
``Function`` subclass with two static methods::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):              # runs with autograd off
            y = ...                       # compute the result
            ctx.save_for_backward(y)      # keep what the derivative needs
            return y

        @staticmethod
        def backward(ctx, grad):          # grad = dLoss/dy
            y, = ctx.saved_tensors
            return grad * y               # dLoss/dx, one entry per forward input

``Exp.apply(x)`` runs ``forward`` and, when ``x`` requires grad, records a
``BackwardNode``: the object you see as ``y.grad_fn``.  That node *is* the
``ctx`` forward received (as in torch), so what forward saved is what
backward reads.  ``next_functions`` links it to the nodes that produced its
inputs; ``learntorch.autograd.engine`` walks those links backwards.
"""
import itertools
import weakref

from . import grad_mode
from .._float_errors import ignore_float_errors, restore_float_errors

_sequence = itertools.count()  # creation order; the engine runs later nodes first


class _Freed(tuple):
    """The type of ``_FREED``: an empty tuple that is not *the* empty tuple (``()`` is one
    shared object in CPython, and a Function may well save nothing)."""


_FREED = _Freed()  # a node's saved tensors once backward freed them (retain_graph=False)
_LEAF_SEQUENCE_BASE = 1 << 62


class BackwardNode:
    """A recorded operation: the ``ctx`` of forward and the ``grad_fn`` of its outputs."""

    # What every recorded node sets lives in slots (a node is created per op, and an
    # instance __dict__ would be allocated and filled for each); rarer attributes are
    # class-level defaults that an instance overrides only when needed.
    __slots__ = (
        "_function",
        "_saved", "_saved_versions",   # save_for_backward: the tensors and their versions
        "constants",                   # the numbers (not tensors) a built-in binary op keeps
        "_edges",                      # one per forward argument ((None, 0) for numbers)
        "_number_positions",           # arguments that were not tensors (next_functions skips)
        "needs_input_grad",
        "_input_meta",                 # (shape, dtype) of each input that requires grad
        "_output_meta",                # (shape, dtype) of each output
        "_sequence_nr",
        "__dict__", "__weakref__")

    recording = True        # False for the ctx of an op autograd is not recording
    _saved_outputs = None   # ((position in _saved, output_nr, weakref), ...) of saved outputs
    _tensor_pre_hooks = None
    _non_differentiable = None
    _dirty = None
    materialize_grads = True

    def __init__(self, function):
        self._function = function
        self._saved = None
        self._edges = self._number_positions = self.needs_input_grad = ()
        self._input_meta = self._output_meta = ()

    # ---- what forward uses ----
    def save_for_backward(self, *tensors):
        """Keep tensors for backward; an in-place change to one of them is caught later."""
        self._saved = tensors
        if len(tensors) == 1 and tensors[0] is not None and tensors[0]._version_counter[0] == 0:
            self._saved_versions = (0,)  # one fresh tensor, the commonest case (a constant)
            return
        self._saved_versions = _shared_tuple(tuple([t._version_counter[0] if t is not None else 0
                                                    for t in tensors]))

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place (and returns): they take this node."""
        self._dirty = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    # ---- what backward uses ----
    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        if saved is None:
            return ()
        for t, v in zip(saved, self._saved_versions):
            if t is not None and t._version_counter[0] != v:
                self._raise_modified()
        if self._saved_outputs is not None and grad_mode._state.enabled:
            return self._with_history(saved)
        return saved

    def _with_history(self, saved):
        """The saved tensors with each saved *output* given back its history (this node).

        An output saved as it is would make a reference cycle (output -> grad_fn ->
        saved output), which only Python's cycle collector frees: every training step
        would leave its whole graph, activations included, waiting for it.  So
        ``_link_outputs`` keeps a detached alias of a saved output (same memory and
        version counter), and here, when gradients are being recorded (a backward with
        ``create_graph=True``, or looking at the node in grad mode), the output comes
        back: the tensor itself while the program still holds it, else a new tensor with
        this node as its grad_fn -- what torch's SavedVariable does.
        """
        saved = list(saved)
        for position, output_nr, output in self._saved_outputs:
            alias = saved[position]
            t = output()  # the output itself while the program still holds it (weakly kept)
            if t is not None and t._grad_fn is self and t._version_counter is alias._version_counter:
                saved[position] = t
                continue
            t = _detached_alias(alias)
            t._grad_fn, t._requires_grad = self, True
            if output_nr:
                t._output_nr = output_nr
            saved[position] = t
        return tuple(saved)

    def _raise_modified(self):
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._version_counter[0] != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t._type_name()} {list(t.shape)}], which is saved "
                    f"tensor {i} of {self.name()}, is at version {t._version_counter[0]}; "
                    f"expected version {v} instead. Hint: do the in-place operation on a copy "
                    "(x = x.clone()) or use its out-of-place form (x = x + 1 instead of x += 1).")
        return self._saved

    # ---- introspection (torch's names) ----
    @property
    def next_functions(self):
        """One ``(node, output_nr)`` per tensor argument, as torch; built when asked for."""
        numbers = self._number_positions
        if not numbers:
            return self._edges
        return tuple(e for i, e in enumerate(self._edges) if i not in numbers)

    def name(self):
        fn = self._function
        return fn.node_name if fn.node_name else fn.__name__ + "Backward"

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensor_count(self):
        return 0 if self._saved is None else len(self._saved)

    @property
    def function(self):
        """The Function class whose backward this node runs."""
        return self._function

    def register_prehook(self, hook):
        return _add_prehook(self, None, hook)

    # ---- used by the engine ----
    def apply(self, grad_outputs):
        """Run the Function's backward on the gradients of this node's outputs."""
        grads = self._function.backward(self, *grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return grads

    def release(self):
        """Free saved tensors once backward has used them (unless retain_graph)."""
        if self._saved is not None:
            self._saved = _FREED


class _Unrecorded(BackwardNode):
    """The ctx of a built-in op that autograd is not recording (no_grad, or no input
    requires grad, as inside a backward pass): nothing will read what it saves."""

    __slots__ = ()
    recording = False
    # class-level answers instead of the slots BackwardNode.__init__ fills: one of these
    # is made for every op run without recording (inference, every op inside a backward)
    _saved = None
    _edges = _number_positions = needs_input_grad = _input_meta = _output_meta = ()

    def __init__(self, function):
        self._function = function

    def save_for_backward(self, *tensors):
        pass


class AccumulateGrad:
    """The node at a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable", "next_functions", "_edges", "_sequence_nr", "_tensor_pre_hooks",
                 "__weakref__")
    _output_meta = (None,)  # one output, like every node (the engine counts its slots)

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = self._edges = ()
        # above every BackwardNode's number, so it runs as soon as it is ready (as torch);
        # among leaves the first one used runs first, so the order is the same run after run
        self._sequence_nr = _LEAF_SEQUENCE_BASE - next(_sequence)
        self._tensor_pre_hooks = None

    def name(self):
        return "torch::autograd::AccumulateGrad"  # torch's C++ name (its type is AccumulateGrad)

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"

    @property
    def saved_tensor_count(self):
        return 0


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _add_prehook(node, output_nr, hook):
    """Run ``hook(grad)`` on gradient ``output_nr`` of ``node`` before its backward runs.

    Hooks run in registration order, except that the hook ``retain_grad()`` installs
    (marked ``retains_grad``) always stays last, so ``.grad`` of a non-leaf shows
    the gradient after every user hook changed it -- as in torch.
    """
    if node._tensor_pre_hooks is None:
        node._tensor_pre_hooks = {}
    hooks = node._tensor_pre_hooks.setdefault(output_nr, [])
    if hooks and getattr(hooks[-1], "retains_grad", False):
        hooks.insert(len(hooks) - 1, hook)
    else:
        hooks.append(hook)
    return RemovableHandle(hooks, hook)


class Function:
    """Base class of differentiable operations; subclass it and call ``.apply``."""

    # torch names built-in nodes "MulBackward0"; subclasses may set this
    node_name = None

    # True for a built-in op whose forward computes on arrays alone (no tensor op inside):
    # apply then leaves grad mode as it is during forward instead of switching recording
    # off and on again (two thread-local writes, on every small op)
    forward_uses_arrays_only = False

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "Function subclasses must define a static forward(ctx, *inputs) that returns the output")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "Function subclasses must define a static backward(ctx, *grad_outputs) that returns "
            "one gradient (or None) per forward input")

    # Optional fast path of a built-in op: ``backward_arrays(ctx, *grad_arrays)`` is
    # ``backward`` on raw arrays, returning arrays (or None).  The engine uses it when no
    # graph of the gradient is recorded, so on small tensors backward builds no Tensor
    # and runs no Function per gradient.  It must compute exactly what ``backward``
    # does, so a subclass that overrides ``backward`` alone loses the inherited one.
    backward_arrays = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "backward" in cls.__dict__ and "backward_arrays" not in cls.__dict__:
            cls.backward_arrays = None  # the inherited array formula is not this backward
        if "forward" in cls.__dict__ and "forward_uses_arrays_only" not in cls.__dict__:
            cls.forward_uses_arrays_only = False  # a new forward may well call tensor ops

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{type(self).__name__}() instances are not callable: autograd Functions have static "
            f"methods only. Call {type(self).__name__}.apply(...) on the class instead.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:  # torch binds keyword arguments to forward's parameters: they become inputs
            args = _bind_arguments(cls, args, kwargs)
        state = grad_mode._state
        enabled = state.enabled
        ctx = _recorded_node(cls, args) if enabled else None
        record = ctx is not None
        if not record:
            if cls.node_name is None:  # a learner's Function may read this in forward, as torch
                ctx = BackwardNode(cls)
                ctx.needs_input_grad = tuple(isinstance(a, _Tensor) and a._requires_grad
                                             for a in args)
            else:
                ctx = _Unrecorded(cls)
        quiet = ignore_float_errors()
        if enabled and not cls.forward_uses_arrays_only:
            state.enabled = False  # ops that forward itself calls are not recorded
            try:
                outputs = cls.forward(ctx, *args)
            finally:
                state.enabled = True
                restore_float_errors(quiet)
        else:
            try:
                outputs = cls.forward(ctx, *args)
            finally:
                restore_float_errors(quiet)
        if record:
            outputs = _link_outputs(ctx, outputs, args)
        return outputs


def _bind_arguments(cls, args, kwargs):
    import inspect
    bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return bound.args[1:]


_NO_EDGE = (None, 0)  # the edge of an argument that needs no gradient
_new_node = object.__new__
_Tensor = None  # set by learntorch._tensor once the class exists (avoids a circular import)

# ---- few objects per recorded op ----------------------------------------------------------
# Python's cycle collector walks every container object that is alive, again and again
# while a graph grows: on a chain of one-element ops it cost more than the ops themselves
# (1,000-op chain: 4.4 us/op with the collector off, 9.4 us/op on, in a process that had
# imported torch).  torch's graph lives in C++; ours is Python objects, so a node keeps as
# few new ones as it can: tuples that many nodes would hold equal copies of (which inputs
# need a gradient, saved versions, (shape, dtype) metadata) are shared, one object each.
_SHARED_LIMIT = 4096  # a cache, not a leak: emptied when it grows past this
_shared = {}


def _shared_tuple(t):
    """One shared object for every equal small tuple (of bools, numbers, None, metadata)."""
    found = _shared.get(t)
    if found is None:
        if len(_shared) > _SHARED_LIMIT:
            _shared.clear()
        found = _shared[t] = t
    return found


_metas = {}  # (shape, dtype) -> ((shape, dtype),): the meta and the 1-tuple holding it


def _single_meta(shape, dtype):
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
    return _single_meta(a._data.shape, a._dtype)[0]


def _recorded_node(cls, args):
    """A node for ``cls`` linked to the nodes that produced its inputs (before forward, like
    torch); None when no argument is a tensor that requires grad (nothing to record)."""
    if len(args) == 1:  # unary ops, the commonest case: the loop below without the lists
        a = args[0]
        if not (isinstance(a, _Tensor) and a._requires_grad):
            return None
        fn = a._grad_fn
        ctx = _new_node(BackwardNode)
        ctx._function = cls
        ctx._saved = None
        ctx._edges = ((fn, a._output_nr) if fn is not None else a._edge(),)
        ctx._number_positions = ()
        ctx.needs_input_grad = (True,)
        if fn is not None and len(fn._output_meta) == 1:
            single = fn._output_meta  # the producer's own ((shape, dtype),), if it matches
            meta = single[0]
            if meta is None or meta[0] != a._data.shape or meta[1] is not a._dtype:
                single = _single_meta(a._data.shape, a._dtype)
        else:
            single = _single_meta(a._data.shape, a._dtype)
        ctx._input_meta = single
        ctx._sequence_nr = next(_sequence)
        return ctx
    if len(args) == 2:
        return _recorded_binary(cls, *args)
    edges, needs, meta = [], [], []
    numbers = None
    for a in args:
        if isinstance(a, _Tensor):
            if a._requires_grad:
                fn = a._grad_fn
                edges.append((fn, a._output_nr) if fn is not None else a._edge())
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
    ctx = _new_node(BackwardNode)  # BackwardNode(cls) without the __init__ call
    ctx._function = cls
    ctx._saved = None
    ctx._edges = tuple(edges)
    ctx._number_positions = () if numbers is None else _shared_tuple(numbers)
    ctx.needs_input_grad = _shared_tuple(tuple(needs))
    ctx._input_meta = _shared_tuple(tuple(meta))
    ctx._sequence_nr = next(_sequence)
    return ctx


def _recorded_binary(cls, a, b):
    """``_recorded_node`` for two arguments (a binary op, the other common case), unrolled."""
    a_grad = isinstance(a, _Tensor) and a._requires_grad
    b_grad = isinstance(b, _Tensor) and b._requires_grad
    if not (a_grad or b_grad):
        return None
    ctx = _new_node(BackwardNode)
    ctx._function = cls
    ctx._saved = None
    if a_grad:
        fn = a._grad_fn
        edge_a = (fn, a._output_nr) if fn is not None else a._edge()
        meta_a = _input_meta(a, fn)
    else:
        edge_a, meta_a = _NO_EDGE, None
    if b_grad:
        fn = b._grad_fn
        edge_b = (fn, b._output_nr) if fn is not None else b._edge()
        meta_b = _input_meta(b, fn)
    else:
        edge_b, meta_b = _NO_EDGE, None
    ctx._edges = (edge_a, edge_b)
    if b.__class__ is float or not isinstance(b, _Tensor):
        ctx._number_positions = (1,) if isinstance(a, _Tensor) else (0, 1)
    else:
        ctx._number_positions = () if isinstance(a, _Tensor) else (0,)
    ctx.needs_input_grad = _BOTH if a_grad and b_grad else (_FIRST if a_grad else _SECOND)
    ctx._input_meta = _shared_tuple((meta_a, meta_b))
    ctx._sequence_nr = next(_sequence)
    return ctx


_BOTH, _FIRST, _SECOND = (True, True), (True, False), (False, True)


def _link_outputs(ctx, outputs, args):
    """Make ``ctx`` the grad_fn of each floating output (not those marked non-differentiable).

    Returns the outputs: an input that forward returned unchanged comes back as a
    new view of it, so the caller's tensor (maybe a leaf) keeps its own history.
    """
    if outputs.__class__ is _Tensor and ctx._non_differentiable is None:
        # the common case, one new tensor: link it without the general loop below
        for a in args:
            if a is outputs:
                break
        else:
            ctx._output_meta = _single_meta(outputs._data.shape, outputs._dtype)
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
        if not isinstance(o, _Tensor):
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
    """Replace each output of ``ctx`` that forward saved by a detached alias (same memory,
    same version counter), remembering its place: see ``BackwardNode._with_history``."""
    saved = ctx._saved
    if len(saved) == 1:  # the output alone (exp, tanh, sigmoid, relu, softmax): no loops
        o = saved[0]
        ctx._saved = (_detached_alias(o),)
        ctx._saved_outputs = ((0, o._output_nr, weakref.ref(o)),)
        return
    saved = list(saved)
    positions = []
    for i, t in enumerate(saved):
        for o in outputs:
            if t is o and o._grad_fn is ctx:
                saved[i] = _detached_alias(o)
                positions.append((i, o._output_nr, weakref.ref(o)))
                break
    if positions:
        ctx._saved = tuple(saved)
        ctx._saved_outputs = tuple(positions)


def _detached_alias(t):
    """A tensor over ``t``'s memory with ``t``'s version counter and no history."""
    alias = _new_node(_Tensor)
    alias._data, alias._dtype, alias._device = t._data, t._dtype, t._device
    alias._requires_grad, alias._grad_fn = False, None
    alias._version_counter = t._version_counter
    return alias


def _returned_input(ctx, x):
    """An input returned by forward: a view of it, or itself when ``mark_dirty`` declared it."""
    if ctx._dirty is not None and id(x) in ctx._dirty:
        if x._requires_grad and x._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation "
                f"(input of {ctx.name()} marked dirty). Apply the Function to a copy "
                "(x.clone()) or run it under no_grad().")
        return x  # modified in place: it takes this node as its new grad_fn
    return x._view_of(x._data)
