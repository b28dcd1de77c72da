"""Guards: the conditions under which a compiled program may be replayed.

A program was captured from one call.  It computes the right thing for another call
only if everything the capture *assumed* still holds.  Each assumption is a guard:

* for each input tensor: its type, dtype, device, ``requires_grad``, number of
  dimensions, sizes (all of them, or all but the *dynamic* ones) and layout
  (contiguous or the strides it had) -- a ``view`` recorded a size, an op a dtype;
* for each input that is not a tensor: its value (``n == 3``);
* global state: grad mode (a program captured without grad records no graph),
  the default dtype, which backend runs the ops, and the autocast region the call is
  in (a graph captured in one holds its casts; one captured outside holds none);
* for a module: each parameter and buffer is still the same tensor object (their
  *values* may change -- an optimizer step -- but a replaced tensor is another
  input), and the module attributes its ``forward`` reads (``self.training`` of a
  Dropout, a ``self.scale``) keep their values;
* for a function: the globals and closure variables its code reads keep their values
  (when they are plain numbers, strings, booleans or None).

All guards of one cache entry are checked by one generated expression (``code``),
``and``-ed together, so a call that hits the cache pays for one function call.  When
it fails, ``failures`` checks them one by one and says which failed, in torch's words
(``tensor 'x' size mismatch at index 0. expected 3, actual 4``) -- the reasons a
recompilation prints.

torch's Dynamo guards the same things (its guards are written as C++ for speed).  What
it guards that learntorch does not: the attributes of every object the code touches,
and Python values read by functions the compiled code calls.
"""
import types

import numpy as np

from .. import _dtypes, backends
from .._tensor import Tensor
from ..amp import autocast_mode as _autocast_mode
from ..autograd import grad_mode

#: torch's short dtype names, used in its guard messages (``dtype mismatch. expected Float``)
TORCH_DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                     "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                     "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_MISSING = object()


class Guard:
    """One assumption: a Python expression over the inputs and the guard namespace, and a
    function that says, in words, how a call broke it."""

    def __init__(self, code, explain):
        self.code, self.explain = code, explain

    def __repr__(self):
        return f"Guard({self.code})"


class GuardSet:
    """The guards of one cache entry, checked together by ``check(*leaves)``."""

    def __init__(self, arg_names, guards, namespace):
        self.arg_names, self.guards = list(arg_names), guards
        self.namespace = namespace
        conditions = [g.code for g in guards] or ["True"]
        self.code = (f"def check_guards({', '.join(self.arg_names)}):\n    return (\n        "
                     + "\n        and ".join(conditions) + ")\n")
        scope = dict(namespace)
        exec(compile(self.code, "<learntorch.compile guards>", "exec"), scope)  # noqa: S102
        self.check = scope["check_guards"]

    def failures(self, leaves):
        """The guards ``leaves`` break, each as a sentence (an empty list: none)."""
        scope = dict(self.namespace, **dict(zip(self.arg_names, leaves)))
        reasons = []
        for g in self.guards:
            try:
                ok = eval(g.code, scope)  # noqa: S307  (our own generated expression)
            except Exception:  # noqa: BLE001  (an earlier guard of the same input failed)
                ok = False
            if not ok:
                reason = g.explain(scope)
                if reason and reason not in reasons:
                    reasons.append(reason)
        return reasons

    def __len__(self):
        return len(self.guards)


def torch_dtype_name(dtype):
    return TORCH_DTYPE_NAMES.get(dtype.name, dtype.name)


