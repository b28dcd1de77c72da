"""``learntorch.compile``: capture, guard, fuse, generate -- and replay.

    fast = learntorch.compile(model)        # or @learntorch.compile over a function
    fast(x)                                  # first call: capture and compile, then run
    fast(x2)                                 # same shapes & dtypes: replays the program

What happens on a call (torch.compile's design, in miniature):

1. **Guards.**  Each cache entry has a guard set (``guards.py``): the input shapes,
   dtypes, devices, ``requires_grad``, grad mode, the module's parameters and the
   plain values the code reads.  The first entry whose guards hold runs.
2. **A miss captures.**  Otherwise the function runs once under ``learntorch.fx``'s
   tracer (``python=True``: values Python reads and prints become nodes, see
   ``fx/_python.py``), on copies of the inputs, with the module's buffers put back
   afterwards -- so the capture itself changes nothing.  The graph is rewritten and
   fused (``fusion.py``), each group becomes a Numba kernel (``codegen.py``), the
   whole becomes a Python function (``program.py``), and the new entry goes first in
   the cache.  A miss after the first is a *recompilation*; after
   ``learntorch._dynamo.config.recompile_limit`` (8) of them the function warns (torch's
   warning) and runs eagerly for calls that match no entry.
3. **Replay.**  The program runs on the real inputs.  Autograd records as usual (engine
   ops record themselves; a kernel's backward recomputes its ops: ``program.py``).

**Graph breaks.**  Where Python reads a tensor's value (``if x.sum() > 0``, ``.item()``),
torch's Dynamo ends the graph, runs the Python, and starts a new graph.  learntorch cannot
resume a Python function in the middle, so a compiled program *checks* the value Python
read (a ``check_value`` line) and goes on with the ops the capture saw after it.  When
the value differs -- the code would take the other branch -- the function is captured
again along the new path (a recompilation) and the new program runs from the start.
Ops before the break run twice on that call; when they changed state (a print, an
in-place write, batch norm's running statistics) that would be wrong, so such a
function runs eagerly instead.  ``fullgraph=True`` makes every break an error
(``learntorch._dynamo.exc.Unsupported``) naming the line of your code, as torch does.
What the tracer cannot replay at all -- random numbers (dropout in training mode,
``torch.rand``), in-place writes it could not see -- makes the function run eagerly,
with a warning saying why (with ``fullgraph=True``: the same error).

**Dynamic shapes** (``dynamic=``).  A captured graph has concrete sizes (a ``view``
recorded them).  ``dynamic=False``: every new size is a new entry.  ``dynamic=None``
(the default, torch's "automatic dynamic"): the first entry is exact; when a later call
differs only in some sizes, the new entry accepts any size there (2 or more: sizes 0 and 1
are special, as in torch).  ``dynamic=True``: sizes vary from the start.  torch traces a
dynamic entry once with symbolic sizes; learntorch captures it again for each new size
(cheap: the generated kernels take their sizes as arguments, so none is compiled again),
and those captures are not recompilations.

**Backends** (``backend=``): ``"numba"`` (the default; ``"inductor"``, torch's default, is
accepted as the same thing): fusion and generated kernels; ``"eager"``: capture, guards
and replay, every op by the engine (torch's debugging backend of that name: is the
capture right?); ``"reference"``: as ``"numba"``, with the generated kernels run as plain
Python (step into them with a debugger; slow); a callable ``backend(graph,
example_inputs)`` returning a callable, as torch's custom backends.  While a learner's
backend is active (``learntorch.backends.use``) nothing is fused: every op must reach it.

**Modes** (``mode=``): torch's names are accepted.  ``"default"``, ``"reduce-overhead"``
(on a GPU, torch records CUDA graphs to cut launch costs; on the CPU learntorch has no
launches to cut) and ``"max-autotune-no-cudagraphs"`` compile as the default does;
``"max-autotune"`` also generates each kernel's parallel version and keeps whichever of
the two the first call's arrays run faster (torch times several configurations of each
kernel the same way).

``options=``: ``{"fusion": pass}`` (learntorch's) replaces the fusion pass with your own:
``pass(graph)`` returns lists of nodes, each to become one kernel (chapter 11's exercise).
``{"freezing": True}`` (torch's Inductor option of that name, for inference): a program
compiled under ``no_grad`` multiplies by a transposed copy of each ``Linear`` weight,
made once, which BLAS reads faster; the copy is made again when the weight changes
(``freezing.py``: what it sees and what it cannot).  Its values may differ from eager's in
the last bits.
"""
import functools
import inspect
import types
import warnings
import weakref

