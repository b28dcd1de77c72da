"""The op files hold to the architecture: their modules import each other without cycles
(function-level imports counted), and every op computes through the backend -- a
learner's backend sees the forward and the backward of each one."""
import ast
import pathlib

import numpy as np
import pytest

import learntorch
from learntorch.backends import NumpyBackend

OPS = pathlib.Path(learntorch.__file__).parent / "ops"


def _imports_within_ops(path):
    """The ops modules ``path`` imports, at any depth of the file (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            found.update(n.split(".")[0] for n in names)
    return {n for n in found if (OPS / f"{n}.py").exists()}


def test_the_ops_modules_import_each_other_without_cycles():
    graph = {p.stem: _imports_within_ops(p) for p in OPS.glob("*.py")}
    state = {}

    def visit(module, path):
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", f"import cycle: {' -> '.join(path + [module])}"
        state[module] = "open"
        for dep in sorted(graph[module]):
            visit(dep, path + [module])
        state[module] = "done"

    for module in sorted(graph):
        visit(module, [])


# the functions of ops/ that call numpy, and why that is not computing on tensor values
NUMPY_BOOKKEEPING = {
    ("indexing.py", "_as_items"): "isinstance checks against np.ndarray",
    ("indexing.py", "_convert_index"): "turns Python index lists into index arrays",
    ("indexing.py", "_dims_used"): "reads the shape of a Python index list",
    ("indexing.py", "region_shape"): "a one-byte probe that gives x[region]'s shape",
    ("_inplace.py", "check_no_partial_overlap"): "asks whether two arrays share memory",
    ("_inplace.py", "_view_region"): "integer arithmetic on memory addresses",
    ("_inplace.py", "_addresses"): "integer arithmetic on memory addresses",
    ("arithmetic.py", "_wrapped_int"): "wraps a Python int into a small integer dtype",
    ("arithmetic.py", "_check_broadcast"): "shape arithmetic",
    ("sets.py", "searchsorted"): "the shape of a value, for an error message",
}


def _numpy_calls(path):
    """(function name, numpy attribute) for every np.<name>(...) call in ``path``."""
    tree = ast.parse(path.read_text())
    calls = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "np"):
                calls.append((fn.name, node.func.attr))
    return calls


def test_ops_compute_on_arrays_only_through_the_backend():
    """No np.<compute>(...) in the op files: what numpy does for an op, the backend does
    (padding.py is converted separately); the bookkeeping above is the exception."""
    offenders = []
    for path in sorted(OPS.glob("*.py")):
        if path.name == "padding.py":
            continue
        for function, attr in _numpy_calls(path):
            if attr in ("dtype", "iinfo", "integer", "number", "ndarray"):
                continue  # types and dtype information, no computation
            if (path.name, function) not in NUMPY_BOOKKEEPING:
                offenders.append(f"{path.name}: {function}() calls np.{attr}")
    assert offenders == []


class Spy(NumpyBackend):
    """The reference backend, recording the name of every primitive called."""

    def __init__(self):
        self.calls = []

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        if callable(value) and not name.startswith("_") and name != "calls":
            calls = object.__getattribute__(self, "calls")

            def recorded(*args, **kwargs):
                calls.append(name)
                return value(*args, **kwargs)
            return recorded
        return value


X = np.array([[0.3, -1.2, 2.0], [0.5, 0.5, -0.7]])
IDX = np.array([[0, 1, 0], [1, 1, 0]])

# every differentiable op family of ops/: a forward and (for float inputs) a backward
PROGRAMS = {
    "arithmetic": lambda m, x: m.div(x * 2 + x / 3 - x ** 2, 1, rounding_mode="floor") % 2 + 3 / x,
    "unary": lambda m, x: x.exp() + x.abs().log() + x.sin() + x.tan() + x.sinh() + x.sign(),
    "special": lambda m, x: m.erf(x) + x.abs().add(1).lgamma() + x.abs().add(1).digamma(),
    "binary": lambda m, x: m.atan2(x, x + 3) + m.hypot(x, x) + m.xlogy(x, x.abs() + 1),
    "activations": lambda m, x: x.relu() + x.tanh() + m.nn.functional.softplus(x) + x.clamp(0, 1),
    "comparison": lambda m, x: m.where(x > 0, x, x * 2) + m.maximum(x, x.flip(0)),
    "ternary": lambda m, x: m.addcmul(x, x, x) + m.lerp(x, x * 2, 0.3),
    "reductions": lambda m, x: x.sum(0) + x.mean(0) + x.prod(0) + x.amax(0) + x.var(0)
    + x.norm(dim=0) + x.logsumexp(0) + x.max(0).values + x.median(0).values + m.nansum(x, 0),
    "cumulative": lambda m, x: x.cumsum(1) + x.cumprod(1) + x.cummax(1).values,
    "sorting": lambda m, x: x.sort(1).values + x.topk(3).values + x.kthvalue(2, 1).values[:, None],
    "indexing": lambda m, x: x[:, 1:] + x[[0, 1]][:, :2] + x.gather(1, m.tensor(IDX))[:, :2]
    + x.index_select(1, m.tensor([0, 2])),
    "scatter": lambda m, x: x.scatter_add(1, m.tensor(IDX), x) + x.scatter_reduce(
        1, m.tensor(IDX), x, "amax") + x.masked_fill(x > 1, 0.0),
    "shape": lambda m, x: x.t().reshape(6)[:4].reshape(2, 2).repeat(1, 2).flip(0).roll(1, 1)
    .tril() + x.diagonal().sum() + m.diag_embed(x[0]).sum(),
    "joining": lambda m, x: m.cat([x, x]).sum(0) + m.stack([x, x]).sum(0)[0],
    "linalg": lambda m, x: x @ x.t() + m.einsum("ij,kj->ik", x, x) + m.cross(x, x.flip(0), 1)
    .sum(),
    "softmax": lambda m, x: x.softmax(1) + x.log_softmax(0),
    "in-place": lambda m, x: (lambda y: (y.mul_(2), y[0].add_(1), y.clamp_(-1, 1), y)[-1])(x * 1),
    "quantile": lambda m, x: m.quantile(x, 0.3, dim=1),
}


@pytest.mark.parametrize("tier", ["reference", "fast"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_learners_backend_computes_forward_and_backward_of_every_op(name, tier):
    spy = Spy()
    with learntorch.tiers.use(tier), learntorch.backends.use(spy):
        x = learntorch.tensor(X, requires_grad=True)
        out = PROGRAMS[name](learntorch, x)
        forward_calls = list(spy.calls)
        out.sum().backward()
        backward_calls = spy.calls[len(forward_calls):]
    assert forward_calls, f"{name}: the forward pass never reached the backend"
    assert backward_calls, f"{name}: the backward pass never reached the backend"
    with learntorch.tiers.use(tier):  # and the spy changed nothing
        y = learntorch.tensor(X, requires_grad=True)
        expected = PROGRAMS[name](learntorch, y)
        expected.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())
