"""How ``run_ranks`` sends a function to the ranks, when pickle alone cannot.

pickle sends a function *by reference* -- its module and its name -- and the
rank imports it again.  That works for a function of an importable module, not
for one defined in a notebook cell or in the script being run (``__main__``,
which on a rank is another program).  ``dump`` pickles the job's function and
arguments as usual, except that each such function becomes a *description*
from which ``rebuild``, on the rank, makes it again:

* **a script's function**: the script's path; the rank runs the script as
  ``__mp_main__`` (its ``if __name__ == "__main__":`` part does not run) and
  takes the function from it -- multiprocessing's way;
* **a notebook's function**: its source, and what it uses of the notebook.  The
  names its code refers to are looked up in the notebook: a module (``torch``,
  ``dist``, ``np``) is imported again on the rank under the same name, a function
  or class of an importable module (``DataLoader``, ``DistributedSampler``) too,
  and a function defined in the notebook is sent as its source, with what *it*
  uses.  Anything else -- numbers, tensors, a class defined in the notebook -- is
  not sent: pass it in ``args``.  All the functions sent from one notebook are
  rebuilt in one namespace, as they lived in the notebook.
"""
import builtins
import importlib
import inspect
import io
import linecache
import os
import pickle
import runpy
import sys
import textwrap
import types

_MAIN = ("__main__", "__mp_main__")


def check_target(fn):
    """``run_ranks`` runs functions defined with ``def`` (a TypeError says why otherwise)."""
    if not inspect.isfunction(fn):
        raise TypeError(f"run_ranks needs a function defined with `def` (or a script path); "
                        f"got {fn!r}")
    _check_rebuildable(fn)


def _check_rebuildable(fn):
    if fn.__name__ == "<lambda>":
        raise TypeError("run_ranks needs a function defined with `def` (or a script path); "
                        f"got {fn!r}")
    if fn.__code__.co_freevars or "<locals>" in fn.__qualname__:
        raise TypeError(f"{fn.__name__} is defined inside another function; define it at the "
                        "top level and pass what it needs as args=")


def _main_script():
    """The path of the script running as __main__, or None in a notebook or a REPL."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path and os.path.isfile(path) and "ipykernel" not in path:
        return os.path.abspath(path)
    return None


def _names_used(code):
    """Every name the code (and the code nested in it) loads: globals and attributes alike."""
    names, todo = set(), [code]
    while todo:
        current = todo.pop()
        names.update(current.co_names)
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return names


def _importable(value):
    """``(module, qualname)`` where ``value`` is found again by importing, else None."""
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or module in _MAIN \
            or "<" in qualname:
        return None
    try:
        found = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return (module, qualname) if found is value else None


def _source(fn):
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        raise TypeError(f"the source of {fn.__name__} cannot be read ({error}); put the "
                        "function in a file and import it") from None
    # at its own line numbers, so that a traceback on the rank quotes the right lines
    return "\n" * (first_line - 1) + textwrap.dedent("".join(lines))


def describe(fn):
    """What a rank needs to make ``fn`` (a function of ``__main__``) again."""
    _check_rebuildable(fn)
    script = _main_script()
    if script is not None:
        return {"kind": "script", "path": script, "name": fn.__qualname__}
    notebook = fn.__globals__
    sources, imports, todo = {}, {}, [fn]
    while todo:
        current = todo.pop()
        if current.__name__ in sources:
            continue
        sources[current.__name__] = (_source(current), current.__code__.co_filename)
        for name in sorted(_names_used(current.__code__)):
            if name not in notebook or name in sources or name in imports:
                continue
            value = notebook[name]
            if isinstance(value, types.ModuleType):
                imports[name] = ("module", value.__name__)
            elif inspect.isfunction(value) and value.__module__ in _MAIN:
                _check_rebuildable(value)
                todo.append(value)
            elif _importable(value) is not None:
                imports[name] = ("object", *_importable(value))
    return {"kind": "source", "name": fn.__name__, "sources": sources, "imports": imports}


class _Pickler(pickle.Pickler):
    """pickle, except that a function of ``__main__`` is sent as its description."""

    def reducer_override(self, obj):
        if isinstance(obj, types.FunctionType) and obj.__module__ in _MAIN:
            return rebuild, (describe(obj),)
        return NotImplemented


def dump(value, file):
    """Pickle ``value`` (the job's function and arguments) into ``file`` for the ranks."""
    buffer = io.BytesIO()
    try:
        _Pickler(buffer).dump(value)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise TypeError(f"run_ranks sends the function and its arguments to the ranks with "
                        f"pickle, which cannot send this: {error}") from error
    file.write(buffer.getvalue())


_scripts = {}      # path -> the script's namespace, run once per rank
_notebook = None   # the namespace of the functions rebuilt from a notebook


def rebuild(description):
    """On a rank: the function ``description`` stands for (see ``describe``)."""
    global _notebook
    if description["kind"] == "script":
        path = description["path"]
        if path not in _scripts:
            _scripts[path] = runpy.run_path(path, run_name="__mp_main__")
        return _scripts[path][description["name"]]
    if _notebook is None:
        _notebook = {"__name__": "__main__", "__builtins__": builtins}
    for name, (kind, module, *qualname) in description["imports"].items():
        value = importlib.import_module(module)
        for part in (qualname[0].split(".") if qualname else ()):
            value = getattr(value, part)
        _notebook[name] = value
    for name, (source, filename) in description["sources"].items():
        # registered with linecache, so that a traceback shows the function's lines
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), _notebook)
    return _notebook[description["name"]]
