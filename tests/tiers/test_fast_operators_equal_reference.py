"""The fast tier's ``*`` and ``+`` (``learntorch/_fast/operators.py``) record what the reference
``ops.arithmetic.mul``/``add`` record through ``Function.apply``: the same values bit for bit,
the same graph (node names, edges, metadata, saved tensors and their versions, constants),
the same gradients -- accumulated into ``.grad`` as torch does -- and they step aside for
everything they do not handle (broadcasting, float16, no_grad, a wrapped ``apply``)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import learntorch
from learntorch import tiers
from learntorch.autograd import function as function_module

from tier_graphs import graph_facts as _graph

torch = pytest.importorskip("torch")

# programs of x (requires grad), w and b (leaves whose requires_grad is drawn)
PROGRAMS = {
    "tensor_times_leaf": lambda x, w, b: x * w,
    "leaf_times_tensor": lambda x, w, b: w * x,
    "times_float": lambda x, w, b: x * 2.5,
    "float_times": lambda x, w, b: 2.5 * x,
    "plus_leaf": lambda x, w, b: x + b,
    "float_plus": lambda x, w, b: 0.5 + x,
    "plus_float": lambda x, w, b: x + 0.25,
    "leaf_chain": lambda x, w, b: ((x * w + b) * w + b) * w + b,
    "used_twice": lambda x, w, b: x * x + x,
    "broadcast_falls_back": lambda x, w, b: x * w[..., :1] + b[..., :1],
    "float16_falls_back": lambda x, w, b: x.half() * w.half() + b.half(),
}


def _run(tier, program, data, w_grad, b_grad):
    with tiers.use(tier):  # (each tier with its own backend)
        x = learntorch.from_numpy(data[0].copy()).requires_grad_(True)
        w = learntorch.from_numpy(data[1].copy()).requires_grad_(w_grad)
        b = learntorch.from_numpy(data[2].copy()).requires_grad_(b_grad)
        out = program(x, w, b)
        graph = _graph(out)
        values = out.detach().float().numpy().copy()
        out.sum().backward()
        first = [None if t.grad is None else t.grad.numpy().copy() for t in (x, w, b)]
        program(x, w, b).sum().backward()  # a second backward adds into .grad
        second = [None if t.grad is None else t.grad.numpy().copy() for t in (x, w, b)]
    return values, graph, first, second


def _equal(a, b):
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=25, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]),
       shape=st.sampled_from([(), (1,), (3,), (2, 3)]))
def test_fast_operators_record_and_differentiate_as_the_reference(name, data, dtype, shape):
    if name == "broadcast_falls_back" and shape == ():
        shape = (1,)
    arrays = [np.asarray(data.draw(st.lists(st.floats(-3, 3, width=32), min_size=1, max_size=1))[0]
                         + np.arange(int(np.prod(shape))).reshape(shape), dtype=dtype)
              for _ in range(3)]
    w_grad, b_grad = data.draw(st.booleans()), data.draw(st.booleans())
    fast = _run("fast", PROGRAMS[name], arrays, w_grad, b_grad)
    reference = _run("reference", PROGRAMS[name], arrays, w_grad, b_grad)
    assert _equal(fast[0], reference[0])
    assert fast[1] == reference[1]
    for got, want in zip(fast[2] + fast[3], reference[2] + reference[3]):
        assert _equal(got, want)


def test_the_leaf_chain_accumulates_into_grad_as_torch():
    """y = y * w + b, 50 times: w and b each receive 50 contributions; the first backward
    makes .grad a new tensor, the next one adds into that same tensor in place."""
    def grads(lib):
        w = lib.tensor([1.0001], requires_grad=True)
        b = lib.tensor([0.0001], requires_grad=True)
        found = []
        for _ in range(2):
            y = lib.tensor([0.5])
            for _ in range(50):
                y = y * w + b
            y.backward()
            found.append((w.grad, w.grad.numpy().copy(), b.grad.numpy().copy()))
        return found
    (w1, gw1, gb1), (w2, gw2, gb2) = grads(learntorch)
    (_, tw1, tb1), (_, tw2, tb2) = grads(torch)
    assert w2 is w1  # accumulated in place, the same tensor
    for got, want in ((gw1, tw1), (gb1, tb1), (gw2, tw2), (gb2, tb2)):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_an_in_place_change_of_an_operand_saved_by_mul_is_reported_at_backward():
    x = learntorch.ones(3, requires_grad=True)
    w = learntorch.ones(3, requires_grad=True)
    y = x * 2.0
    out = y * w
    with learntorch.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_the_operators_go_through_a_wrapped_apply():
    """The profiler, autocast and fx capture wrap ``Function.apply``: they must see * and +."""
    seen = []

    def wrapper(apply):
        def wrapped(cls, *args, **kwargs):
            seen.append(cls.__name__)
            return apply(cls, *args, **kwargs)
        return wrapped

    x = learntorch.ones(2, requires_grad=True)
    restore = function_module.wrap_apply(wrapper)
    try:
        x * x + 1.0
    finally:
        restore()
    assert seen == ["Mul", "Add"]
    x * x + 1.0
    assert seen == ["Mul", "Add"]  # unwrapped again: nothing more reaches the wrapper


def test_an_operand_changed_in_place_before_mul_saved_it_is_not_reported():
    """mul records the operand's version when it saves it: a change made before is fine."""
    x = learntorch.ones(3, requires_grad=True)
    w = learntorch.ones(3, requires_grad=True)
    y = x * 2.0
    with learntorch.no_grad():
        y.add_(1.0)  # y is at version 1 now
    (y * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 3.0, dtype=np.float32))


@pytest.mark.parametrize("name", ["times_float", "tensor_times_leaf", "plus_leaf", "leaf_chain"])
@pytest.mark.parametrize("how", ["no_grad", "nothing_requires_grad"])
def test_unrecorded_operators_give_the_references_plain_tensors(name, how):
    def run(tier):
        with tiers.use(tier):
            a, w, b = (learntorch.tensor([[0.5, -1.25]], requires_grad=how == "no_grad") * 1.0
                       for _ in range(3))
            with learntorch.set_grad_enabled(how != "no_grad"):
                out = PROGRAMS[name](a.detach().requires_grad_(how == "no_grad"), w, b)
            return out
    fast, reference = run("fast"), run("reference")
    assert fast.grad_fn is None and not fast.requires_grad and fast._version == 0
    assert fast.dtype is reference.dtype and fast.shape == reference.shape
    np.testing.assert_array_equal(fast.numpy(), reference.numpy())
