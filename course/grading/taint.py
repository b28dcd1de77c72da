"""Which check calls compare with a value that the learner's own code produced.

Most checks compare the learner's answer with a reference the check computes from
fixed inputs: ``check_close(square(3.0), 9.0)``, ``check_close(my_grad, x_ref.grad)``.
Grading takes those references from the instructor's run (*trusted* calls).  Some
checks relate two things the learner's code made: ``check_close(mlp(x),
by_hand(mlp.state_dict(), x))``, ``check_close(accuracy, max(history["val_accuracy"]))``.
Their reference differs from one correct solution to the next (other random weights,
another training run), so the instructor's value would fail a right answer: grading
compares both sides from the submission's run instead (*relational* calls), in the
grader's own process.  A submission that lies about both sides can pass a relational
call, which is why each exercise must keep at least one trusted call (a chapter test
checks it).

This module tells them apart by reading the instructor source, cell by cell in
notebook order, the way the code would run -- a small abstract interpreter that
tracks which names hold values that depend on the learner's code:

- every name a solution cell binds (a function, a class, a variable) does;
- so does a value computed from such a name, and what a loop over it yields;
- calling the learner's code (or a method of a learner-made object) may change its
  arguments: the names passed in then do too -- and so does an object whose method
  is given a learner-made value (``reference.load_state_dict(mine.state_dict())``);
- a helper function of a check cell is followed into, with the taint of its
  arguments, each time it is called;
- assigning an untainted value to a name clears it (statements are followed in
  order), a branch or loop keeps whatever any path taints.

A check call is relational when its expected arguments (those ``course.checks``
declares withheld) are tainted at the moment of the call.  Whatever this misses
errs towards *relational*: a correct solution is never failed by the instructor's
random draws, at the cost of one more call that a lying kernel could pass.
"""
import ast

_MAX_DEPTH = 8   # helper functions calling helpers: deeper than this is "tainted"


def _top_level(node):
    """``node`` and the nodes under it, without entering function, lambda or class
    bodies (their names are not the cell's)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)):
            yield from _top_level(child)


def bound_names(tree, modules=()):
    """The global names a solution cell binds or changes: what it defines or assigns,
    and the objects whose methods it calls (``model.train()``, ``items.append(x)``) --
    but not imported modules (importing one again, or calling its functions, changes
    nothing a check relies on)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for sub in _top_level(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                names.add(sub.id)
            elif isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.ctx, ast.Store):
                names.add(root_name(sub))
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                receiver = root_name(sub.func.value)
                if receiver not in modules:
                    names.add(receiver)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
    names.discard(None)
    return names


