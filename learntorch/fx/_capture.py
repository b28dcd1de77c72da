"""``capture(fn_or_module, *example_inputs)``: run it once and record every op into a Graph.

Every operation of the engine is one ``Function`` called through
``Function.apply`` (DESIGN.md section 4), so wrapping ``apply`` for the duration
of one call sees the whole computation: which op ran, on which tensors, with
which constant arguments, making which tensors.  A tensor is then known by the
node that made it: an input (``placeholder``), a parameter or buffer of the
module (``get_attr``, named by its path), an op's output, or otherwise a
constant of the graph.  Forward hooks on the submodules say which module each
op ran in.  (The profiler wraps ``apply`` the same way to time ops.)

This is a *concrete* trace, not torch.fx's *symbolic* one: ``torch.fx.symbolic_trace``
runs forward on proxy objects and records Python-level calls (``call_module``,
``call_method``), so it never sees shapes, while ``capture`` runs forward on real
example tensors and records the engine's ops with their real shapes.  So:

* the graph is specialised to the example inputs' shapes and dtypes (running it
  on others is refused: ``interpreter.py``), and to the path Python's ``if``s took;
* every op is recorded, down to the primitive ``Function``s the engine ran
  (``nn.Linear`` is one ``Linear`` op, ``nn.Flatten`` a ``View``);
* something computed outside ``Function.apply`` -- a comparison (``x > 0`` is not
  differentiable, so not a Function), ``.item()`` fed back into an op, Python on
  the values -- would be frozen into the graph as a constant.  ``check=True``
  (the default) therefore runs the function and the graph once more on a second,
  different input and raises ``CaptureError`` if they disagree.

``learntorch.fx.capture`` is learntorch's own; its nearest torch relatives are
``torch.jit.trace`` (concrete, like this) and ``torch.export.export``.
"""
import contextlib
import inspect
import operator
import warnings

import numpy as np

from ..autograd import function as _function
from ..autograd import grad_mode
from . import _python
from .graph import Graph, TensorMeta


class CaptureError(RuntimeError):
    """The call could not be captured faithfully (the message says where and why)."""


_active = []  # the tracers recording now (innermost last)


def capture(fn, *example_inputs, check=True, python=False):
    """Run ``fn(*example_inputs)`` once and return the ``Graph`` of the ops it ran.

    ``fn`` is an ``nn.Module`` (its parameters and buffers become named
    ``get_attr`` nodes; it is run in the mode it is in: call ``.eval()`` first
    for inference) or any function of tensors.  ``example_inputs`` are tensors
    (or constants, which the graph then assumes).  The function is called as
    usual, so a module in training mode updates its batch-norm statistics and
    draws dropout masks as in any call.  ``check=True`` verifies the graph on a
    second input (see the module docstring).  ``python=True`` also records what
    Python does with the tensors -- reads of their values, prints, and the ops that
    are not Functions (comparisons, ``argmax``, ``detach``): see ``_python.py``.
    """
    from ..nn.modules.module import Module
    from .._tensor import Tensor
    module = fn if isinstance(fn, Module) else None
    if module is None and not callable(fn):
        raise TypeError(f"capture() takes a Module or a function, not {type(fn).__name__}")
    for i, x in enumerate(example_inputs):
        if isinstance(x, (tuple, list, dict)) and _holds_tensor(x, Tensor):
            raise TypeError(f"capture(): example input {i} is a {type(x).__name__} of tensors; "
                            "pass each tensor as its own argument (a graph's inputs are "
                            "tensors or constants)")
    from .. import random as _random
    rng_before = _random.get_rng_state()
    graph = trace(fn, example_inputs, module=module, python=python)
    rng_after = _random.get_rng_state()
    if graph.meta["random"]:
        warnings.warn(
            "the captured call drew random numbers (dropout in training mode?): the graph "
            "replays the numbers drawn during capture as constants; call model.eval() "
            "before capturing for inference", stacklevel=2)
    if check:
        _check(graph, fn, module, example_inputs, rng_before, rng_after)
    return graph