from .. import random as _random
from .._tensor import Tensor
from ..autograd import grad_mode
from ..fx import CaptureError
from ..fx._capture import trace
from ..nn.modules.module import Module
from . import fusion, guards as _guards, program as _program
from .errors import Unsupported, break_message
from .logs import log

BACKENDS = ("numba", "inductor", "eager", "reference")
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
OPTIONS = ("fusion", "freezing")

_compiled = weakref.WeakSet()   # every compiled function, for learntorch.compiler.reset()
_compiling = []                 # captures in progress (learntorch.compiler.is_compiling)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="numba", mode=None,
            options=None, disable=False):
    """Compile ``model`` (a function or an ``nn.Module``): torch.compile's arguments.

    Returns a callable with the same results (an ``OptimizedModule`` for a module, as
    torch); used as ``@learntorch.compile`` or ``@learntorch.compile(fullgraph=True)``
    without ``model``, it is a decorator.  See the module docstring for what each
    argument does.
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if not (callable(backend) or backend in BACKENDS):
        raise RuntimeError(f"invalid backend {backend!r}: learntorch.compile has the backends "
                           f"{', '.join(map(repr, BACKENDS))} (or pass a callable "
                           "backend(graph, example_inputs))")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if dynamic not in (None, True, False):
        raise TypeError(f"dynamic must be None, True or False, not {dynamic!r}")
    unknown = sorted(set(options or {}) - set(OPTIONS))
    if unknown:
        raise RuntimeError(f"Unexpected optimization option {unknown[0]!r}: learntorch.compile "
                           f"takes the options {', '.join(map(repr, OPTIONS))}")
    if disable:
        return model
    settings = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=dict(options or {}))
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model, module=model, **settings))
    if not callable(model):
        raise TypeError(f"compile() takes a function or an nn.Module, not "
                        f"{type(model).__name__}")
    return CompiledFunction(model, **settings)


# ---------------------------------------------------------------- flattening the inputs
def _flatten(value, name, leaves, names):
    """Tensors and other values inside tuples, lists and dicts, in order; the structure back."""
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        items = [_flatten(v, f"{name}_{i}", leaves, names) for i, v in enumerate(value)]
        return (type(value), items)
    if isinstance(value, dict):
        items = [(k, _flatten(v, f"{name}_{_ident(k)}", leaves, names)) for k, v in value.items()]
        return (dict, items)
    leaves.append(value)
    names.append(name)
    return None


def _unflatten(spec, leaves):
    if spec is None:
        return next(leaves)
    kind, items = spec
    if kind is dict:
        return {k: _unflatten(s, leaves) for k, s in items}
    return kind(_unflatten(s, leaves) for s in items)


def _ident(key):
    text = "".join(c if c.isalnum() else "_" for c in str(key))
    return text or "key"


class CacheEntry:
    """One guard set and what runs when it holds: programs (one per path through the
    graph breaks; for a dynamic entry, per size), or ``eager`` (why the function runs
    eagerly under these guards)."""

    def __init__(self, index, guard_set, dynamic_dims):
        self.index, self.guards, self.dynamic_dims = index, guard_set, dynamic_dims
        self.check = guard_set.check if guard_set is not None else None
        self.shapes = {}       # position of each tensor input -> its size when compiled
        self.paths = {}        # sizes of the tensor inputs (None when static) -> [Program]
        self.eager = None
        self.hits = 0

    @property
    def programs(self):
        return [p for programs in self.paths.values() for p in programs]


class CompiledFunction:
    """What ``learntorch.compile(fn)`` returns: call it like ``fn``.

    Introspection (learntorch's own; torch keeps these in logs): ``graphs`` (the captured
    ``fx.Graph``s), ``programs`` (each compiled path: ``.code``, ``.kernels``,
    ``.fused_graph``, ``.groups``), ``code`` and ``kernels`` of the latest program,
    ``guards`` (the latest entry's guard code), ``stats`` and ``recompile_reasons``.
    """

    def __init__(self, fn, *, module=None, fullgraph=False, dynamic=None, backend="numba",
                 mode=None, options=None):
        self._fn, self._module = fn, module
        self.fullgraph, self.dynamic, self.backend, self.mode = fullgraph, dynamic, backend, mode
        self.options = dict(options or {})
        self._entries = []          # most recent first, as torch checks them
        self._compiles = 0
        self._limit_warned = False
        self.recompile_reasons = []
        self.stats = {"calls": 0, "captures": 0, "recompiles": 0, "graph_breaks": 0,
                      "eager_calls": 0}
        target = fn.forward if isinstance(fn, Module) else fn
        try:
            functools.update_wrapper(self, target, updated=())
        except AttributeError:
            pass
        self._torchdynamo_orig_callable = fn
        self._signature = _positional_names(target)
        _compiled.add(self)

    def __get__(self, instance, owner=None):
        """``@learntorch.compile`` on a method: bound to the instance, like the function."""
        return self if instance is None else types.MethodType(self, instance)

    # ---- calling
    def __call__(self, *args, **kwargs):
        self.stats["calls"] += 1
        if kwargs or any(type(a) in (tuple, list, dict) for a in args):
            leaves, names = [], []
            spec = _flatten((list(args), kwargs), "L", leaves, names)
        else:
            leaves, spec = args, None
        for entry in self._entries:
            if entry.check(*leaves):
                entry.hits += 1
                return self._run(entry, leaves, spec, args, kwargs)
        return self._miss(leaves, spec, args, kwargs)

    def _run(self, entry, leaves, spec, args, kwargs):
        if entry.eager is not None:
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        key = (tuple(x.shape for x in leaves if isinstance(x, Tensor))
               if entry.dynamic_dims else None)
        programs = entry.paths.get(key)
        if programs is None:  # a dynamic entry meets a new size: capture again, not counted
            return self._new_path(entry, key, leaves, spec, args, kwargs, counted=False)
        for k, program in enumerate(programs):
            try:
                result = program.run(*leaves)
            except _program.BreakChanged as changed:
                last = (program, changed)
                continue
            if k:  # the path that matched goes first next time
                programs.insert(0, programs.pop(k))
            return result
        program, changed = last
        node = program.breaks[changed.k]
        reason = (f"graph break {changed.k} ({_where(node)}): Python now reads "
                  f"{changed.got!r} there, the program was captured with {node.args[2]!r}")
        if not self._may_compile(reason):
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        return self._new_path(entry, key, leaves, spec, args, kwargs, counted=True,
                              reason=reason)

    def _miss(self, leaves, spec, args, kwargs):
        reasons = [f"0/{e.index}: {r}" for e in self._entries for r in e.guards.failures(leaves)]
        if self._entries and not self._may_compile(reasons[0] if reasons else "guards failed",
                                                   reasons):
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        dynamic_dims = self._dynamic_dims(leaves)
        names = self._names(spec, leaves)
        builder = _guards.Builder(names)
        for i, (name, leaf) in enumerate(zip(names, leaves)):
            if isinstance(leaf, Tensor):
                builder.tensor(name, leaf, dynamic_dims.get(i, ()))
            else:
                builder.value(name, leaf)
        builder.global_state()
        entry = CacheEntry(self._compiles, None, dynamic_dims)
        entry.shapes = {i: tuple(x.shape) for i, x in enumerate(leaves) if isinstance(x, Tensor)}
        key = (tuple(x.shape for x in leaves if isinstance(x, Tensor)) if dynamic_dims
               else None)
        graph_or_reason = self._capture(leaves, spec, names)
        if isinstance(graph_or_reason, str):
            entry.eager = graph_or_reason
        else:
            if self._module is not None:
                builder.module(self._module, graph_or_reason)
            else:
                builder.globals(self._fn)
        entry.guards = builder.build()
        entry.check = entry.guards.check
        if self._entries:
            self.stats["recompiles"] += 1
            log("recompiles", _recompile_log(self, reasons))
        self._compiles += 1
        self._entries.insert(0, entry)
        if entry.eager is not None:
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        program = self._build(graph_or_reason)
        entry.paths[key] = [program]
        return program.run(*leaves)

    def _new_path(self, entry, key, leaves, spec, args, kwargs, counted, reason=None):
        graph = self._capture(leaves, spec, self._names(spec, leaves))
        if isinstance(graph, str):
            entry.eager = graph
            self.stats["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        if counted:
            self._compiles += 1
            self.stats["recompiles"] += 1
            log("recompiles", _recompile_log(self, [f"0/{entry.index}: {reason}"]))
        program = self._build(graph)
        entry.paths.setdefault(key, []).insert(0, program)
        return program.run(*leaves)

    def _may_compile(self, last_reason, reasons=()):
        """False (after warning once) when the recompile limit is reached."""
        from . import config
        self.recompile_reasons.extend(reasons or [last_reason])
        if self._compiles < config.recompile_limit:
            return True
        if self.fullgraph and getattr(config, "fail_on_recompile_limit_hit", False):
            raise Unsupported(f"hit config.recompile_limit ({config.recompile_limit})")
        if not self._limit_warned:
            self._limit_warned = True
            warnings.warn(
                f"learntorch._dynamo hit config.recompile_limit ({config.recompile_limit})\n"
                f"   function: {_function_name(self)} ({_location(self)})\n"
                f"   last reason: {last_reason}\n"
                "To log all recompilation reasons, use "
                "learntorch._logging.set_logs(recompiles=True).\n"
                "Calls that match none of the cache entries now run eagerly.",
                UserWarning, stacklevel=4)
        return False

    def _dynamic_dims(self, leaves):
        """Per tensor input (by position), the dims the new entry accepts in any size (module
        docstring: dynamic=)."""
        if self.dynamic is False:
            return {}
        tensors = {i: x for i, x in enumerate(leaves) if isinstance(x, Tensor)}
        if self.dynamic is True:
            dims = {i: {d for d, s in enumerate(x.shape) if s >= 2} for i, x in tensors.items()}
            return {i: d for i, d in dims.items() if d}
        if not self._entries:  # automatic: exact first ...
            return {}
        latest, dims = self._entries[0], {}
        for i, x in tensors.items():  # ... then dynamic where only sizes changed
            old = latest.shapes.get(i)
            if old is None or len(old) != len(x.shape):
                continue
            changed = {d for d, (a, b) in enumerate(zip(old, x.shape)) if a != b and b >= 2}
            if changed:
                dims[i] = changed | set(latest.dynamic_dims.get(i, ()))
        return dims

    def _names(self, spec, leaves):
        """The placeholders' names: the parameter names, ``x_0`` inside a tuple, a keyword's
        name for a keyword argument."""
        if spec is None:
            return [self._leaf_name(i) for i in range(len(leaves))]
        (_, positional), (_, keywords) = spec[1]
        out = []
        for i, s in enumerate(positional):
            out += _names_of(s, self._leaf_name(i))
        for key, s in keywords:
            out += _names_of(s, _ident(key))
        return _unique_names(out)

    def _leaf_name(self, i):
        return self._signature[i] if i < len(self._signature) else f"arg{i}"

    # ---- capturing and building
    def _capture(self, leaves, spec, names):
        """The graph of one call on ``leaves`` -- or, when it cannot be replayed, the reason
        (a string) to run eagerly.  The call leaves no trace (module docstring)."""
        fn = self._fn

        def flat(*values):
            if spec is None:
                return fn(*values)
            args, kwargs = _unflatten(spec, iter(values))
            return fn(*args, **kwargs)
        flat.__wrapped__ = fn  # the tracer records print() in fn's module

        on_break = self._on_break if self.fullgraph else None
        buffers = ([(b, b.detach().clone()) for _, b in self._module.named_buffers()]
                   if self._module is not None else [])
        rng = _random.get_rng_state()
        self.stats["captures"] += 1
        _compiling.append(self)
        try:
            graph = trace(flat, list(leaves), module=self._module, input_names=names,
                          python=True, on_break=on_break, quiet=True)
        except CaptureError as e:
            return self._unsupported(f"the capture failed: {e}", None, rng)
        finally:
            _compiling.pop()
            from ..autograd import grad_mode
            with grad_mode.no_grad():
                for b, saved in buffers:
                    b.copy_(saved)
        if graph.meta.get("random"):
            return self._unsupported("the function draws random numbers (dropout in training "
                                     "mode? torch.rand?): a replay would repeat the numbers of "
                                     "the capture", None, rng)
        breaks = [n for n in graph.nodes if n.meta.get("python") and n.meta["python"] != "print"]
        if breaks:
            first_break = graph.nodes.index(breaks[-1])
            for node in graph.nodes[:first_break]:
                if node.is_impure() and node.op == "call_function":
                    return self._unsupported(
                        f"{node.name} ({node.op_name}) changes state before a graph break "
                        f"({_where(breaks[-1])}): replaying it again when the break goes "
                        "another way would change it twice", breaks[-1], rng)
        self.stats["graph_breaks"] += sum(1 for n in graph.nodes if n.meta.get("python"))
        for node in graph.nodes:
            if node.meta.get("python"):
                log("graph_breaks", f"Graph break in user code at {_where(node)}\n"
                                    f"Reason: {break_message(node.meta['python'])}")
        return graph

    def _unsupported(self, reason, node, rng):
        _random.set_rng_state(rng)  # the eager run draws the same numbers as without compile
        if self.fullgraph:
            raise Unsupported(reason)
        warnings.warn(f"learntorch.compile: {_function_name(self)} runs eagerly under these "
                      f"guards: {reason}", UserWarning, stacklevel=5)
        return reason

    def _on_break(self, how, where):
        raise Unsupported(break_message(how), where=where)

    def _build(self, graph):
        backend = self.backend
        if callable(backend):
            run = backend(graph, [])
            return _program.Program(graph, graph, [], [], "", run, [])
        kernels = "reference" if backend == "reference" else "numba"
        fuse = backend != "eager" and _program.uses_engine_backend()
        fused_graph, groups = (fusion.fuse(graph, self.options.get("fusion")) if fuse
                               else fusion.fuse(graph, lambda g: []))
        name = _ident(getattr(self, "__name__", "forward"))
        # the entry's guards hold grad mode: a program built with it off never records
        program = _program.build(graph, fused_graph, groups, kernels, name,
                                  parallel=self.mode == "max-autotune",
                                  records=grad_mode.is_grad_enabled(),
                                  freeze=fuse and bool(self.options.get("freezing")))
        log("output_code", "Output code:\n" + program.code +
            "".join("\n" + k.text for k in program.kernels))
        return program

    # ---- introspection
    @property
    def programs(self):
        return [p for e in reversed(self._entries) for p in e.programs]

    @property
    def graphs(self):
        return [p.graph for p in self.programs]

    @property
    def code(self):
        programs = self.programs
        return programs[-1].code if programs else None

    @property
    def kernels(self):
        programs = self.programs
        return programs[-1].kernels if programs else []

    @property
    def guards(self):
        return self._entries[0].guards.code if self._entries else None

    @property
    def cache_entries(self):
        return list(self._entries)

    def reset(self):
        """Forget every cache entry (the next call captures again)."""
        self._entries.clear()
        self._compiles = 0
        self._limit_warned = False

    def __repr__(self):
        return (f"<compiled {_function_name(self)}: {len(self._entries)} cache "
                f"entr{'y' if len(self._entries) == 1 else 'ies'}, backend={self.backend!r}>")


class OptimizedModule(Module):
    """A compiled module (torch's class name): calls run the compiled program; the original
    is ``_orig_mod`` (so state_dict keys start with ``_orig_mod.``, as in torch)."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)
        self.training = mod.training

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


# ---------------------------------------------------------------- small helpers
def _positional_names(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _names_of(spec, name):
    if spec is None:
        return [name]
    kind, items = spec
    if kind is dict:
        return [n for k, s in items for n in _names_of(s, f"{name}_{_ident(k)}")]
    return [n for i, s in enumerate(items) for n in _names_of(s, f"{name}_{i}")]


def _unique_names(names):
    seen, out = set(), []
    for n in names:
        candidate, i = n, 0
        while candidate in seen:
            i += 1
            candidate = f"{n}_{i}"
        seen.add(candidate)
        out.append(candidate)
    return out


def _function_name(compiled):
    fn = compiled._fn
    if isinstance(fn, Module):
        return f"'{type(fn).__name__}.forward'"
    return f"'{getattr(fn, '__qualname__', getattr(fn, '__name__', 'fn'))}'"


def _location(compiled):
    fn = compiled._fn.forward if isinstance(compiled._fn, Module) else compiled._fn
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else "<unknown>"


def _where(node):
    where = node.meta.get("where")
    return f"{where}: {where.line}" if where else node.name


def _recompile_log(compiled, reasons):
    lines = [f"Recompiling function {_function_name(compiled)[1:-1]} in {_location(compiled)}",
             "    triggered by the following guard failure(s):"]
    lines += [f"    - {r}" for r in reasons]
    return "\n".join(lines)


def is_compiling():
    """True while learntorch.compile captures a function (torch.compiler.is_compiling)."""
    return bool(_compiling)


def reset():
    """Forget every compiled function's cache entries and the kernels loaded in memory."""
    from . import cache
    for compiled in list(_compiled):
        compiled.reset()
    cache.clear_memory()


