"""``code_walk``: which of learntorch's functions a piece of your code runs, file by file.

    >>> import learntorch as torch
    >>> from learntorch.utils.code_walk import code_walk
    >>> a = torch.ones(3, 4, requires_grad=True)
    >>> walk = code_walk(lambda: (a * a).sum().backward())
    >>> walk.files[:2]
    ['_tensor.py', 'ops/arithmetic.py']

It runs your function once to warm up (imports, caches), then again under
Python's tracer, and records every learntorch function entered.  Each function
counts once, with its *lines of code*: the lines of its source that are not blank,
not comments, not docstrings and not decorators (``@staticmethod`` is part of the
``def`` line it stands on) -- what you have to read to follow it.  By default
the walk runs in the reference tier (``learntorch.tiers``): the engine exactly as
written in ``learntorch/autograd`` and ``learntorch/ops``, on the numpy backend.

``walk`` prints as a table in the order the functions were first entered, which is
a good order to read them in.  (learntorch-only: torch has no such tool.)
"""
import ast
import inspect
import io
import os
import sys
import textwrap
import tokenize

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NESTED = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>", "<module>")


class WalkedFunction:
    """One learntorch function the walk entered: ``file``, ``name``, ``line``, ``lines``."""

    __slots__ = ("file", "name", "line", "lines")

    def __init__(self, file, name, line, lines):
        self.file, self.name, self.line, self.lines = file, name, line, lines

    def __repr__(self):
        return f"{self.file}:{self.line} {self.name} ({self.lines} lines)"


class CodeWalk:
    """The functions a walk entered (in order of first entry), with totals."""

    def __init__(self, functions, tier):
        self.functions = functions
        self.tier = tier

    @property
    def files(self):
        """The files entered, in the order the walk first reached each."""
        return list(dict.fromkeys(f.file for f in self.functions))

    @property
    def lines(self):
        """Lines of code of every function entered, each function counted once."""
        return sum(f.lines for f in self.functions)

    def by_file(self):
        """``{file: [functions]}`` in the order the files were first entered."""
        grouped = {}
        for f in self.functions:
            grouped.setdefault(f.file, []).append(f)
        return grouped

    def __repr__(self):
        rows = [f"code walk ({self.tier} tier): {len(self.functions)} functions, "
                f"{self.lines} lines of code, {len(self.files)} files"]
        for file, functions in self.by_file().items():
            rows.append(f"  {file}  ({sum(f.lines for f in functions)} lines)")
            for f in functions:
                rows.append(f"      {f.lines:4d}  {f.name}  (line {f.line})")
        return "\n".join(rows)


def code_walk(fn, tier="reference"):
    """Run ``fn()`` (after one warm-up call) and return the ``CodeWalk`` of what it entered.

    ``tier``: ``"reference"`` (default), ``"fast"``, or None for the tier in use.
    """
    from .. import tiers
    if tier is None:
        return _walk(fn, tiers.get_tier())
    with tiers.use(tier):
        return _walk(fn, tier)


def _walk(fn, tier):
    fn()  # warm up: imports and first-call caches are not what the walk is about
    entered = {}

    def tracer(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code not in entered and code.co_filename.startswith(_PACKAGE_DIR) \
                    and code.co_name not in _NESTED:
                entered[code] = None
        return None  # no line events: only calls matter

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return CodeWalk([_describe(code) for code in entered], tier)


def _describe(code):
    file = os.path.relpath(code.co_filename, _PACKAGE_DIR).replace(os.sep, "/")
    return WalkedFunction(file, code.co_qualname, code.co_firstlineno, lines_of_code(code))


def lines_of_code(code):
    """Lines of ``code``'s source that are code: not blank, comments or its docstrings."""
    try:
        source_lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return 0
    source = textwrap.dedent("".join(source_lines))
    skipped = _docstring_lines(source) | _decorator_lines(source)
    counted = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                              tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            for line in range(token.start[0], token.end[0] + 1):
                if line not in skipped:
                    counted.add(line)
    except (tokenize.TokenError, IndentationError):
        return len([line for line in source_lines if line.strip()])
    return len(counted)


def _decorator_lines(source):
    """Line numbers of the decorators of the functions and classes in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {line for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for d in node.decorator_list for line in range(d.lineno, d.end_lineno + 1)}


def _docstring_lines(source):
    """Line numbers (1-based, in ``source``) of the docstrings of the functions and classes in it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines
