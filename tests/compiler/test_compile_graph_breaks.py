"""Python that reads a tensor's value breaks the graph, as in torch.

Without ``fullgraph`` the compiled function still gives eager's results on both sides
of a data-dependent branch (the other side is captured when a call takes it: one
recompilation).  With ``fullgraph=True`` the break is an error of torch's kind
(``Unsupported``, a RuntimeError) that names the line of user code.
"""
import pytest

import learntorch
from learntorch._dynamo.exc import Unsupported
from oracle import require_torch


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_each_side_of_a_data_dependent_branch_gives_eagers_result():
    f = learntorch.compile(branchy)
    up, down = learntorch.ones(3), -learntorch.ones(3)
    assert f(up).tolist() == branchy(up).tolist() == [2.0] * 3
    assert f(down).tolist() == branchy(down).tolist() == [-2.0] * 3
    assert f(up).tolist() == [2.0] * 3
    assert f.stats["recompiles"] == 1 and f.stats["graph_breaks"] >= 2


def test_fullgraph_makes_the_break_an_error_naming_the_line():
    with pytest.raises(Unsupported) as error:
        learntorch.compile(branchy, fullgraph=True)(learntorch.ones(3))
    message = str(error.value)
    assert "Data-dependent branching" in message
    assert "if x.sum() > 0:" in message and "from user code:" in message


def test_the_error_has_torchs_type():
    torch = require_torch()
    assert issubclass(Unsupported, RuntimeError)
    assert issubclass(torch._dynamo.exc.Unsupported, RuntimeError)
    with pytest.raises(RuntimeError):
        torch.compile(branchy, fullgraph=True)(torch.ones(3))


def test_item_breaks_the_graph_and_still_computes_eagers_result():
    def scale_by_max(x):
        return x / x.max().item()
    x = learntorch.tensor([1.0, 4.0, 2.0])
    assert learntorch.compile(scale_by_max)(x).tolist() == scale_by_max(x).tolist()
    with pytest.raises(Unsupported, match=r"item\(\)"):
        learntorch.compile(scale_by_max, fullgraph=True)(x)
