"""``Function``: one differentiable operation, the unit the tape records.

Every operation in learntorch, built-in or written by a learner, is a
``Function`` subclass with two static methods::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):              # runs with recording off
            y = ...                       # compute the result
            ctx.save_for_backward(y)      # keep what the derivative needs
            return y

        @staticmethod
        def backward(ctx, grad):          # grad = dLoss/dy
            y, = ctx.saved_tensors
            return grad * y               # dLoss/dx, one entry per forward input

``Exp.apply(x)`` runs ``forward``.  When the tape *records* -- grad mode is on
and some input requires grad: "record" means exactly that -- it first makes a
``BackwardNode``, the object you see as ``y.grad_fn``.  That node *is* the
``ctx`` forward received (as in torch), so what forward saved is what backward
reads.  Its edges point at the nodes that produced its inputs;
``learntorch.autograd.engine`` walks them backwards.

Autograd knows tensors by what they carry, not by their class: ``Tensor``
lives above this module (it imports it), and every tensor has the slots
``_requires_grad``, ``_grad_fn``, ``_output_nr`` and ``_version_counter``.
"""
import itertools
import weakref

import numpy as np

from . import grad_mode

_sequence = itertools.count()  # creation order; the engine runs later nodes first
_LEAF_SEQUENCE_BASE = 1 << 62
_NO_EDGE = (None, 0)  # where the gradient of an argument that needs none goes: nowhere


class _Freed(tuple):
    """The type of ``_FREED``: an empty tuple that is not *the* empty tuple (``()`` is one
    shared object in CPython, and a Function may well save nothing)."""


_FREED = _Freed()  # a node's saved tensors once backward freed them (retain_graph=False)


def _is_tensor(x):
    return hasattr(x, "_grad_fn")  # every Tensor has the slot; numbers, dims and None don't


def _requires_grad(x):
    return getattr(x, "_requires_grad", False)


class BackwardNode:
    """A recorded operation: the ``ctx`` of forward and the ``grad_fn`` of its outputs.

    * ``_function`` -- the Function class whose ``backward`` this node runs;
    * ``_edges`` -- one ``(node, output_nr)`` per forward argument: where that argument's
      gradient goes (its ``grad_fn``, a leaf's ``AccumulateGrad``, or ``(None, 0)``);
    * ``needs_input_grad`` -- per argument, whether it is a tensor that requires grad;
    * ``_input_meta`` / ``_output_meta`` -- ``(shape, dtype)`` of each input that needs a
      gradient and of each output: the engine fits gradients to the first and makes
      zeros from the second;
    * ``_saved`` / ``_saved_versions`` -- what ``save_for_backward`` kept, and the
      version of each tensor then (an in-place change since is reported at backward).
    """

    __slots__ = ("_function", "_saved", "_saved_versions", "constants", "_edges",
                 "_number_positions", "needs_input_grad", "_input_meta", "_output_meta",
                 "_sequence_nr", "__dict__", "__weakref__")

    _saved_outputs = None   # ((position in _saved, output_nr, weakref), ...) of saved outputs
    _tensor_pre_hooks = None
    _non_differentiable = None
    _dirty = None
    materialize_grads = True

    def __init__(self, function, args=(), recorded=False):
        self._function = function
        self._saved = self.constants = None  # (constants: numbers a built-in op keeps)
        self.needs_input_grad = tuple(_requires_grad(a) for a in args)
        # next_functions lists tensor arguments only, as torch's does
        self._number_positions = tuple(i for i, a in enumerate(args) if not _is_tensor(a))
        self._edges = self._input_meta = self._output_meta = ()
        if recorded:
            self._edges = tuple(a._edge() if needs else _NO_EDGE
                                for a, needs in zip(args, self.needs_input_grad))
            self._input_meta = tuple((a._data.shape, a._dtype) if needs else None
                                     for a, needs in zip(args, self.needs_input_grad))
            self._sequence_nr = next(_sequence)

    # ---- what forward uses ----
    def save_for_backward(self, *tensors):
        """Keep tensors for backward; an in-place change to one of them is caught later."""
        self._saved = tensors
        self._saved_versions = tuple(0 if t is None else t._version_counter[0] for t in tensors)

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
        """What forward saved; an error if backward freed it or a tensor changed in place."""
        if self._saved is _FREED:
            _raise_freed()
        saved = self._saved or ()  # (None: forward saved nothing)
        if any(t is not None and t._version_counter[0] != version  # changed in place since
               for t, version in zip(saved, self._saved_versions)):
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
        """The error for a saved tensor changed in place since: which one, and the fix."""
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
        """One ``(node, output_nr)`` per tensor argument, as torch."""
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
        return grads if isinstance(grads, tuple) else (grads,)

    def release(self):
        """Free saved tensors once backward has used them (unless retain_graph)."""
        if self._saved is not None:
            self._saved = _FREED


