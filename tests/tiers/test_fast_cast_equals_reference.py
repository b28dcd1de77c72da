"""The fast tier's cast (``learntorch/_fast/cast.py``) records what the reference
``ops.shape.to_dtype`` records through ``ToDtype.apply``: the same values and dtypes bit for
bit (torch's rounding), the same graph (node names, edges, metadata, ``input_dtype``), the
same gradients over two backward calls, the same errors and hooks -- and it steps aside for
what it does not handle (integer dtypes, a wrapped ``apply``)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from learntorch import tiers
from learntorch._fast import cast as fast_cast
from learntorch.amp import autocast_mode
from learntorch.autograd import function as function_module
from learntorch.ops import shape

from tier_graphs import graph_facts as _graph

torch = pytest.importorskip("torch")

FLOATS = ("float16", "bfloat16", "float32")
PAIRS = [(a, b) for a in FLOATS for b in FLOATS if a != b] + [("float64", "float32")]


def _bits(t):
    return t.detach().numpy().tobytes(), t.dtype.name


def _grads(*leaves):
    return [None if t.grad is None else _bits(t.grad) for t in leaves]


def _run(tier, source, target, values, program):
    with tiers.use(tier):
        x = learntorch.from_numpy(values.copy()).to(getattr(learntorch, source))
        x.requires_grad_(True)
        out = program(x, getattr(learntorch, target))
        found = [_bits(out), out.requires_grad, out.is_leaf, _graph(out)]
        out.float().sum().backward(retain_graph=True)
        found.append(_grads(x))
        out.float().sum().backward()  # a second backward adds into .grad
        found.append(_grads(x))
    return found


PROGRAMS = {
    "leaf": lambda x, d: x.to(d),
    "non_leaf": lambda x, d: (x * 2.0).to(d),
    "there_and_back": lambda x, d: x.to(d).to(x.dtype) * x,
    "used_twice": lambda x, d: x.to(d) + x.to(d),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=8, deadline=None)
@given(pair=st.sampled_from(PAIRS),
       values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32),
                       min_size=1, max_size=6))
def test_the_fast_cast_records_and_differentiates_as_the_reference(name, pair, values):
    values = np.asarray(values, np.float32)
    fast = _run("fast", *pair, values, PROGRAMS[name])
    assert fast == _run("reference", *pair, values, PROGRAMS[name])


@pytest.mark.parametrize("source,target", PAIRS)
def test_the_cast_rounds_as_torch_and_overflows_to_inf_quietly(source, target, recwarn):
    values = np.array([1.0, 1 + 2 ** -9, -3.3e-6, 7e4, 3.4e38, np.inf, np.nan, 0.1], np.float32)
    x = torch.from_numpy(values).to(getattr(torch, source)).to(getattr(torch, target))
    with tiers.use("fast"):
        ours = learntorch.from_numpy(values).to(getattr(learntorch, source)).to(
            getattr(learntorch, target))
    assert ours.dtype.name == str(x.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.float().numpy(), x.float().numpy())
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def _forward_calls(monkeypatch):
    """Count the reference ``ToDtype.forward`` runs: the fast cast makes none."""
    calls = []
    forward = shape.ToDtype.forward
    monkeypatch.setattr(shape.ToDtype, "forward",
                        staticmethod(lambda ctx, x, d: calls.append(d) or forward(ctx, x, d)))
    return calls


def test_the_fast_tier_casts_without_apply_and_the_reference_tier_with_it(monkeypatch):
    calls = _forward_calls(monkeypatch)
    x = learntorch.ones(3, requires_grad=True)
    with tiers.use("fast"):
        assert shape.to_dtype is fast_cast.to_dtype and autocast_mode.to_dtype is fast_cast.to_dtype
        x.half()
        with learntorch.autocast("cpu"):
            learntorch.nn.functional.linear(x, x.reshape(1, 3))
    assert calls == []
    with tiers.use("reference"):  # what LEARNTORCH_REFERENCE=1 runs
        assert shape.to_dtype is fast_cast.reference_to_dtype
        assert autocast_mode.to_dtype is fast_cast.reference_to_dtype
        x.half()
    assert calls == [learntorch.float16]


def test_what_the_fast_cast_does_not_handle_goes_to_apply(monkeypatch):
    calls = _forward_calls(monkeypatch)
    x = learntorch.tensor([1.5, -2.5], requires_grad=True)
    with tiers.use("fast"):
        assert x.to(learntorch.int64).tolist() == [1, -2]  # an integer target
        seen = []
        restore = function_module.wrap_apply(
            lambda apply: lambda cls, *a, **k: seen.append(cls.__name__) or apply(cls, *a, **k))
        try:
            x.bfloat16()  # the profiler and fx capture must see the cast
        finally:
            restore()
    assert seen == ["ToDtype"] and len(calls) == 2


def _hooks_and_errors(tier):
    with tiers.use(tier):
        log = []
        x = learntorch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.bfloat16()
        y.register_hook(lambda g: log.append(("y", _bits(g))))
        y.grad_fn.register_prehook(lambda go: log.append(("node", _bits(go[0]))))
        x.register_hook(lambda g: g * 2.0)
        (y * y).float().sum().backward()
        log.append(("x.grad", _bits(x.grad)))
        with learntorch.no_grad():
            z = x.half()
        log.append(("no_grad", z.requires_grad, z.grad_fn))
        w = x.half()
        saved = w * w  # Mul saves w: an in-place change of the cast's output is reported
        with learntorch.no_grad():
            w.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
            saved.sum().backward()
        log.append(str(error.value))
        s = (x.half() * x.half()).sum()
        s.backward()
        with pytest.raises(RuntimeError) as again:  # no retain_graph: the graph was freed
            s.backward()
        log.append(str(again.value))
    return log


def test_hooks_no_grad_and_version_counters_are_the_reference_s():
    fast, reference = _hooks_and_errors("fast"), _hooks_and_errors("reference")
    assert repr(fast) == repr(reference)


def _autocast_layer(tier):
    with tiers.use(tier):
        learntorch.manual_seed(0)
        layer = learntorch.nn.Linear(4, 3)
        x = learntorch.randn(2, 4)
        with learntorch.autocast("cpu"):
            a, b = layer(x), layer(x)  # one cached bfloat16 copy of the weight, reused
            loss = (a.float() * b.float()).sum()
        cast_nodes = {id(n) for out in (a, b) for n, _ in out.grad_fn.next_functions
                      if n is not None and n.name() == "ToCopyBackward0"}
        loss.backward()
        return (_graph(loss), len(cast_nodes), _bits(a), _grads(layer.weight, layer.bias))


def test_autocast_reuses_its_cached_weight_casts_and_trains_as_the_reference():
    fast, reference = _autocast_layer("fast"), _autocast_layer("reference")
    assert fast[1] == reference[1] == 2  # weight and bias, each cast once for two layers
    assert fast[0] == reference[0]
    assert fast[2] == reference[2] and fast[2][1] == "bfloat16"
    assert fast[3] == reference[3] and [g[1] for g in fast[3]] == ["float32", "float32"]