def root_name(node):
    """``a`` for ``a``, ``a.b.c``, ``a[i].b``; None for anything else (a call's result
    is a new value, not an existing object)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mentions(node, tainted):
    return any(isinstance(sub, ast.Name) and sub.id in tainted for sub in ast.walk(node))


class _Frame:
    """The names of one scope: tainted ones, and (for a function) its local names."""

    def __init__(self, tainted, local_names=None):
        self.tainted = set(tainted)
        self.local_names = local_names   # None: the notebook's global scope


class Analysis:
    """Taint of the notebook's names, updated cell by cell.

    ``is_check(call)`` says whether a call node is a check call, and ``expected(call)``
    lists its expected-argument nodes; ``relational`` collects the check calls found
    relational (by ``id`` of the node)."""

    def __init__(self, is_check, expected_arguments):
        self.is_check, self.expected_arguments = is_check, expected_arguments
        self.globals = _Frame(set())
        self.modules = set()       # names bound by imports: calls on them change nothing
        self.functions = {}        # helper functions of non-solution cells
        self.relational = set()

    # --- cells -------------------------------------------------------------------

    def solution_cell(self, tree):
        names = bound_names(tree, self.modules)
        self.globals.tainted |= names
        for name in names:
            self.functions.pop(name, None)

    def cell(self, tree):
        self._block(tree.body, [self.globals], depth=0)

    # --- statements ------------------------------------------------------------

    def _block(self, statements, frames, depth):
        for statement in statements:
            self._statement(statement, frames, depth)

    def _tainted(self, frames):
        names = set(frames[-1].tainted)
        if frames[-1].local_names is not None:
            names |= {n for n in self.globals.tainted if n not in frames[-1].local_names}
        return names

    def _set(self, frames, name, taint):
        frame = frames[-1]
        if frame.local_names is not None and name not in frame.local_names:
            frame = self.globals
        if taint:
            frame.tainted.add(name)
        else:
            frame.tainted.discard(name)
            if frame is self.globals:
                self.modules.discard(name)

    def _taint_root(self, frames, node):
        name = root_name(node)
        if name is not None and name not in self.modules:
            self._set(frames, name, True)

    def _assign(self, frames, target, taint, value=None):
        if isinstance(target, ast.Name):
            self._set(frames, target.id, taint)
            if frames[-1].local_names is None:
                self.functions.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                for sub_target, sub_value in zip(target.elts, value.elts):
                    self._assign(frames, sub_target, self._expr(sub_value, frames, 0,
                                                                effects=False), sub_value)
            else:
                for sub_target in target.elts:
                    self._assign(frames, sub_target, taint)
        elif isinstance(target, ast.Starred):
            self._assign(frames, target.value, taint)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self._expr(target.value, frames, 0)
            if isinstance(target, ast.Subscript):
                self._expr(target.slice, frames, 0)
            if taint:
                self._taint_root(frames, target)

    def _statement(self, node, frames, depth):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._set(frames, node.name, False)
            if frames[-1].local_names is None:
                self.functions[node.name] = node
            return
        if isinstance(node, ast.ClassDef):
            taint = any(_mentions(part, self._tainted(frames))
                        for part in node.bases + node.keywords + node.body)
            self._set(frames, node.name, taint)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                self._set(frames, name, False)
                self.functions.pop(name, None)
                if frames[-1].local_names is None:
                    self.modules.add(name)
            return
        if isinstance(node, ast.Assign):
            taint = self._expr(node.value, frames, depth)
            for target in node.targets:
                self._assign(frames, target, taint, node.value)
            return
        if isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._assign(frames, node.target, self._expr(node.value, frames, depth),
                             node.value)
            return
        if isinstance(node, ast.AugAssign):
            taint = self._expr(node.value, frames, depth)
            current = self._expr(node.target, frames, depth, effects=False) \
                if not isinstance(node.target, ast.Name) else \
                node.target.id in self._tainted(frames)
            self._assign(frames, node.target, taint or current)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            taint = self._expr(node.iter, frames, depth)
            self._loop(frames, depth, node.body + node.orelse,
                       before=lambda: self._assign(frames, node.target, taint))
            return
        if isinstance(node, ast.While):
            self._loop(frames, depth, node.body + node.orelse,
                       before=lambda: self._expr(node.test, frames, depth))
            return
        if isinstance(node, ast.If):
            self._expr(node.test, frames, depth)
            self._branches(frames, depth, [node.body, node.orelse])
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                taint = self._expr(item.context_expr, frames, depth)
                if item.optional_vars is not None:
                    self._assign(frames, item.optional_vars, taint)
            self._block(node.body, frames, depth)
            return
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self._block(node.body, frames, depth)
            self._branches(frames, depth, [h.body for h in node.handlers] + [node.orelse, []])
            self._block(node.finalbody, frames, depth)
            return
        if isinstance(node, ast.Match):
            self._expr(node.subject, frames, depth)
            self._branches(frames, depth, [case.body for case in node.cases] + [[]])
            return
        if isinstance(node, ast.Return):
            if node.value is not None and self._expr(node.value, frames, depth):
                frames[-1].returns_tainted = True
            return
        if isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self._set(frames, target.id, False)
            return
        # Expr, Raise, Assert, Pass, Break, Continue, Global, Nonlocal
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._expr(child, frames, depth)

    def _copy(self, frames):
        return [set(f.tainted) for f in frames] + [set(self.globals.tainted)]

    def _merge(self, frames, states):
        for index, frame in enumerate(frames):
            frame.tainted = set().union(*(state[index] for state in states))
        self.globals.tainted = set().union(*(state[-1] for state in states))

    def _restore(self, frames, state):
        for index, frame in enumerate(frames):
            frame.tainted = set(state[index])
        self.globals.tainted = set(state[-1])

    def _branches(self, frames, depth, bodies):
        start, ends = self._copy(frames), []
        for body in bodies:
            self._restore(frames, start)
            self._block(body, frames, depth)
            ends.append(self._copy(frames))
        self._merge(frames, ends)

    def _loop(self, frames, depth, body, before):
        # twice: what one pass taints reaches the next pass; zero passes is possible too
        states = [self._copy(frames)]
        for _ in range(2):
            before()
            self._block(body, frames, depth)
            states.append(self._copy(frames))
        self._merge(frames, states)

    # --- expressions ------------------------------------------------------------

    def _expr(self, node, frames, depth, effects=True):
        """Is ``node``'s value tainted?  Calls in it take effect on the way (the
        arguments of learner code become tainted), in evaluation order."""
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self._tainted(frames)
        if isinstance(node, ast.Call):
            return self._call(node, frames, depth, effects)
        if isinstance(node, ast.Lambda):
            return _mentions(node.body, self._tainted(frames))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            saved = self._copy(frames)
            taint = False
            for generator in node.generators:
                iterated = self._expr(generator.iter, frames, depth, effects)
                taint |= iterated
                self._assign(frames, generator.target, iterated)
                for condition in generator.ifs:
                    taint |= self._expr(condition, frames, depth, effects)
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for _ in range(2):
                for part in parts:
                    taint |= self._expr(part, frames, depth, effects)
            # the comprehension's own names end with it; what its calls tainted stays
            after = self._copy(frames)
            self._merge(frames, [saved, after])
            for generator in node.generators:
                for sub in ast.walk(generator.target):
                    if isinstance(sub, ast.Name) and not any(sub.id in s for s in saved):
                        self._set(frames, sub.id, False)
            return taint
        if isinstance(node, ast.NamedExpr):
            taint = self._expr(node.value, frames, depth, effects)
            self._assign(frames, node.target, taint)
            return taint
        taint = False
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.expr, ast.comprehension, ast.keyword)):
                value = child.value if isinstance(child, ast.keyword) else child
                if isinstance(value, ast.comprehension):
                    continue
                taint |= self._expr(value, frames, depth, effects)
        return taint

    def _call(self, node, frames, depth, effects):
        arguments = list(node.args) + [k.value for k in node.keywords]
        check = self.is_check(node)
        expected = self.expected_arguments(node) if check else []
        callee_taint = self._expr(node.func, frames, depth, effects)
        taints = []
        for argument in arguments:
            taints.append(self._expr(argument, frames, depth, effects))
            inside = {id(sub) for sub in ast.walk(argument)}
            # an expected value computed from the learner's values: a relational call
            if any(id(e) in inside and self._expr(e, frames, depth, effects=False)
                   for e in expected):
                self.relational.add(id(node))
        helper = self._helper(node, frames)
        learner = callee_taint and not check
        result = callee_taint or any(taints)
        if helper is not None and not check:
            calls_learner, returns = self._follow(helper, node, taints, frames, depth)
            learner |= calls_learner
            result = result or returns
        if effects and isinstance(node.func, ast.Attribute):
            receiver = root_name(node.func.value)
            if receiver is not None and receiver not in self.modules and any(taints):
                self._set(frames, receiver, True)   # an object given learner-made values
        if effects and learner:
            for argument in arguments:
                self._taint_root(frames, argument)
            if isinstance(node.func, ast.Attribute):
                self._taint_root(frames, node.func.value)
        return result

    def _helper(self, node, frames):
        if isinstance(node.func, ast.Name) and node.func.id in self.functions \
                and node.func.id not in self._tainted(frames):
            local = frames[-1].local_names
            if local is None or node.func.id not in local:
                return self.functions[node.func.id]
        return None

    def _follow(self, function, call, taints, frames, depth):
        """Run the taint analysis through a helper's body; returns (does it call the
        learner's code, is its result tainted)."""
        if depth >= _MAX_DEPTH:
            return True, True
        params = function.args
        names = [a.arg for a in params.posonlyargs + params.args + params.kwonlyargs]
        if params.vararg:
            names.append(params.vararg.arg)
        if params.kwarg:
            names.append(params.kwarg.arg)
        local_names = set(names)
        for sub in ast.walk(function):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                local_names.add(sub.id)
        for sub in ast.walk(function):
            if isinstance(sub, ast.Global):
                local_names -= set(sub.names)
        # a parameter is tainted when the argument bound to it may be
        tainted_params = set()
        positional = [a.arg for a in params.posonlyargs + params.args]
        for index, taint in enumerate(taints[:len(call.args)]):
            if not taint:
                continue
            if isinstance(call.args[index], ast.Starred) or index >= len(positional):
                tainted_params.update(names)
            else:
                tainted_params.add(positional[index])
        for keyword, taint in zip(call.keywords, taints[len(call.args):]):
            if taint:
                if keyword.arg is None or keyword.arg not in names:
                    tainted_params.update(names)
                else:
                    tainted_params.add(keyword.arg)
        frame = _Frame(tainted_params, local_names)
        frame.returns_tainted = False
        before = set(self.globals.tainted) | set(tainted_params)
        self._block(function.body, frames + [frame], depth + 1)
        calls_learner = self._calls_learner(function, frame, before)
        return calls_learner, frame.returns_tainted

    def _calls_learner(self, function, frame, before):
        # the helper gave learner code its parameters (they became tainted inside)
        params = function.args
        names = {a.arg for a in params.posonlyargs + params.args + params.kwonlyargs}
        if params.vararg:
            names.add(params.vararg.arg)
        if params.kwarg:
            names.add(params.kwarg.arg)
        return bool((frame.tainted & names) - before) or any(
            isinstance(sub, ast.Name) and sub.id in before - names
            and isinstance(sub.ctx, ast.Load) for sub in ast.walk(function)
            if isinstance(sub, ast.Name))