def _raise_freed():
    raise RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the "
        "graph are freed when you call .backward() or autograd.grad(). Specify "
        "retain_graph=True if you need to backward through the graph a second time or "
        "if you need to access saved tensors after calling backward.")


class AccumulateGrad:
    """The node at a leaf tensor: its backward adds the incoming gradient into ``.grad``."""

    __slots__ = ("variable", "next_functions", "_edges", "_sequence_nr", "_tensor_pre_hooks",
                 "__weakref__")
    _output_meta = (None,)  # one output, like every node (the engine counts its slots)
    _input_meta = ()        # and no inputs: nothing flows on from a leaf
    _saved = None           # a leaf saves nothing: release() has nothing to free
    materialize_grads = False

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = self._edges = ()
        # above every BackwardNode's number, so it runs as soon as it is ready (as torch);
        # among leaves the first one used runs first, so the order is the same run after run
        self._sequence_nr = _LEAF_SEQUENCE_BASE - next(_sequence)
        self._tensor_pre_hooks = None

    def name(self):
        return "torch::autograd::AccumulateGrad"  # torch's C++ name (its type is AccumulateGrad)

    def apply(self, grad_outputs):
        """Add the gradient into the leaf's ``.grad``; a graph of it is recorded when the
        engine runs with ``create_graph=True`` (grad mode on)."""
        accumulate_grad(self.variable, grad_outputs[0], grad_mode._state.enabled)
        return ()

    release = BackwardNode.release

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"

    @property
    def saved_tensor_count(self):
        return 0


def accumulate_grad(tensor, g, create_graph):
    """``tensor.grad += g`` (the first time, ``tensor.grad = g``), as torch's AccumulateGrad.

    Tensor hooks have already run (they are pre-hooks of the node).  With
    ``create_graph`` the sum is recorded, so ``.grad`` itself can be differentiated.
    """
    if tensor._grad is None:
        if create_graph:
            tensor._grad = g
        elif tensor.is_contiguous():  # .grad gets its own contiguous memory, like the leaf
            tensor._grad = g._wrap(g._data.copy())
        else:  # a strided leaf's .grad keeps its strides (torch's layout rule)
            tensor._grad = g.detach().clone()
    elif create_graph or tensor._grad._requires_grad:
        tensor._grad = tensor._grad + g
    else:
        tensor._grad._data += g._data
        tensor._grad._version_counter[0] += 1
    if tensor._post_accumulate_grad_hooks:
        run_post_accumulate_hooks(tensor)


