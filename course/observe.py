"""Plain observations about *how* a learner's code does its job, for the "how" checks.

An exercise may ask for more than a right answer: "do not call F.cross_entropy",
"save what backward needs with ctx.save_for_backward", "the error message names
both shapes".  The checks of ``course.checks`` turn such a rule into a plain
observation -- a string, a list, a number -- and compare it with what the rule
expects, like any other answer.  This module makes the observations; it never
decides a verdict itself.

* ``uses(code, forbidden)`` reads the compiled code of a function (or of every
  method a class defines) and lists what it refers to from ``forbidden``: the
  names of globals, attributes and imports (``F.cross_entropy``, ``x.logsumexp``,
  ``torch``), and objects reached under another name (``ce = F.cross_entropy``
  in another cell, then ``ce(...)``).  Local variables never count, so a local
  called ``grad`` is not ``x.grad``.  Nothing is run, and no source file is
  needed: it works in a notebook, a script or a grader alike.
* ``spying(places)`` replaces functions and methods for the duration of a
  ``with`` block by wrappers that record each call and then do the real work:
  what the learner's code called, however it reached the function.
* ``tensor_attributes(obj)`` names the attributes of an object (an autograd
  ``ctx``) that hold tensors, alone or in a list, tuple or dict.
* ``missing_mentions(message, mentions)`` lists the facts an error message
  leaves out (a shape, a size, a dimension), matched the way people write them.
"""
import contextlib
import dis
import functools
import inspect
import re
import types

__all__ = ["uses", "spying", "missing_mentions", "resolve", "tensor_attributes"]

# the instructions that load a name: from globals (or builtins), from the function's own
# variables (or an enclosing function's), and an attribute of what was loaded before
_GLOBAL_LOADS = {"LOAD_GLOBAL", "LOAD_NAME"}
_LOCAL_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK",
                "LOAD_FAST_AND_CLEAR", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"}
_ATTRIBUTE_LOADS = {"LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"}
_MISSING = object()


class Reference:
    """One thing the code refers to: ``F.cross_entropy`` on line 4.

    ``parts`` are the dotted name's components; ``local`` is True when the first one
    is a local variable (so only the attributes after it are names of the program);
    ``values`` holds, per prefix, the object it is when that can be known without
    running the code (a global and its attributes), else ``_MISSING``.
    """

    __slots__ = ("parts", "line", "local", "values")

    def __init__(self, parts, line, local, values):
        self.parts, self.line, self.local, self.values = parts, line, local, values

    @property
    def dotted(self):
        return ".".join(self.parts)

    def names(self):
        """The components that name something of the program (not a local variable)."""
        return self.parts[1:] if self.local else self.parts

    def __repr__(self):
        return f"Reference({self.dotted!r}, line {self.line})"


def _functions(code):
    """The functions whose code ``code`` stands for: itself, or every function, static
    method, class method and property a class defines in its own body."""
    if isinstance(code, type):
        found = []
        for value in vars(code).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                found += [f for f in (value.fget, value.fset, value.fdel) if f is not None]
            elif isinstance(value, (types.FunctionType, type)) and value is not code:
                found += _functions(value) if isinstance(value, type) else [value]
        return found
    if isinstance(code, types.MethodType):
        code = code.__func__
    if isinstance(code, functools.partial):
        return _functions(code.func)
    if not isinstance(code, types.FunctionType):
        # an object whose class holds the code: a module instance, a callable object
        return _functions(type(code)) if callable(code) else []
    return [code]


def _code_objects(code):
    """``code`` and every code object nested in it (inner functions, lambdas, comprehensions)."""
    todo = [code]
    while todo:
        current = todo.pop()
        yield current
        todo.extend(const for const in current.co_consts if isinstance(const, types.CodeType))


def _global(function, name):
    if name in function.__globals__:
        return function.__globals__[name]
    builtins = function.__globals__.get("__builtins__", {})
    builtins = builtins if isinstance(builtins, dict) else vars(builtins)
    return builtins.get(name, _MISSING)


