"""A chapter source prepared for grading: what each run sends, cell by cell.

Grading runs every notebook twice over: the instructor's source as it is (the
*trusted* run, whose checks record the expected values), and each submission (the
*sandbox* run: the source's cells with the submission's solution cells swapped in).
Before either, the source's code is read once (``Plan``):

- every call of a check of ``course.checks`` in a non-solution cell gets a number, its
  *site*: the call is sent as ``__learntorch_site__(7, check_close)(...)``, so that
  each observation names the call it came from;
- each site is trusted or relational (``course/grading/taint.py``);
- in the sandbox run's copy of the cells, a trusted site's expected arguments are
  replaced by ``__learntorch_withheld__``: the submission's kernel never computes or
  sees the values it is compared with -- not even a hidden check's literal ``42``,
  which an input transformer (``get_ipython().input_transformers_cleanup``) could
  otherwise read from the cell's text before it runs.

Cells without check calls are sent exactly as written.
"""
import ast
import copy
import dataclasses
import inspect
import re

from IPython.core.inputtransformer2 import TransformerManager

from .. import checks
from ..notebook import SourceError, marks, read_source, where
from ..release import STUB_COMMENT
from .taint import Analysis

SITE = "__learntorch_site__"
WITHHELD = "__learntorch_withheld__"


@dataclasses.dataclass
class Site:
    number: int
    cell: int            # index (in the source's cells) of the cell the call is written in
    check: str           # the check's name in course.checks
    relational: bool     # its expected value comes from the learner's own values
    withheld: bool       # the submission's copy of the cell does not have the expected value


def _check_functions():
    """The checks of course.checks, by name: everything marked by ``_reports``."""
    return {name: value for name, value in vars(checks).items()
            if callable(value) and hasattr(value, "_learntorch_withheld")}


def python_of(source):
    """A cell's code as Python (IPython's ``%magic`` and ``!shell`` lines translated)."""
    return TransformerManager().transform_cell(source)


class _Checks:
    """Finds check calls in the instructor's code, however the checks were imported."""

    def __init__(self, trees):
        self.functions = _check_functions()
        self.aliases, self.modules = {}, set()
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "course.checks":
                    for alias in node.names:
                        if alias.name in self.functions:
                            self.aliases[alias.asname or alias.name] = alias.name
                elif isinstance(node, ast.ImportFrom) and node.module == "course":
                    self.modules.update(a.asname or a.name for a in node.names
                                        if a.name == "checks")
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name == "course.checks":
                            self.modules.add(alias.asname or "course.checks")

    def name(self, call):
        func = call.func
        if isinstance(func, ast.Name):
            return self.aliases.get(func.id)
        if isinstance(func, ast.Attribute) and func.attr in self.functions:
            owner = ast.unparse(func.value)
            if owner in self.modules:
                return func.attr
        return None

    def expected(self, call):
        """The argument nodes of ``call`` that hold expected values."""
        name = self.name(call)
        function = self.functions[name]
        keywords = [k for k in call.keywords if k.arg != "exercise"]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in keywords):
            return []
        try:
            bound = inspect.signature(function).bind_partial(
                *call.args, **{k.arg: k.value for k in keywords})
        except TypeError:
            return []
        found = []
        for spec in function._learntorch_withheld:
            parameter, _, item = spec.partition("[*]")
            node = bound.arguments.get(parameter)
            if node is None:
                continue
            if not item:
                found.append(node)
                continue
            index = int(item.strip("[]"))
            if not isinstance(node, (ast.List, ast.Tuple)) or not all(
                    isinstance(e, (ast.List, ast.Tuple)) and len(e.elts) > index
                    for e in node.elts):
                return []    # cases that are not written out: nothing to withhold
            found.extend(e.elts[index] for e in node.elts)
        return found


