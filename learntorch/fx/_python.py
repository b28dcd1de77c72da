"""What Python does with tensors during a capture: ``capture(..., python=True)``.

A captured graph replays the engine's ops; the Python code *between* them does not run
again.  That is only right while Python computes nothing the graph would need.  Three
things break that promise, and with ``python=True`` (what ``learntorch.compile`` asks
for) the capture records each of them instead of freezing it:

* **Python reads a tensor's value** -- ``bool(t)`` (an ``if``), ``t.item()``,
  ``t.tolist()``, ``t.numpy()``, ``float(t)``, ``int(t)``, formatting or printing
  ``t``.  What Python does next depends on what it read, so the graph holds a
  ``python_value(t, how, expected)`` node: on replay it reads the value again and
  raises ``PathChanged`` if Python would now see something else (another branch of
  the ``if``).  torch's Dynamo calls this a *graph break*: the graph ends, Python runs,
  a new graph starts.
* **Python prints** -- ``print(...)`` is a side effect a replay would lose, so it
  becomes a ``python_print(args, kwargs)`` node that prints again on every replay.
  (Seen in the captured code's own module: ``print`` is wrapped in its globals, not
  in ``builtins``, where every library would see the wrapper.)
* **In-place writes without autograd** -- ``x += 1`` on a tensor that needs no
  gradient computes ``x + 1`` (a recorded op) and writes it into ``x``'s memory, which
  no op records.  The write is recorded as what it is: ``x`` is that op's result from
  then on, and when ``x`` is an input or a buffer of the module, a ``copy_into`` node
  at the end writes the final value back (torch's AOTAutograd does the same:
  "functionalization", with the input mutations applied in an epilogue).
* **Ops that are not Functions** -- comparisons, logical ops, ``all``/``any``,
  ``argmax``/``argmin``, ``detach``: they make no autograd node (their results never
  require grad), so ``Function.apply`` never sees them.  While capturing, each place
  the engine binds them (``learntorch.gt``, ``Tensor.__gt__``, ``Tensor.gt``, ...) is
  wrapped so that the call is recorded with the function as the node's target.

Each recorded read or print keeps, in ``node.meta["where"]``, the line of *your* code
that did it (the first frame outside learntorch): the line a graph-break message names.
"""
import builtins
import inspect
import math
import operator
import os
import sys
import linecache
from typing import NamedTuple

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PathChanged(RuntimeError):
    """Replaying a graph, Python would now read another value than during capture: the
    code would take another path (another branch of an ``if``) than the one recorded."""

    def __init__(self, node_name, how, expected, got, where):
        self.node_name, self.how, self.expected, self.got, self.where = (
            node_name, how, expected, got, where)
        super().__init__(f"{how}() of {node_name} is {got!r} now, but was {expected!r} when "
                         f"the graph was captured ({where}): the code takes another path; "
                         "capture it again")


class Where(NamedTuple):
    """A line of the user's code: the first frame outside learntorch."""

    filename: str
    lineno: int
    function: str
    line: str

    def __str__(self):
        return f'File "{self.filename}", line {self.lineno}, in {self.function}'