def static_attribute(value, name):
    """``value.name`` without running a property or a class's ``__getattr__``
    (``inspect.getattr_static``) -- except a module's ``__getattr__``, which makes the
    attributes a module loads on first use (``learntorch.compile``, ``learntorch.fx``)."""
    try:
        return inspect.getattr_static(value, name)
    except AttributeError:
        if isinstance(value, types.ModuleType):
            return getattr(value, name)
        raise


def _attribute(value, name):
    if value is _MISSING:
        return _MISSING
    try:
        return static_attribute(value, name)
    except AttributeError:
        return _MISSING


def references(code):
    """Every dotted name the code of ``code`` loads, as ``Reference`` objects, in code order."""
    found = []
    for function in _functions(code):
        for code_object in _code_objects(function.__code__):
            chain = None
            for instruction in dis.get_instructions(code_object):
                name = instruction.argval
                line = getattr(getattr(instruction, "positions", None), "lineno", None)
                if instruction.opname in _ATTRIBUTE_LOADS:
                    if chain is None:  # an attribute of a computed value: f(t).backward
                        chain = Reference([""], line, True, [_MISSING])
                    chain.parts.append(name)
                    chain.values.append(_attribute(chain.values[-1], name))
                    continue
                if chain is not None:
                    found.append(chain)
                    chain = None
                if instruction.opname in _GLOBAL_LOADS:
                    chain = Reference([name], line, False, [_global(function, name)])
                elif instruction.opname in _LOCAL_LOADS:
                    chain = Reference([name], line, True, [_MISSING])
                elif instruction.opname == "IMPORT_NAME":
                    chain = Reference(name.split("."), line, False, [_MISSING] * len(name.split(".")))
            if chain is not None:
                found.append(chain)
    return found


def resolve(dotted, namespace):
    """The object ``dotted`` (``"F.cross_entropy"``) names in ``namespace`` (a dict of globals).

    >>> import math
    >>> resolve("math.sqrt", {"math": math}) is math.sqrt
    True
    """
    head, *rest = dotted.split(".")
    if head not in namespace:
        raise NameError(f"{dotted!r}: {head!r} is not defined where the learner's code runs")
    value = namespace[head]
    for part in rest:
        value = static_attribute(value, part)
    return value


def _same(a, b):
    """``a`` is ``b``, seeing through static and class methods (as a class's dict holds them)."""
    unwrap = (lambda v: v.__func__ if isinstance(v, (staticmethod, classmethod)) else v)
    return unwrap(a) is unwrap(b)


def uses(code, forbidden, namespace=None):
    """What the code of ``code`` refers to from ``forbidden``, as sorted, readable strings
    like ``"F.cross_entropy (line 4)"``; ``[]`` when it uses none of them.

    ``forbidden`` lists dotted names: ``"logsumexp"`` matches any global, attribute or
    import of that name (``torch.logsumexp``, ``x.logsumexp()``, ``import logsumexp``);
    ``"F.cross_entropy"`` matches the name ``cross_entropy`` too, and also the object
    ``F.cross_entropy`` reached under any other name (``ce = F.cross_entropy``).  The
    objects are looked up in ``namespace`` (default: the globals of ``code``); a name
    that is not defined there is matched by name only.

    >>> import math
    >>> def hypotenuse(a, b):
    ...     root = math.sqrt
    ...     return root(a * a + b * b)
    >>> uses(hypotenuse, ["sqrt", "hypot"])
    ['math.sqrt (line 2)']
    """
    functions = _functions(code)
    if namespace is None:
        namespace = functions[0].__globals__ if functions else {}
    names, objects = set(), []
    for entry in forbidden:
        names.add(entry.rsplit(".", 1)[-1])
        try:
            objects.append((entry, resolve(entry, namespace)))
        except (NameError, AttributeError):
            pass
    hits = []
    for ref in references(code):
        by_name = names.intersection(ref.names())
        by_object = [entry for entry, obj in objects
                     if any(v is not _MISSING and _same(v, obj) for v in ref.values)]
        if by_name or by_object:
            also = [e for e in by_object if e.rsplit(".", 1)[-1] not in ref.parts]
            text = ref.dotted + (f" (= {', '.join(also)})" if also else "")
            hits.append((ref.line or 0, f"{text} (line {ref.line})" if ref.line else text))
    return [text for _, text in sorted(set(hits))]