def trace(fn, example_inputs, *, module=None, input_names=None, python=False, on_break=None,
          quiet=False):
    """The recording itself: ``fn(*example_inputs)`` once, every op into a new ``Graph``.

    ``module``: the Module whose parameters and buffers are named (``fn`` may be a
    wrapper that calls it); ``input_names``: the placeholders' names (default: ``fn``'s
    parameter names); ``python``: see ``capture``; ``on_break(kind, where)`` is called at
    each value read or print (``learntorch.compile(fullgraph=True)`` raises there);
    ``quiet``: record prints without printing.  ``graph.meta["random"]`` says whether
    the call drew random numbers.
    """
    from .. import random as _random
    if input_names is None:
        input_names = _input_names(module.forward if module is not None and fn is module
                                   else fn, len(example_inputs))
    tracer = _Tracer(module, list(input_names), python=python, on_break=on_break)
    tracer.quiet = quiet
    tracer.print_scopes = _user_scopes(fn, module)
    rng_before = _random.get_rng_state()
    inputs = [tracer.placeholder(name, x) for name, x in zip(tracer.input_names, example_inputs)]
    with tracer.recording():
        result = fn(*inputs)
        returned = _map_tensors(result, tracer.resolve)
        tracer.finish_writes()
        tracer.graph.create_node("output", "output", (returned,))
    graph = tracer.graph
    graph.meta["random"] = not _same(rng_before, _random.get_rng_state())
    return graph