def user_frame():
    """Where the user's code is now: the innermost frame whose file is not learntorch's."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR + os.sep):
        frame = frame.f_back
    if frame is None:
        return Where("<unknown>", 0, "<unknown>", "")
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    line = linecache.getline(filename, lineno, frame.f_globals).strip()
    return Where(filename, lineno, frame.f_code.co_name, line)


# ---------------------------------------------------------------- the targets of the nodes
def _read(tensor, how):
    """``tensor`` read as Python reads it: ``"bool"`` is ``bool(tensor)``, ``("format", ".3f")``
    is ``format(tensor, ".3f")``, ``"item"`` is ``tensor.item()``, ..."""
    if isinstance(how, tuple):  # ("format", spec)
        return format(tensor, how[1])
    reader = _READERS[how]
    return reader(tensor)


_READERS = {"bool": bool, "float": float, "int": int, "index": operator.index,
            "repr": repr, "str": str,
            "item": lambda t: t.item(), "tolist": lambda t: t.tolist(),
            "numpy": lambda t: np.array(t.detach().numpy(), copy=True),
            "__array__": lambda t: np.array(t.detach().numpy(), copy=True)}


def python_value(tensor, how, expected):
    """Read ``tensor`` as the captured code did and check that Python sees what it saw then.

    The node's ``meta["where"]`` says which line read it; ``PathChanged`` when the value
    differs (the code would go another way).  Returns the value.
    """
    got = _read(tensor, how)
    if not same_value(got, expected):
        raise PathChanged("the tensor", how if isinstance(how, str) else how[0], expected,
                          got, "")
    return got


def python_print(args, kwargs):
    """``print(*args, **kwargs)``: the print a captured function made, made again."""
    print(*args, **kwargs)


def copy_into(destination, value):
    """``destination.copy_(value)`` without recording: an input or buffer that the captured
    code changed in place gets its final value (the replay computed it out of place)."""
    from ..autograd import grad_mode
    with grad_mode.no_grad():
        destination.copy_(value)


def same_value(a, b):
    """Equal as Python would act on them: numbers (NaN equals NaN: the same path), strings,
    lists, arrays of the same dtype and values."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same_value(x, y) for x, y in zip(a, b)))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


# ---------------------------------------------------------------- the patches
_READ_METHODS = {"item": "item", "tolist": "tolist", "numpy": "numpy", "__array__": "__array__",
                 "__float__": "float", "__int__": "int", "__index__": "index",
                 "__bool__": "bool", "__repr__": "repr", "__str__": "str"}


class Watch:
    """Install / remove the wrappers above (once, however nested the captures)."""

    installed = 0
    saved = []     # (owner, attribute, original value), to put back
    shadowed = []  # the user's globals given a recording ``print``

    @classmethod
    def install(cls, current, scopes=()):
        """``current()`` returns the tracer recording now (or None); ``scopes`` are the
        globals of the user's code, where ``print`` is wrapped (not in ``builtins``: a
        library imported during the capture must see the real one)."""
        cls.installed += 1
        if cls.installed > 1:
            return
        from .._tensor import Tensor
        patches = []
        for method, how in _READ_METHODS.items():
            patches.append((Tensor, method, _reading(Tensor.__dict__[method], how, current)))
        patches.append((Tensor, "__format__", _formatting(Tensor.__dict__["__format__"], current)))
        printing = _printing(builtins.print, current)
        for scope in scopes:
            if "print" not in scope:
                scope["print"] = printing
                cls.shadowed.append(scope)
        for owner, name, fn, canonical in _plain_op_bindings():
            patches.append((owner, name, _recording(fn, canonical, current)))
        for owner, name, fn in _inplace_bindings():
            patches.append((owner, name, _writing(fn, current)))
        for owner, name, value in patches:
            cls.saved.append((owner, name, owner.__dict__[name]))
            setattr(owner, name, value)

    @classmethod
    def remove(cls):
        cls.installed -= 1
        if cls.installed:
            return
        while cls.saved:
            owner, name, value = cls.saved.pop()
            setattr(owner, name, value)
        while cls.shadowed:
            cls.shadowed.pop().pop("print", None)


def _idle(tracer):
    return tracer is None or tracer.depth or tracer.paused


def _reading(original, how, current):
    def read(self, *args, **kwargs):
        tracer = current()
        if _idle(tracer):
            return original(self, *args, **kwargs)
        tracer.depth += 1  # bool() calls item(): one read, not two
        try:
            value = original(self, *args, **kwargs)
        finally:
            tracer.depth -= 1
        tracer.read_value(self, how, value)
        return value
    read.__name__ = original.__name__
    return read


def _formatting(original, current):
    def format_(self, spec):
        tracer = current()
        if _idle(tracer):
            return original(self, spec)
        tracer.depth += 1
        try:
            value = original(self, spec)
        finally:
            tracer.depth -= 1
        tracer.read_value(self, ("format", spec), value)
        return value
    return format_


