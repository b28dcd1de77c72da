"""Which calls replay the compiled program and which recompile (torch.compile's rules).

A cache entry is guarded on its inputs' shapes, dtypes, devices, strides and
requires_grad, and on grad mode; a call that breaks a guard captures again (a
recompilation) and names the failed guard.  ``dynamic=None`` (the default) makes the
second entry accept any size in the dims that changed, so a third size replays;
``dynamic=False`` recompiles for every size, up to ``recompile_limit`` (8, torch's),
after which it warns with torch's words and runs eagerly.
"""
import warnings

import pytest

import learntorch
from learntorch._dynamo import config
from oracle import require_torch


def double_plus_one(x):
    return x * 2 + 1


def calls(compiled, *inputs_list):
    for inputs in inputs_list:
        compiled(*inputs)
    return compiled.stats["recompiles"]


def test_same_shape_and_dtype_replays_without_recompiling():
    f = learntorch.compile(double_plus_one)
    assert calls(f, (learntorch.randn(4, 5),), (learntorch.randn(4, 5),)) == 0
    assert f.stats["captures"] == 1


@pytest.mark.parametrize("change, guard", [
    (lambda: learntorch.randn(4, 5, dtype=learntorch.float64), "dtype"),
    (lambda: learntorch.randn(4, 5, requires_grad=True), "requires_grad"),
    (lambda: learntorch.randn(5, 4).t(), "stride"),
])
def test_a_broken_guard_recompiles_and_names_the_guard(change, guard):
    f = learntorch.compile(double_plus_one)
    assert calls(f, (learntorch.randn(4, 5),), (change(),)) == 1
    assert guard in f.recompile_reasons[-1], f.recompile_reasons


def test_grad_mode_is_guarded():
    f = learntorch.compile(double_plus_one)
    x = learntorch.randn(3)
    f(x)
    with learntorch.no_grad():
        f(x)
    assert f.stats["recompiles"] == 1, f.recompile_reasons


def test_automatic_dynamic_recompiles_once_then_accepts_any_size():
    f = learntorch.compile(double_plus_one)
    sizes = [(learntorch.randn(n, 3),) for n in (4, 6, 9, 17)]
    assert calls(f, *sizes) == 1
    out = f(learntorch.ones(11, 3))
    assert out.shape == (11, 3) and float(out[0, 0]) == 3.0


def test_static_shapes_recompile_for_each_size():
    f = learntorch.compile(double_plus_one, dynamic=False)
    assert calls(f, *[(learntorch.randn(n),) for n in (2, 3, 4)]) == 2


def test_past_the_recompile_limit_it_warns_as_torch_and_runs_eagerly():
    f = learntorch.compile(double_plus_one, dynamic=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(2, 2 + config.recompile_limit + 3):
            out = f(learntorch.ones(n))
            assert out.tolist() == [3.0] * n
    messages = [str(w.message) for w in caught]
    assert len([m for m in messages if "recompile_limit" in m]) == 1, messages
    assert f"hit config.recompile_limit ({config.recompile_limit})" in messages[0]
    assert f.stats["eager_calls"] == 3


def test_the_recompile_limit_is_torchs():
    torch = require_torch()
    assert config.recompile_limit == torch._dynamo.config.recompile_limit


def test_reset_forgets_every_entry():
    f = learntorch.compile(double_plus_one)
    f(learntorch.randn(3))
    learntorch.compiler.reset()
    f(learntorch.randn(3))
    assert f.stats["captures"] == 2 and f.stats["recompiles"] == 0


def test_the_guard_code_is_readable_python_naming_each_input():
    f = learntorch.compile(double_plus_one)
    f(learntorch.randn(4, 5))
    assert f.guards.startswith("def check_guards(x)")
    assert "x._data.shape == (4, 5)" in f.guards


def test_entering_or_leaving_autocast_recompiles_and_each_graph_keeps_its_dtypes():
    """A graph captured in an autocast region records the casts its policy made (the
    linear layer computes in bfloat16); outside the region the same call must compute in
    float32 again, as eager does: the autocast state is a guard."""
    layer = learntorch.nn.Linear(4, 3)
    x = learntorch.randn(2, 4)
    compiled = learntorch.compile(lambda x: layer(x).relu())
    with learntorch.autocast("cpu"):
        inside = compiled(x)
        assert inside.dtype is learntorch.bfloat16
        assert learntorch.equal(inside, layer(x).relu())
    outside = compiled(x)
    assert outside.dtype is learntorch.float32
    assert learntorch.equal(outside, layer(x).relu())
    with learntorch.autocast("cpu"):
        assert compiled(x).dtype is learntorch.bfloat16
