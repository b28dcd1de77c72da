"""The engine's layers hold: who may import whom, read from the source (AST), not by running it.

DESIGN.md §4: ``autograd`` does not import ``ops``; ``backends`` imports no ``nn``/``ops``/
``autograd``; ``ops``, ``nn`` and ``optim`` reach kernels only through the backend contract, never
by importing ``backends.numba_cpu`` or ``backends.cuda``; and there are no import cycles inside
``learntorch/``.  Every import counts -- at the top of a file, at the bottom, or inside a function
(a lazy import is a dependency all the same) -- and a module that assigns into another module's
namespace (an "injected global") is refused outright.

Importing ``learntorch.a.b`` also runs ``learntorch/a/__init__.py``, so an import depends on the
package too (but a module never depends on the package it belongs to: Python has that package
half-imported already, and its ``__init__`` is what imports the module).
"""
import ast
import collections
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "learntorch")


def _modules():
    found = {}
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                found[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return found


MODULES = _modules()


def _target(module, node):
    """The module an ``ImportFrom`` names (absolute), resolving relative levels."""
    if node.level == 0:
        return node.module
    package = module if MODULES[module].endswith("__init__.py") else module.rpartition(".")[0]
    parts = package.split(".")
    base = parts[:len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module):
    """``(imported module, line)`` for every import in ``module``, at any depth."""
    tree = ast.parse(open(MODULES[module], encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _target(module, node)
            if not target or not target.startswith("learntorch"):
                continue
            submodules = [f"{target}.{a.name}" for a in node.names
                          if f"{target}.{a.name}" in MODULES]
            for name in submodules or ([target] if target in MODULES else []):
                yield name, node.lineno
            if submodules and target in MODULES and len(submodules) < len(node.names):
                yield target, node.lineno  # names that are not modules come from the package


def _graph():
    edges = collections.defaultdict(set)
    where = {}
    for module in MODULES:
        for target, line in _imports(module):
            chain = target.split(".")
            for i in range(1, len(chain) + 1):  # the packages on the way are imported too
                dep = ".".join(chain[:i])
                if dep in MODULES and dep != module and not module.startswith(dep + "."):
                    edges[module].add(dep)
                    where.setdefault((module, dep), line)
    return edges, where


EDGES, WHERE = _graph()


def _reaches(module, forbidden):
    return sorted(f"{module} -> {dep} (line {WHERE[(module, dep)]})" for dep in EDGES[module]
                  if any(dep == f or dep.startswith(f + ".") for f in forbidden))


def _in(package):
    return [m for m in MODULES if m == package or m.startswith(package + ".")]


@pytest.mark.parametrize("layer, forbidden", [
    ("learntorch.autograd", ("learntorch.ops", "learntorch.nn", "learntorch.optim",
                             "learntorch._tensor", "learntorch._tensor_methods",
                             "learntorch.factories", "learntorch._fast")),
    ("learntorch.backends", ("learntorch.nn", "learntorch.ops", "learntorch.autograd",
                             "learntorch.optim", "learntorch._fast")),
    ("learntorch.ops", ("learntorch.backends.numba_cpu", "learntorch.backends.cuda",
                        "learntorch._fast", "learntorch.nn", "learntorch.optim")),
    ("learntorch.nn", ("learntorch.backends.numba_cpu", "learntorch.backends.cuda",
                       "learntorch._fast")),
    ("learntorch.optim", ("learntorch.backends.numba_cpu", "learntorch.backends.cuda",
                          "learntorch._fast")),
])
def test_a_layer_imports_nothing_above_it_and_no_kernel_module(layer, forbidden):
    offenders = [line for module in _in(layer) for line in _reaches(module, forbidden)]
    assert offenders == [], f"{layer} must not import {forbidden}:\n" + "\n".join(offenders)


# The accepted cycles.  The numpy families are mixins of reference.py's NumpyBackend and
# use its two array helpers (as_array, on_device).  The helpers stay in reference.py so that
# a learner reading NumpyBackend.mul finds as_array on the same page: moving them would add
# a file to the reading path, whose budget is 6 files (tests/tiers).
# The dynamic quantized Linear's from_float, given a module without a weight observer,
# imports the default qconfig inside the call, as torch's does (torch's comment there: a
# circular import), while ao.quantization's quantize_dynamic maps Linear to that class.
def _accepted(module, dep):
    return ((module.startswith("learntorch.backends.numpy_families.")
             and dep == "learntorch.backends.reference")
            or (module == "learntorch.ao.nn.quantized.dynamic.modules.linear"
                and dep.startswith("learntorch.ao.quantization")))


def _cycle_through(start):
    """One shortest import cycle through ``start`` (a list of modules), or None."""
    parents, frontier = {start: None}, [start]
    while frontier:
        following = []
        for module in frontier:
            for dep in sorted(d for d in EDGES[module] if not _accepted(module, d)):
                if dep == start:
                    cycle = [module]
                    while parents[cycle[-1]] is not None:
                        cycle.append(parents[cycle[-1]])
                    return [start] + cycle[::-1][1:] + [start] if len(cycle) > 1 else \
                        [start, module, start] if module != start else [start, start]
                if dep not in parents:
                    parents[dep] = module
                    following.append(dep)
        frontier = following
    return None


def test_no_import_cycles_inside_learntorch():
    cycles = {}
    for module in sorted(MODULES):
        cycle = _cycle_through(module)
        if cycle is not None:
            cycles.setdefault(frozenset(cycle), cycle)
    shown = [" -> ".join(f"{a} (line {WHERE[(a, b)]})" for a, b in zip(c, c[1:])) + f" -> {c[-1]}"
             for c in cycles.values()]
    assert not shown, (f"{len(shown)} import cycles (each counts lazy imports too):\n"
                       + "\n".join(sorted(shown)))


def test_no_module_writes_into_another_modules_namespace():
    """``other_module.NAME = value`` wires modules together behind the import graph's back."""
    offenders = []
    for module, path in MODULES.items():
        tree = ast.parse(open(path, encoding="utf-8").read())
        imported = {alias.asname or alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom)
                    and (_target(module, node) or "").startswith("learntorch")
                    for alias in node.names
                    if f"{_target(module, node)}.{alias.name}" in MODULES}
        imported |= {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.Import) for alias in node.names
                     if alias.name.startswith("learntorch")}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                        and t.value.id in imported:
                    offenders.append(f"{module} line {node.lineno}: {t.value.id}.{t.attr} = ...")
    assert offenders == [], "modules assigning into other modules:\n" + "\n".join(offenders)