def simple_value(value):
    """True for values a guard can compare: None, bool, int, float, str, and tuples of them."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    return type(value) is tuple and all(simple_value(v) for v in value)


class Builder:
    """Collects guards and the names their expressions use."""

    def __init__(self, arg_names):
        self.arg_names = list(arg_names)
        self.guards = []
        self.namespace = {"_grad_state": grad_mode._state, "_get_default_dtype":
                          _dtypes.get_default_dtype, "_backends": backends, "_MISSING": _MISSING,
                          "_autocast_state": _autocast_mode._State}
        self._count = 0

    def name(self, value, hint="g"):
        self._count += 1
        name = f"_{hint}{self._count}"
        self.namespace[name] = value
        return name

    def add(self, code, explain):
        self.guards.append(Guard(code, explain))

    def build(self):
        return GuardSet(self.arg_names, self.guards, self.namespace)

    # ---- inputs
    def tensor(self, name, t, dynamic_dims=()):
        """Guards on input tensor ``name`` (module docstring); sizes in ``dynamic_dims`` may vary."""
        cls = self.name(type(t), "type")
        self.add(f"type({name}) is {cls}",
                 lambda s, name=name, kind=type(t): (
                     f"expected type of '{name}' to be a tensor type, but found "
                     f"{type(s[name])}" if not isinstance(s[name], Tensor) else
                     f"tensor '{name}' type mismatch. expected {kind.__name__}, actual "
                     f"{type(s[name]).__name__}"))
        dtype = self.name(t.dtype, "dtype")
        self.add(f"{name}._dtype is {dtype}",
                 lambda s, name=name, d=t.dtype: (f"tensor '{name}' dtype mismatch. expected "
                                                  f"{torch_dtype_name(d)}, actual "
                                                  f"{torch_dtype_name(s[name].dtype)}"))
        device = self.name(t.device, "device")
        self.add(f"{name}._device == {device}",
                 lambda s, name=name, d=t.device: (f"tensor '{name}' device mismatch. expected "
                                                   f"{d}, actual {s[name].device}"))
        rg = bool(t.requires_grad)
        self.add(f"{name}._requires_grad is {rg}",
                 lambda s, name=name, rg=rg: (f"tensor '{name}' requires_grad mismatch. expected "
                                              f"requires_grad={int(rg)}"))
        shape = tuple(t.shape)
        dynamic = set(dynamic_dims)
        if dynamic:
            parts = [f"len({name}._data.shape) == {len(shape)}"]
            for d, size in enumerate(shape):
                parts.append(f"{name}._data.shape[{d}] >= 2" if d in dynamic
                             else f"{name}._data.shape[{d}] == {size}")
            code = " and ".join(parts)
        else:
            code = f"{name}._data.shape == {shape!r}"
        self.add(code, lambda s, name=name, shape=shape, dynamic=frozenset(dynamic):
                 _shape_reason(name, shape, tuple(s[name].shape), dynamic))
        a = t._data
        if a.__class__ is np.ndarray and a.flags.c_contiguous:
            self.add(f"{name}._data.flags.c_contiguous",
                     lambda s, name=name: _stride_reason(name, None, s[name]))
        elif a.__class__ is np.ndarray:
            strides = a.strides
            self.add(f"{name}._data.strides == {strides!r}",
                     lambda s, name=name, t=t: _stride_reason(name, t.stride(), s[name]))

    def value(self, name, value):
        """Guard on a non-tensor input: its type and value (or its identity)."""
        if simple_value(value):
            self.add(f"type({name}) is {type(value).__name__} and {name} == {value!r}",
                     lambda s, name=name, v=value: f"L['{name}'] == {v!r}")
        else:
            obj = self.name(value, "obj")
            self.add(f"{name} is {obj}",
                     lambda s, name=name: f"L['{name}'] is not the object compiled with")

    # ---- global state
    def global_state(self):
        enabled = grad_mode._state.enabled
        self.add(f"_grad_state.enabled is {bool(enabled)}",
                 lambda s: "GLOBAL_STATE changed: grad_mode")
        default = self.name(_dtypes.get_default_dtype(), "dtype")
        self.add(f"_get_default_dtype() is {default}",
                 lambda s: "GLOBAL_STATE changed: default_dtype")
        # an autocast region casts the ops' inputs (its policy table, one object per set of
        # enabled devices and dtypes): the graph recorded those casts, or recorded none
        autocast = self.name(_autocast_mode._State.active, "autocast")
        self.add(f"_autocast_state.active is {autocast}",
                 lambda s: "GLOBAL_STATE changed: autocast")
        backend = self.name(backends.current.__class__, "backend")
        self.add(f"_backends.current.__class__ is {backend}",
                 lambda s, b=backends.current.__class__: (
                     f"learntorch.backends.current changed: expected {b.__name__}, actual "
                     f"{backends.current.__class__.__name__}"))

    # ---- a module and what forward reads
    def module(self, module, graph):
        mod = self.name(module, "mod")
        paths = {}
        for path, sub in module.named_modules():
            paths[path] = _module_accessor(mod, path)
        for node in graph.nodes:
            if node.op != "get_attr" or node.meta.get("attribute") not in ("parameter", "buffer"):
                continue
            owner, _, leaf = node.target.rpartition(".")
            registry = "_parameters" if node.meta["attribute"] == "parameter" else "_buffers"
            if owner not in paths:
                continue
            tensor = graph.attributes[node.target]
            same = self.name(tensor, "attr")
            accessor = f"{paths[owner]}.{registry}.get({leaf!r})"
            shown = _shown(f"fn{_torch_path(owner)}.{registry}[{leaf!r}]")
            self.add(f"{accessor} is {same}",
                     lambda s, shown=shown: f"{shown} is not the tensor the function was "
                                            "compiled with (it was replaced)")
            rg = bool(tensor.requires_grad)
            self.add(f"{same}._requires_grad is {rg}",
                     lambda s, target=node.target, rg=rg: (
                         f"tensor 'fn.{target}' requires_grad mismatch. expected "
                         f"requires_grad={int(rg)}"))
        for path, sub in module.named_modules():
            forward = getattr(type(sub), "forward", None)
            code = getattr(forward, "__code__", None)
            if code is None:
                continue
            for attr in sorted(code_names(code)):
                if attr in sub.__dict__ and simple_value(sub.__dict__[attr]):
                    value = sub.__dict__[attr]
                    self.add(f"type({paths[path]}.__dict__.get({attr!r})) is "
                             f"{type(value).__name__} and {paths[path]}.{attr} == {value!r}",
                             lambda s, shown=_shown(f"fn{_torch_path(path)}.{attr}"), v=value:
                             f"{shown} == {v!r}")
            self.globals(forward)

    def globals(self, fn):
        """Guards on the plain-valued globals and closure variables ``fn``'s code reads."""
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        g = getattr(fn, "__globals__", {})
        scope = self.name(g, "G")
        for name in sorted(code_names(code)):
            if name in g and simple_value(g[name]) and not name.startswith("__"):
                value = g[name]
                self.add(f"type({scope}.get({name!r}, _MISSING)) is {type(value).__name__} "
                         f"and {scope}[{name!r}] == {value!r}",
                         lambda s, name=name, v=value: f"G[{name!r}] == {v!r}")
        for var, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if simple_value(value):
                c = self.name(cell, "cell")
                self.add(f"type({c}.cell_contents) is {type(value).__name__} and "
                         f"{c}.cell_contents == {value!r}",
                         lambda s, var=var, v=value: f"L[{var!r}] == {v!r} (a closure variable)")