class _Rewrite(ast.NodeTransformer):
    def __init__(self, withhold):
        self.withhold = withhold

    def visit(self, node):
        site = getattr(node, "_learntorch_expected_of", None)
        if self.withhold and site is not None and site.withheld:
            return ast.copy_location(ast.Name(WITHHELD, ast.Load()), node)
        return super().visit(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        site = getattr(node, "_learntorch_site", None)
        if site is not None:
            node.func = ast.Call(ast.Name(SITE, ast.Load()),
                                 [ast.Constant(site.number), node.func], [])
        return node


class Plan:
    """Everything grading needs from one chapter source."""

    def __init__(self, path):
        self.path = path
        self.chapter = path.stem
        self.notebook, self.exercises = load_source(path)
        self.cells = self.notebook["cells"]
        self.code = [i for i, c in enumerate(self.cells) if c.get("cell_type") == "code"]
        self.solution_of = {e.solution: e for e in self.exercises}
        self.exercise_of, self.role_of = {}, {}
        for index, cell in enumerate(self.cells):
            mark = marks(cell)
            if mark:
                self.exercise_of[index], self.role_of[index] = mark["exercise"], mark["role"]
        kept = [i for i in range(len(self.cells)) if self.role_of.get(i) != "hidden-check"]
        self.learner_number = {index: number + 1 for number, index in enumerate(kept)}
        self.sites = {}
        self._trusted, self._sandbox = {}, {}
        self._analyse()

    def _analyse(self):
        trees = {}
        for index in self.code:
            try:
                trees[index] = ast.parse(python_of(self.cells[index]["source"]))
            except SyntaxError as error:
                raise SourceError(f"{where(self.path, index, self.cells[index])}: not valid "
                                  f"Python ({error.msg}, line {error.lineno}); grading reads "
                                  f"every cell of a source") from None
        finder = _Checks(trees.values())
        for index in self.code:
            if index in self.solution_of:
                continue
            for node in ast.walk(trees[index]):
                if isinstance(node, ast.Call) and finder.name(node):
                    site = Site(len(self.sites) + 1, index, finder.name(node), False, False)
                    node._learntorch_site = site
                    # withheld in check cells only: a teaching cell's check (one that
                    # shows a failure, say) is no secret and must behave as the learner saw
                    expected = finder.expected(node)
                    site.withheld = bool(expected) and self.role_of.get(index) in (
                        "check", "hidden-check")
                    for argument in expected if site.withheld else []:
                        argument._learntorch_expected_of = site
                    self.sites[site.number] = site
        analysis = Analysis(lambda call: getattr(call, "_learntorch_site", None) is not None,
                            finder.expected)
        for index in self.code:
            if index in self.solution_of:
                analysis.solution_cell(trees[index])
            else:
                analysis.cell(trees[index])
        for index in self.code:
            if index in self.solution_of:
                continue
            for node in ast.walk(trees[index]):
                site = getattr(node, "_learntorch_site", None)
                if site is not None and id(node) in analysis.relational:
                    site.relational = True
                    site.withheld = False   # the submission computes its own reference
            has_sites = any(s.cell == index for s in self.sites.values())
            for store, withhold in ((self._trusted, False), (self._sandbox, True)):
                if has_sites:
                    tree = _Rewrite(withhold).visit(copy.deepcopy(trees[index]))
                    store[index] = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
                else:
                    store[index] = self.cells[index]["source"]

    def trusted_source(self, index):
        """What the instructor's run sends for code cell ``index``."""
        if index in self.solution_of:
            return self.cells[index]["source"]
        return self._trusted[index]

    def sandbox_source(self, index):
        """What a submission's run sends for a non-solution code cell ``index``."""
        return self._sandbox[index]

    def checks_of(self, exercise):
        return exercise.checks + exercise.hidden_checks

    def place(self, index):
        """How messages name a cell: as the learner's copy numbers it, or for a hidden
        check its number in the instructor source."""
        if self.role_of.get(index) == "hidden-check":
            return f"hidden check (cell {index + 1} of the instructor source)"
        kind = {"check": "check", "solution": "solution cell"}.get(self.role_of.get(index),
                                                                   "cell")
        return f"{kind} (cell {self.learner_number[index]})"


def load_source(path):
    """``read_source``, saying so when the folder holds learner copies instead."""
    try:
        return read_source(path)
    except SourceError as error:
        from ..notebook import read_notebook
        try:
            notebook = read_notebook(path)
        except ValueError:
            raise error from None
        stub = re.escape(STUB_COMMENT.split("{")[0])
        if any(marks(c).get("role") == "solution" and re.search(stub, c.get("source", ""))
               for c in notebook["cells"]):
            raise SourceError(
                f"{path}: this looks like a learner copy (its solution cells hold the "
                f"release's stubs and it has no hidden checks), not an instructor source: "
                f"--source must be the folder of instructor sources, e.g. course/solutions, "
                f"not chapters/") from None
        raise