def run_post_accumulate_hooks(tensor):
    """``hook(tensor)`` for each ``register_post_accumulate_grad_hook``, now that ``.grad``
    holds this backward's sum."""
    for hook in list(tensor._post_accumulate_grad_hooks):
        hook(tensor)


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

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "Function subclasses must define a static forward(ctx, *inputs) that returns the output")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "Function subclasses must define a static backward(ctx, *grad_outputs) that returns "
            "one gradient (or None) per forward input")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{type(self).__name__}() instances are not callable: autograd Functions have static "
            f"methods only. Call {type(self).__name__}.apply(...) on the class instead.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward``; when the tape records, its node becomes the outputs' grad_fn."""
        # torch binds keyword arguments to forward's parameters: they become inputs
        args = _bind_arguments(cls, args, kwargs) if kwargs else args
        # in an autocast region, its policy casts the inputs first (learntorch/amp)
        args = args if _autocast_hook is None else _autocast_hook(cls, args)
        state = grad_mode._state
        recorded = state.enabled and any(_requires_grad(a) for a in args)
        ctx = BackwardNode(cls, args, recorded)  # the one place a node is made
        enabled, state.enabled = state.enabled, False  # ops forward calls are not recorded
        try:
            with np.errstate(all="ignore"):  # 1/0 is inf and 0/0 nan, as torch: no warnings
                outputs = cls.forward(ctx, *args)
        finally:
            state.enabled = enabled
        if recorded:
            outputs = _link_outputs(ctx, outputs, args)
        return outputs


#: learntorch.amp's caster while an autocast region is on, else None: ``apply`` hands it
#: every op's inputs first (a module global, not a wrapper around ``apply``: entering and
#: leaving a region then costs two assignments, and no class attribute changes)
_autocast_hook = None


def set_autocast_hook(hook):
    """Install (or, with None, remove) ``hook(cls, args) -> args``: how ``learntorch.amp``
    casts an op's inputs while an autocast region is on (``Function.apply`` calls it)."""
    global _autocast_hook
    _autocast_hook = hook


def autocast_inputs(cls, *args):
    """``args`` as autocast will hand them to ``cls`` (cast to 16 bits or float32 as its policy
    says), or unchanged outside autocast.  Autocast casts at ``apply``; the few functionals
    that compare their inputs' dtypes before calling ``apply`` (linear, conv, matmul, einsum)
    call this first, so that they check what the op will actually receive, as torch's
    autocast, which casts before the op's own checks."""
    return args if _autocast_hook is None else _autocast_hook(cls, args)


def wrap_apply(wrapper):
    """Make ``Function.apply`` run ``wrapper(apply)``: how the profiler times every op and
    ``learntorch.fx.capture`` records them.  Returns a function that puts back the ``apply``
    that was in place (the reference one, or the fast tier's)."""
    previous = Function.__dict__["apply"]
    Function.apply = classmethod(wrapper(previous.__func__))

    def restore():
        Function.apply = previous
    return restore


def _bind_arguments(cls, args, kwargs):
    import inspect
    bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return bound.args[1:]


def _link_outputs(ctx, outputs, args):
    """Make ``ctx`` the grad_fn of each floating output (not those marked non-differentiable).

    Returns the outputs: an input that forward returned unchanged comes back as a
    new view of it, so the caller's tensor (maybe a leaf) keeps its own history.
    """
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    outs = tuple(_returned_input(ctx, o) if any(o is a for a in args) else o for o in outs)
    non_diff = ctx._non_differentiable or ()
    for i, o in enumerate(outs):
        if _is_tensor(o) and o._dtype.is_floating_point and id(o) not in non_diff:
            o._grad_fn, o._output_nr, o._requires_grad = ctx, i, True
    ctx._output_meta = tuple((o._data.shape, o._dtype) if _is_tensor(o) else None for o in outs)
    if ctx._saved is not None and any(t is o for t in ctx._saved for o in outs):
        _detach_saved_outputs(ctx, outs)  # (exp, tanh, ... keep their output)
    return outs if isinstance(outputs, tuple) else outs[0]


def _detach_saved_outputs(ctx, outputs):
    """Replace each output of ``ctx`` that forward saved by a detached alias (same memory,
    same version counter), remembering its place: see ``BackwardNode._with_history``."""
    saved = list(ctx._saved)
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
    alias = t.detach()
    alias._base = None  # not a view for autograd: only a second name for t's memory
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