def code_names(code):
    """The names a code object and the functions defined inside it refer to (globals and
    attributes alike: ``co_names``)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


def _module_accessor(mod, path):
    accessor = mod
    for part in path.split(".") if path else ():
        accessor += f"._modules[{part!r}]"
    return accessor


def _torch_path(path):
    return "".join(f"._modules[{part!r}]" for part in path.split(".")) if path else ""


def _shown(text):
    return text


def _shape_reason(name, expected, actual, dynamic):
    if len(expected) != len(actual):
        return f"tensor '{name}' rank mismatch. expected {len(expected)}, actual {len(actual)}"
    for d, (e, a) in enumerate(zip(expected, actual)):
        if d in dynamic:
            if a < 2:
                return (f"tensor '{name}' size mismatch at index {d}. expected a dynamic size "
                        f"(2 or more), actual {a}")
        elif e != a:
            return f"tensor '{name}' size mismatch at index {d}. expected {e}, actual {a}"
    return None


def _stride_reason(name, expected, actual):
    if expected is None:  # contiguous strides of the actual shape
        expected, running = [], 1
        for size in reversed(actual.shape):
            expected.insert(0, running)
            running *= max(size, 1)
        expected = tuple(expected)
    got = actual.stride()
    for d, (e, a) in enumerate(zip(expected, got)):
        if e != a:
            return f"tensor '{name}' stride mismatch at index {d}. expected {e}, actual {a}"
    return f"tensor '{name}' stride mismatch. expected {expected}, actual {got}"
