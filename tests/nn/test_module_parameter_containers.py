"""nn.ParameterList and nn.ParameterDict, and ModuleList's repr, behave as torch's.

Registration (names, state_dict, optimizers see them), Tensors becoming Parameters,
other objects kept, indexing and slicing, dict methods and update's order, errors,
and the repr -- ModuleList collapsing runs of equal children, Sequential not.
"""
import collections

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
from oracle import both, both_raise, require_torch


def same_repr(mine, theirs):
    # learntorch names its dtypes learntorch.float32 where torch says torch.float32
    assert repr(mine).replace("learntorch.", "torch.") == repr(theirs)


@pytest.mark.parametrize("build", [
    lambda nn: nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(2, 2), nn.Linear(2, 2),
                              nn.Sequential(nn.ReLU(), nn.ReLU())] * 2),
    lambda nn: nn.ModuleList([nn.Linear(3, 3) for _ in range(6)]),
    lambda nn: nn.ModuleList([nn.Tanh(), nn.ReLU(), nn.Tanh()]),
    lambda nn: nn.ModuleList(),
    lambda nn: nn.ModuleList([nn.ModuleList([nn.ReLU(), nn.ReLU()])] * 3),
    lambda nn: nn.Sequential(nn.ReLU(), nn.ReLU(), nn.Linear(2, 2), nn.Linear(2, 2)),
    lambda nn: nn.Sequential(collections.OrderedDict(a=nn.ReLU(), b=nn.ReLU())),
], ids=["mixed", "six_linear", "no_runs", "empty", "nested", "sequential", "sequential_named"])
def test_container_repr_is_torchs_runs_collapsed_in_module_lists_only(build):
    torch = require_torch()
    same_repr(build(nn), build(torch.nn))


def test_a_model_holding_a_module_list_prints_the_collapsed_list_indented():
    torch = require_torch()

    def build(nn):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
                self.head = nn.Linear(4, 1)
        return Net()
    same_repr(build(nn), build(torch.nn))


def test_parameter_list_registers_converts_and_keeps_other_objects_like_torch():
    def program(lib):
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)),
                                   lib.zeros(3, dtype=lib.float64), 3, "x"])
        pl.append(lib.ones(1))
        pl.extend([lib.nn.Parameter(lib.ones(2))])
        pl[2] = lib.ones(4)  # a tensor where an int was: now a Parameter
        kinds = [type(p).__name__ for p in pl]
        names = [n for n, _ in pl.named_parameters()]
        sliced = pl[1:4]
        return (len(pl), kinds, names, [tuple(p.shape) for p in pl.parameters()],
                type(sliced).__name__, len(sliced), pl[-1].shape[0], pl[1].requires_grad)
    mine, theirs = both(program)
    assert mine == theirs
    assert mine[1] == ["Parameter", "Parameter", "Parameter", "str", "Parameter", "Parameter"]


def test_parameter_list_in_a_module_is_trained_and_saved_under_torchs_names():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weights = lib.nn.ParameterList(
                    [lib.nn.Parameter(lib.full((2,), float(i))) for i in range(3)])

            def forward(self, x):
                for w in self.weights:
                    x = x * w
                return x.sum()
        net = Net()
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        net(lib.ones(2)).backward()
        opt.step()
        results.append((list(net.state_dict()), [p.detach().numpy().copy() for p in net.weights],
                        repr(net)))
    assert results[0][0] == results[1][0] == ["weights.0", "weights.1", "weights.2"]
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b)
    assert results[0][2].replace("learntorch.", "torch.") == results[1][2]


def test_parameter_list_and_dict_repr_is_torchs():
    torch = require_torch()
    build_list = lambda lib: lib.nn.ParameterList(  # noqa: E731
        [lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(3, dtype=lib.float64), 3, "x"])
    build_dict = lambda lib: lib.nn.ParameterDict(  # noqa: E731
        {"w": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(1), "name": "s"})
    for build in (build_list, build_dict):
        same_repr(build(learntorch), build(torch))
    same_repr(learntorch.nn.ParameterList([learntorch.ones(1)]),
              torch.nn.ParameterList([torch.ones(1)]))


def test_parameter_dict_methods_and_update_order_are_torchs():
    def program(lib):
        pd = lib.nn.ParameterDict({"b": lib.ones(1), "a": lib.nn.Parameter(lib.ones(2))})
        order = list(pd)  # a plain dict is added in sorted key order
        pd.update([("z", lib.ones(3)), ("c", 1.5)])
        pd.update(collections.OrderedDict(y=lib.ones(1), x=lib.ones(1)))
        pd |= lib.nn.ParameterDict({"w": lib.ones(1)})
        popped = pd.pop("c")
        default = pd.setdefault("new", lib.ones(2))
        key, _ = pd.popitem()
        copied = pd.copy()
        merged = pd | lib.nn.ParameterDict({"q": lib.ones(1)})
        return (order, list(pd.keys()), [n for n, _ in pd.named_parameters()], popped, key,
                type(default).__name__, "a" in pd, pd.get("missing", 7), len(copied),
                list(merged), type(pd["z"]).__name__, list(reversed(pd)))
    mine, theirs = both(program)
    assert mine == theirs


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.ParameterList([lib.ones(1)])[3],
    lambda lib: lib.nn.ParameterList().extend(lib.ones(2)),
    lambda lib: lib.nn.ParameterList([lib.ones(1)])(lib.ones(1)),
    lambda lib: lib.nn.ParameterDict({"a": lib.ones(1)})[1],
    lambda lib: lib.nn.ParameterDict({"a": lib.ones(1)})["b"],
    lambda lib: lib.nn.ParameterDict([("a", lib.ones(1), 3)]),
    lambda lib: lib.nn.ParameterDict(5),
], ids=["list_index", "list_extend_tensor", "list_call", "dict_int_key", "dict_missing",
        "dict_triple", "dict_not_iterable"])
def test_errors_have_torchs_type(call):
    both_raise(call)
