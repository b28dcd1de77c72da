"""Run a notebook's code cells in this process, as a Jupyter kernel would, and keep what
each cell printed: the machinery behind the variant specifications (course/variants.py)
and the plain-PyTorch run (course/plain_pytorch.py).

A kernel would be the most faithful place to run a cell, but it costs a process and a
round trip per cell; these tools run hundreds of cells.  ``CellRunner`` does what
matters of what IPython does, in the current process:

* one namespace per run, which is the ``__main__`` module's while a cell runs (so
  that classes defined in a cell pickle, e.g. into DataLoader worker processes);
* each cell compiled under a file name of its own and registered in ``linecache``, so
  tracebacks quote the cell's lines and the code's line numbers are the cell's;
* the value of a last bare expression shown as its ``repr`` (``Out[..]``), unless the
  line ends with ``;``;
* output captured per cell (``print``, and that shown value); a time limit per cell.

What it does not do: magics, ``display()`` of rich output (widgets build their views
only when displayed), asynchronous cells.  The chapters use none of them outside
what the widgets' ``_repr_mimebundle_`` would show.
"""
import ast
import contextlib
import io
import linecache
import signal
import sys
import traceback
import types
from dataclasses import dataclass


class CellTimeout(Exception):
    """A cell ran past its time limit."""


@dataclass
class CellRun:
    """What one cell did: ``output`` (what it printed, and the shown value), and
    ``error`` (the exception it raised, None when it ran through) with ``trace``,
    its formatted traceback."""
    label: str
    output: str
    error: BaseException = None
    trace: str = ""

    @property
    def ok(self):
        return self.error is None


class CellRunner:
    """``run(source)`` runs one cell in this runner's namespace; ``namespace`` is a dict of
    the cells' globals (copy it with ``fork()`` to try something and throw it away)."""

    def __init__(self, namespace=None):
        module = types.ModuleType("__main__")
        module.__dict__.update(namespace or {})
        module.__dict__.setdefault("__builtins__", __builtins__)
        self.module = module
        self.count = 0

    @property
    def namespace(self):
        return self.module.__dict__

    def fork(self):
        """A runner whose namespace starts as a copy of this one's (the objects are shared,
        the names are not: a cell run there defines nothing here)."""
        return CellRunner(dict(self.namespace))

    def run(self, source, label=None, timeout=None):
        """Run ``source`` as a cell; returns a ``CellRun``.  Never raises for the cell's own
        errors (they are in the result); ``timeout`` seconds end a cell that hangs."""
        self.count += 1
        label = label or f"cell {self.count}"
        filename = f"<{label}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        output = io.StringIO()
        previous_main = sys.modules.get("__main__")
        sys.modules["__main__"] = self.module
        try:
            with contextlib.redirect_stdout(output), _time_limit(timeout):
                self._execute(source, filename)
        except BaseException as error:  # noqa: BLE001 -- the cell's error is the result
            if isinstance(error, KeyboardInterrupt):
                raise
            trace = "".join(traceback.format_exception(type(error), error,
                                                       error.__traceback__.tb_next))
            return CellRun(label, output.getvalue(), error, trace)
        finally:
            sys.modules["__main__"] = previous_main
        return CellRun(label, output.getvalue())

    def _execute(self, source, filename):
        tree = ast.parse(source, filename)
        shown = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
            shown = ast.Expression(tree.body.pop().value)
        exec(compile(tree, filename, "exec"), self.namespace)
        if shown is not None:
            value = eval(compile(shown, filename, "eval"), self.namespace)
            if value is not None:
                print(repr(value))


@contextlib.contextmanager
def _time_limit(seconds):
    """Raise CellTimeout in this (main) thread after ``seconds``; no limit when None."""
    if not seconds:
        yield
        return

    def expire(signum, frame):
        raise CellTimeout(f"the cell ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(int(seconds))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