def _copy_keeping_strides(x):
    """A copy of ``x`` (no history) laid out with ``x``'s strides.  ``clone()`` makes a
    strided view (``x[:, ::2]``, an ``expand``) contiguous, but what the capture records
    must be what the function does with the input itself: an ``expand`` records the
    strides it computed from its input's, and the guards hold the input's strides."""
    from .._tensor import Tensor
    copy = x.detach().clone()
    a = x._data
    if (a.__class__ is not np.ndarray or not a.size or copy.stride() == x.stride()
            or any(s < 0 for s in a.strides)):
        return copy
    span = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.itemsize
    memory = np.empty(-(-span // a.itemsize), dtype=a.dtype)
    laid_out = np.lib.stride_tricks.as_strided(memory, a.shape, a.strides)
    laid_out[...] = a  # where strides are 0, every write of an element writes the same value
    return Tensor._wrap(laid_out)


class _Alias(_function.Function):
    """The capture's input: the same memory as a new non-leaf tensor (``clone()`` would
    lose the strides); its gradient passes through."""

    @staticmethod
    def forward(ctx, x):
        from .._tensor import Tensor
        return Tensor._wrap(x._data)

    @staticmethod
    def backward(ctx, grad):
        return grad


def _user_scopes(fn, module):
    """The globals of the code being captured that is not learntorch's: ``fn``'s (and what it
    wraps), and those of the forward of each of the module's classes."""
    functions = [fn, getattr(fn, "__wrapped__", None)]
    if module is not None:
        functions += [getattr(type(m), "forward", None) for m in module.modules()]
    scopes = []
    for f in functions:
        scope = getattr(f, "__globals__", None)
        if (scope is not None and not scope.get("__name__", "").startswith("learntorch")
                and all(scope is not s for s in scopes)):
            scopes.append(scope)
    return scopes


def _holds_tensor(value, Tensor):
    if isinstance(value, Tensor):
        return True
    items = value.values() if isinstance(value, dict) else value
    return isinstance(value, (tuple, list, dict)) and any(_holds_tensor(v, Tensor) for v in items)


def _input_names(forward, n):
    """The names of forward's parameters (``x``), as torch.fx names its placeholders."""
    try:
        params = [p for p in inspect.signature(forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    return names + [f"input_{i}" for i in range(len(names), n)]


def _same(a, b):
    return a.shape == b.shape and bool((a == b).all())


def _map_tensors(value, fn):
    """``value`` with ``fn(t)`` in place of every tensor, through tuples, lists and dicts."""
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_map_tensors(v, fn) for v in value)
    if isinstance(value, tuple):  # a named tuple (torch.return_types.max): keep its fields
        return type(value)(*(_map_tensors(v, fn) for v in value))
    if isinstance(value, list):
        return [_map_tensors(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    return value


class _Tracer:
    """What one capture knows: the graph so far, and which node stands for which tensor."""

    def __init__(self, module, input_names, python=False, on_break=None):
        self.graph = Graph()
        self.python = python      # also record value reads, prints and non-Function ops
        self.on_break = on_break
        self.written = {}         # id(input or attribute tensor) -> (its node, the tensor)
        self.quiet = False        # record print() calls without printing (compile replays them)
        self.print_scopes = []    # globals of the user's code (python=True: prints recorded)
        self.input_names = input_names
        self.module = module
        self.depth = 0          # > 0 while an op's forward runs: its inner ops are its own
        self.paused = False
        self.tensors = {}       # id(tensor) -> (node or (node, i), version, tensor kept alive)
        self.by_grad_fn = {}    # id(grad_fn) -> (node, grad_fn): whose output took it in place
        self.getitems = {}      # (node, i) -> its getitem node
        self.constants = 0
        self.module_stack = []
        self.attribute_names = {}
        if module is not None:
            for kind, items in (("parameter", module.named_parameters()),
                                ("buffer", module.named_buffers())):
                for name, t in items:
                    self.attribute_names.setdefault(id(t), (name, kind, t))

    # ---- inputs ---------------------------------------------------------------------
    def placeholder(self, name, x):
        from .._tensor import Tensor
        if not isinstance(x, Tensor):
            self.graph.create_node("placeholder", name, name=name, meta={"value": x})
            return x
        node = self.graph.create_node("placeholder", name, name=name,
                                      meta={"tensor_meta": TensorMeta.of(x)})
        if self.python and not x.requires_grad:
            # the copy needs no gradient, as the input: code reading requires_grad or calling
            # numpy() acts as it would on the input; its in-place writes are recorded by
            # _python.py's apply_inplace
            traced = _copy_keeping_strides(x)
            self.bind(traced, node)
            return traced
        # The function gets a copy (its in-place ops must not change the caller's tensor).
        # A floating copy requires grad and is not a leaf, so every in-place op inside
        # forward takes autograd's recorded path -- through Function.apply, where it is
        # seen -- instead of writing into memory unseen.
        traced = _copy_keeping_strides(x)
        if traced.dtype.is_floating_point:
            with grad_mode.enable_grad():
                traced = _Alias.apply(traced.requires_grad_())
        self.bind(traced, node)
        return traced

    # ---- recording ------------------------------------------------------------------
    @contextlib.contextmanager
    def recording(self):
        _active.append(self)
        _Patch.install()
        if self.python:
            _python.Watch.install(_current, self.print_scopes)
        handles = self._module_hooks()
        try:
            with grad_mode.enable_grad():  # see placeholder(): in-place ops must be recorded
                yield
        finally:
            for handle in handles:
                handle.remove()
            if self.python:
                _python.Watch.remove()
            _Patch.remove()
            _active.remove(self)

    def _module_hooks(self):
        if self.module is None:
            return []
        handles = []
        for path, sub in self.module.named_modules():
            entry = (path, type(sub).__name__)

            def enter(mod, args, entry=entry):
                self.module_stack.append(entry)

            def leave(mod, args, output):
                if self.module_stack:
                    self.module_stack.pop()

            handles.append(sub.register_forward_pre_hook(enter, prepend=True))
            handles.append(sub.register_forward_hook(leave))
        return handles

    @contextlib.contextmanager
    def pause(self):
        previous, self.paused = self.paused, True
        try:
            yield
        finally:
            self.paused = previous

    def record(self, cls, args, outputs, wrote=False):
        from .._tensor import Tensor
        node_args = _map_tensors(args, self.resolve)
        meta = {}
        if self.module_stack:
            meta["module_path"], meta["module_type"] = self.module_stack[-1]
        if isinstance(outputs, Tensor):
            meta["tensor_meta"] = TensorMeta.of(outputs)
        elif isinstance(outputs, tuple):
            meta["tensor_meta"] = tuple(TensorMeta.of(o) if isinstance(o, Tensor) else None
                                        for o in outputs)
        if any(outputs is a for a in args if isinstance(a, Tensor)):
            meta["inplace"] = True  # forward wrote into an input and returned it (mark_dirty)
        if wrote:
            meta["writes"] = True
        node = self.graph.create_node("call_function", cls, node_args, meta=meta)
        if isinstance(outputs, Tensor):
            self.bind(outputs, node)
            if outputs.grad_fn is not None:
                self.by_grad_fn[id(outputs.grad_fn)] = (node, outputs.grad_fn)
        elif isinstance(outputs, tuple):
            for i, o in enumerate(outputs):
                if isinstance(o, Tensor):
                    self.bind(o, (node, i))

    def read_value(self, t, how, value):
        """Python read ``t``'s value (``bool(t)``, ``t.item()``, ...): a ``python_value``
        node, unless ``t`` is a constant of the graph (its value cannot change)."""
        where = _python.user_frame()
        node = self.resolve(t)
        if node.op == "get_attr" and node.meta.get("attribute") == "constant":
            return
        if self.on_break is not None:
            self.on_break(how if isinstance(how, str) else how[0], where)
        if isinstance(value, np.ndarray):
            value = value.copy()  # numpy() shares the tensor's memory: keep what was read
        self.graph.create_node("call_function", _python.python_value, (node, how, value),
                               name=f"read_{node.name}",
                               meta={"where": where, "python": how, "value": value})

    def wrote_in_place(self, x, new_nodes):
        """``x``'s memory now holds the result of the last op among ``new_nodes`` (an
        in-place write that autograd did not record): from here on ``x`` is that node."""
        ops = [n for n in new_nodes if n.op == "call_function"]
        entry = self.tensors.get(id(x))
        if not ops or entry is None:
            return  # x is not in the graph yet: resolve() makes it a constant, as it is now
        ref, _, _ = entry
        original = self.node_of(ref)
        if original.op in ("placeholder", "get_attr") and id(x) not in self.written:
            self.written[id(x)] = (original, x)
        self.tensors[id(x)] = (ops[-1], x._version, x)

    def finish_writes(self):
        """A ``copy_into`` node for each input or attribute written in place (before output)."""
        for original, x in self.written.values():
            if original.meta.get("attribute") == "constant":
                continue
            self.graph.create_node("call_function", _python.copy_into,
                                   (original, self.resolve(x)), name=f"copy_into_{original.name}",
                                   meta={"inplace": True})

    def python_print(self, args, kwargs):
        """Python printed: a ``python_print`` node that prints again on every replay."""
        where = _python.user_frame()
        if self.on_break is not None:
            self.on_break("print", where)
        self.graph.create_node("call_function", _python.python_print,
                               (_map_tensors(tuple(args), self.resolve),
                                _map_tensors(dict(kwargs), self.resolve)),
                               name="printed", meta={"where": where, "python": "print"})

    def bind(self, t, ref):
        self.tensors[id(t)] = (ref, t._version, t)

    def node_of(self, ref):
        if not isinstance(ref, tuple):
            return ref
        found = self.getitems.get(ref)
        if found is None:
            node, i = ref
            meta = dict(node.meta, tensor_meta=node.tensor_meta[i])
            found = self.getitems[ref] = self.graph.create_node(
                "call_function", operator.getitem, (node, i), name=f"{node.name}_{i}", meta=meta)
        return found

    def resolve(self, t):
        """The node standing for tensor ``t`` (made now if ``t`` is an attribute or a constant)."""
        entry = self.tensors.get(id(t))
        if entry is not None:
            ref, version, _ = entry
            if t._version == version:
                return self.node_of(ref)
            owner = self.by_grad_fn.get(id(t.grad_fn)) if t.grad_fn is not None else None
            if owner is not None:  # changed in place by a recorded op, whose result it took
                self.tensors[id(t)] = (owner[0], t._version, t)
                return owner[0]
            raise CaptureError(
                f"a tensor of shape {list(t.shape)} ({t.dtype}) made by {self.node_of(ref).name} "
                "was changed in place by an operation the capture could not see (not a "
                "Function, or on integer data), and then used again: the graph cannot know "
                "its new values. Use the out-of-place form of that operation (x = x + 1, "
                "not x += 1)")
        known = self.attribute_names.get(id(t))
        if known is not None:
            name, kind, _ = known
            value, node_name = t, None
        else:
            name, kind = f"_tensor_constant{self.constants}", "constant"
            self.constants += 1
            with self.pause():  # a snapshot: the graph keeps the value it was captured with
                value = t.detach().clone()
            node_name = name
        node = self.graph.create_node("get_attr", name, name=node_name or name,
                                      meta={"tensor_meta": TensorMeta.of(t), "attribute": kind})
        self.graph.attributes[name] = value
        self.tensors[id(t)] = (node, t._version, t)
        return node


def _as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


def _current():
    """The tracer recording now, or None."""
    return _active[-1] if _active else None


class _Patch:
    """Install / remove the recording wrapper of ``Function.apply`` (once, however nested)."""

    installed = 0
    restore = None

    @classmethod
    def install(cls):
        cls.installed += 1
        if cls.installed == 1:
            cls.restore = _function.wrap_apply(_recording)

    @classmethod
    def remove(cls):
        cls.installed -= 1
        if cls.installed == 0:
            cls.restore()


def _recording(forward):
    """``Function.apply`` that also records the op in the innermost active capture."""
    def recorded_apply(fn_cls, *args, **kwargs):
        tracer = _active[-1] if _active else None
        if tracer is None or tracer.depth or tracer.paused:
            return forward(fn_cls, *args, **kwargs)
        if kwargs:
            args, kwargs = _function._bind_arguments(fn_cls, args, kwargs), {}
        # in an autocast region, apply casts the inputs first (recorded as ``to`` ops of their
        # own): cast them here, so that the op is recorded with the inputs it computes on
        args = _function.autocast_inputs(fn_cls, *args)
        versions = [(a, a._version) for a in args if hasattr(a, "_version_counter")]
        tracer.depth += 1
        try:
            outputs = forward(fn_cls, *args, **kwargs)
        finally:
            tracer.depth -= 1
        # a forward that writes into an input it does not return (batch norm's running
        # statistics) changes state: replaying it again would change it again
        wrote = any(a._version != v and all(a is not o for o in _as_tuple(outputs))
                    for a, v in versions)
        tracer.record(fn_cls, args, outputs, wrote)
        return outputs
    return recorded_apply


# ---------------------------------------------------------------- the second-input check
def _check(graph, fn, module, example_inputs, rng_before, rng_after):
    """Run ``fn`` and the graph on a second input; they must agree (see the module docstring).

    The module's buffers and the random state are put back afterwards, so the check
    leaves no trace: capture() changed them exactly as one call of ``fn`` does.
    """
    from .. import random as _random
    from .._tensor import Tensor
    generator = _random.Generator().manual_seed(20240607)
    others = [_another(x, generator) if isinstance(x, Tensor) else x for x in example_inputs]
    buffers = [(b, b.detach().clone()) for _, b in module.named_buffers()] if module else []
    try:
        with grad_mode.no_grad():
            _random.set_rng_state(rng_before)  # the same dropout masks as during capture
            try:  # fn gets copies: it may change its inputs in place
                expected = fn(*[o.clone() if isinstance(o, Tensor) else o for o in others])
            except Exception as e:
                raise CaptureError(f"capture(check=True) calls the function once more on a "
                                   f"second random input, and that call failed ({type(e).__name__}"
                                   f": {e}); pass check=False if it only accepts inputs like "
                                   "the example") from e
            _random.set_rng_state(rng_before)
            got = graph(*others)
    finally:
        _random.set_rng_state(rng_after)
        with grad_mode.no_grad():
            for b, saved in buffers:
                b.copy_(saved)
    _compare(graph, expected, got)


def _another(x, generator):
    """A second input like ``x``, with other values: floats redrawn around x's mean and spread;
    integers and bools (indices, masks) kept, since other values may not be valid."""
    from .. import factories
    if not x.dtype.is_floating_point or x.numel() == 0:
        return x.detach().clone()
    data = x.detach().cpu().numpy().astype(np.float64)
    spread = float(data.std()) or 1.0
    noise = factories.randn(tuple(x.shape), generator=generator,
                            dtype=x.dtype).numpy().astype(np.float64)
    values = data + spread * noise
    return factories.tensor(values, dtype=x.dtype).to(x.device)


def _compare(graph, expected, got):
    flat_expected, flat_got = [], []
    _map_tensors(expected, flat_expected.append)
    _map_tensors(got, flat_got.append)
    if len(flat_expected) != len(flat_got):
        raise CaptureError(f"on a second input the function returned {len(flat_expected)} "
                           f"tensors and the graph {len(flat_got)}: its Python code depends on "
                           "the input's values")
    for i, (e, g) in enumerate(zip(flat_expected, flat_got)):
        a = e.detach().cpu().numpy()
        b = g.detach().cpu().numpy()
        if a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
            continue
        diff = (f"max difference {np.nanmax(np.abs(a.astype(np.float64) - b)):.3g}"
                if a.shape == b.shape else f"shapes {list(a.shape)} and {list(b.shape)}")
        raise CaptureError(
            f"the captured graph does not compute what the function computes: on a second "
            f"input, output {i} differs ({diff}). Part of forward ran outside the engine's "
            "Functions and was frozen into the graph as a constant -- a comparison (x > 0), "
            "argmax, .item()/.tolist()/.numpy() fed back into the computation, or Python "
            "control flow on tensor values. Rewrite that part with differentiable ops (e.g. "
            "torch.where, relu, clamp), or pass check=False to keep the graph of this one call")

