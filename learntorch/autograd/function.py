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

from . import grad_mode

_sequence = itertools.count()  # creation order; the engine runs later nodes first


class BackwardNode:
    """A recorded operation: the ``ctx`` of forward and the ``grad_fn`` of its outputs."""

    __slots__ = ("_function", "next_functions", "_edges", "needs_input_grad", "_saved", "_saved_versions",
                 "_released", "_input_meta", "_output_meta", "_sequence_nr", "_tensor_pre_hooks",
                 "_non_differentiable", "materialize_grads", "__dict__", "__weakref__")

    def __init__(self, function):
        self._function = function
        self.next_functions = ()  # one (node, output_nr) per tensor argument, as torch
        self._edges = ()  # one per forward argument (None for numbers), what backward returns
        self.needs_input_grad = ()
        self._saved = None
        self._saved_versions = None
        self._released = False
        self._input_meta = ()
        self._output_meta = ()
        self._sequence_nr = next(_sequence)
        self._tensor_pre_hooks = None
        self._non_differentiable = None
        self.materialize_grads = True

    # ---- what forward uses ----
    def save_for_backward(self, *tensors):
        """Keep tensors for backward; an in-place change to one of them is caught later."""
        self._saved = tensors
        self._saved_versions = tuple(t._version_counter[0] if t is not None else 0 for t in tensors)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    # ---- what backward uses ----
    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        if self._saved is None:
            return ()
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
            self._saved = None
            self._released = True


class AccumulateGrad:
    """The node at a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable", "next_functions", "_edges", "_sequence_nr", "_tensor_pre_hooks",
                 "__weakref__")

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = self._edges = ()
        self._sequence_nr = float("inf")  # run as soon as ready, like torch
        self._tensor_pre_hooks = None

    def name(self):
        return "AccumulateGrad"

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
    if node._tensor_pre_hooks is None:
        node._tensor_pre_hooks = {}
    hooks = node._tensor_pre_hooks.setdefault(output_nr, [])
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

    @classmethod
    def apply(cls, *args):
        from .._tensor import Tensor  # late import: the tensor module imports this one
        state = grad_mode._state
        enabled = state["enabled"]
        record = False
        if enabled:
            for a in args:
                if isinstance(a, Tensor) and a.requires_grad:
                    record = True
                    break
        ctx = BackwardNode(cls)
        state["enabled"] = False
        try:
            outputs = cls.forward(ctx, *args)
        finally:
            state["enabled"] = enabled
        if not record:
            return outputs
        return _record(ctx, args, outputs, Tensor)


def _record(ctx, args, outputs, Tensor):
    """Link ``ctx`` into the graph: edges to the inputs' nodes, outputs point back to it."""
    edges, needs, meta, visible = [], [], [], []
    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            edge = a._edge()
            edges.append(edge)
            visible.append(edge)
            needs.append(True)
            meta.append((a.shape, a._dtype))
        else:
            edges.append((None, 0))
            if isinstance(a, Tensor):
                visible.append((None, 0))
            needs.append(False)
            meta.append(None)
    ctx._edges = tuple(edges)
    ctx.next_functions = tuple(visible)
    ctx.needs_input_grad = tuple(needs)
    ctx._input_meta = tuple(meta)
    single = isinstance(outputs, Tensor)
    outs = (outputs,) if single else outputs
    non_diff = ctx._non_differentiable
    out_meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            out_meta.append(None)
            continue
        out_meta.append((o.shape, o._dtype))
        if o._dtype.is_floating_point and (non_diff is None or id(o) not in non_diff):
            o._grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
    ctx._output_meta = tuple(out_meta)
    return outputs