def _printing(original, current):
    def print_(*args, **kwargs):
        tracer = current()
        if _idle(tracer):
            return original(*args, **kwargs)
        tracer.python_print(args, kwargs)
        if tracer.quiet:
            return None
        tracer.depth += 1  # printing a tensor reads it: that is the print's own business
        try:
            return original(*args, **kwargs)
        finally:
            tracer.depth -= 1
    return print_


_signatures = {}


def _recording(binding, canonical, current):
    """``binding`` (what the owner held) recording a node whose target is ``canonical``."""
    def op(*args, **kwargs):
        tracer = current()
        if _idle(tracer):
            return binding(*args, **kwargs)
        tracer.depth += 1  # what the op calls inside is its own
        try:
            out = binding(*args, **kwargs)
        finally:
            tracer.depth -= 1
        if out is NotImplemented:
            return out
        signature = _signatures.get(canonical)
        if signature is None:  # once per op and process, for the ops a capture meets
            signature = _signatures[canonical] = inspect.signature(canonical)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        tracer.record(canonical, tuple(bound.arguments.values()), out)
        return out
    op.__name__ = getattr(binding, "__name__", canonical.__name__)
    op.__wrapped__ = binding
    return op


def _writing(original, current):
    """``apply_inplace`` that lets the tracer see the write (module docstring)."""
    def apply_inplace(x, recorded, fast=None, *args, **kwargs):
        tracer = current()
        if _idle(tracer):
            return original(x, recorded, fast, *args, **kwargs)
        before = len(tracer.graph.nodes)
        # without ``fast`` the new values are computed by ``recorded`` -- an op the tracer
        # records -- and then stored (the fast path would write them unseen)
        result = original(x, recorded, None, *args, **kwargs)
        tracer.wrote_in_place(x, tracer.graph.nodes[before:])
        return result
    return apply_inplace


_inplace_found = (None, None)  # (the modules looked through, what was found)


def _inplace_bindings():
    """Every module-level name of learntorch bound to ``ops._inplace.apply_inplace`` (looked
    for again only when learntorch's modules are not the ones looked through last time)."""
    global _inplace_found
    from ..ops import _inplace
    original = _inplace.apply_inplace
    modules = [m for name, m in list(sys.modules.items())
               if name.startswith("learntorch") and m is not None]
    seen, found = _inplace_found
    if seen is None or len(seen) != len(modules) or any(a is not b for a, b in zip(seen, modules)):
        found = [(module, name, value) for module in modules
                 for name, value in list(vars(module).items()) if value is original]
        _inplace_found = (modules, found)
    return found


_bindings = None


def _plain_op_bindings():
    """``(owner, attribute, what it holds, canonical function)`` for every place the engine
    binds one of its plain (non-Function) ops: found by identity, so an alias
    (``greater`` is ``gt``) or a method (``Tensor.gt``) is found with the function."""
    global _bindings
    if _bindings is None:
        import learntorch
        from .._tensor import Tensor
        from ..ops import comparison, reductions
        from .op_kinds import FUNCTION_KINDS, PYTHON
        names = {n for kind, names in FUNCTION_KINDS.items() if kind != PYTHON
                 for n in names.split()}
        canonical = {}
        for module in (comparison, reductions):
            for name in names:
                fn = module.__dict__.get(name)
                if fn is not None:
                    canonical[id(fn)] = fn
        canonical[id(Tensor.__dict__["detach"])] = Tensor.__dict__["detach"]
        found = []
        for owner in (learntorch, comparison, reductions, Tensor):
            for name, value in list(vars(owner).items()):
                fn = canonical.get(id(value))
                if fn is not None:
                    found.append((owner, name, value, fn))
        # == and != are wrappers that give NotImplemented for non-tensors (t == None)
        by_name = {fn.__name__: fn for fn in canonical.values()}
        for name in ("__eq__", "__ne__"):
            found.append((Tensor, name, Tensor.__dict__[name], by_name[name.strip("_")]))
        _bindings = found
    return _bindings