@contextlib.contextmanager
def spying(places, namespace):
    """Within the block, every call of the functions named in ``places`` (dotted names
    looked up in ``namespace``: ``"F.cross_entropy"``, ``"torch.Tensor.logsumexp"``)
    is recorded, by name, in the list the block receives; the real function still runs.

    >>> import math
    >>> with spying(["math.sqrt"], {"math": math}) as calls:
    ...     _ = math.sqrt(4.0)
    >>> calls
    ['math.sqrt']
    """
    calls = []
    replaced = []
    try:
        for dotted in places:
            owner_name, attribute = dotted.rsplit(".", 1)
            owner = resolve(owner_name, namespace)
            original = static_attribute(owner, attribute)
            had_own = attribute in vars(owner)
            replaced.append((owner, attribute, original, had_own))
            setattr(owner, attribute, _recording(original, dotted, calls))
        yield calls
    finally:
        for owner, attribute, original, had_own in reversed(replaced):
            if had_own:
                setattr(owner, attribute, original)
            else:
                delattr(owner, attribute)


def _recording(original, label, calls):
    """A stand-in for ``original`` that notes ``label`` in ``calls`` and then calls it."""
    kind = type(original) if isinstance(original, (staticmethod, classmethod)) else None
    function = original.__func__ if kind else original

    def spy(*args, **kwargs):
        calls.append(label)
        return function(*args, **kwargs)

    return kind(spy) if kind else spy


# --- what an error message mentions ------------------------------------------------

def _pattern(fact):
    """A regular expression (matched with the spaces removed) for a fact as people write it:
    a shape ``(2, 3)`` as ``(2, 3)``, ``[2, 3]`` or ``torch.Size([2, 3])``; a number as a
    number of its own (``3`` is not found in ``30``); a string literally."""
    if isinstance(fact, tuple):
        inner = ",".join(str(int(n)) for n in fact)
        return r"[\(\[]" + re.escape(inner) + r",?[\)\]]"
    if isinstance(fact, int):
        # a number of its own: 3 is not found in 30 or 0.3, -1 not in 1 (nor 1 in -1)
        return rf"(?<![\d.\-]){fact}(?![\d.])"
    return re.escape(str(fact).replace(" ", ""))


def missing_mentions(message, mentions):
    """The descriptions in ``mentions`` whose fact ``message`` does not mention.

    ``mentions`` maps a description to a fact: a tuple is a shape, an int a number, a
    string a text, and a list holds alternatives (any one will do).

    >>> missing_mentions("cannot add shapes (2, 3) and (4,)",
    ...                  {"a's shape": (2, 3), "b's shape": (4,), "the dimension": [1, -1]})
    ['the dimension']
    """
    squeezed = re.sub(r"\s+", "", str(message)).lower()
    missing = []
    for description, fact in mentions.items():
        options = fact if isinstance(fact, list) else [fact]
        if not any(re.search(_pattern(option).lower(), squeezed) for option in options):
            missing.append(description)
    return missing


# --- what an object keeps --------------------------------------------------------------

def _is_tensor(value):
    return hasattr(value, "grad_fn") and hasattr(value, "detach") and hasattr(value, "shape")


def tensor_attributes(obj):
    """Sorted names of ``obj``'s own attributes that hold a tensor (or a list, tuple or
    dict with one in it): what a learner stored on an autograd ``ctx`` by hand.

    >>> import types, learntorch
    >>> tensor_attributes(types.SimpleNamespace(t=learntorch.ones(2), n=3, pair=(1, learntorch.ones(1))))
    ['pair', 't']
    """
    found = []
    for attribute, value in sorted(getattr(obj, "__dict__", {}).items()):
        values = value.values() if isinstance(value, dict) else (
            value if isinstance(value, (list, tuple)) else (value,))
        if any(_is_tensor(v) for v in values):
            found.append(attribute)
    return found
