"""In-place operations: version counters, saved-tensor checks, leaf rules, gradients, vs torch.

The rule (``learntorch/ops/_inplace.py``): an in-place op writes into the
tensor's memory and bumps the version counter it shares with its views; a
leaf that requires grad may not be changed under grad mode; on a graph tensor
the op is recorded and the tensor takes over the new history -- through a
view, the base's history is rewritten.  Each case runs in learntorch and in
torch and must agree.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import learntorch
from oracle import arrays, as_numpy, assert_close, require_torch, torch


def both(fn):
    """``fn(lib)`` in learntorch and torch: the two results (or exception types)."""
    require_torch()
    out = []
    for lib in (learntorch, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # compared by type below
            out.append(type(e))
    return out


def assert_same_tensors(got, expected, names):
    """Equal tensors, or the same exception type where torch refuses."""
    if isinstance(expected, type) or isinstance(got, type):
        assert got is expected, f"learntorch: {got}, torch: {expected}"
        return
    for name, g, e in zip(names, got, expected):
        assert_close(g, e, what=name)


# ---------------------------------------------------------------- version counters
VERSION_SEQUENCES = {
    "ops and views": lambda lib: _versions(lib),
    "operators": lambda lib: _operators(lib),
    "setitem, fill_, zero_, copy_": lambda lib: _writes(lib),
    "out-of-place ops do not bump": lambda lib: _no_bump(lib),
}


def _versions(lib):
    x = lib.ones(3, 2)
    y, z = x[1:], x.t()
    x.add_(1)
    y.mul_(2)
    z.sub_(1)
    return x._version, y._version, z._version, x.detach()._version


def _operators(lib):
    x = lib.ones(3)
    x += 1
    x *= 2
    x -= 1
    x /= 3
    return x._version


def _writes(lib):
    x = lib.zeros(2, 3)
    x[0] = 1.0
    x[:, 1] = lib.tensor([2.0, 3.0])
    x.fill_(4)
    x.zero_()
    x.copy_(lib.ones(3))
    x.masked_fill_(x > 0, 5.0)
    x.clamp_(0, 1)
    return x._version


def _no_bump(lib):
    x = lib.ones(3)
    _ = x + 1, x.exp(), x.view(3), x.clone(), x[0], x.t()
    return x._version


@pytest.mark.parametrize("name", list(VERSION_SEQUENCES))
def test_version_counter_matches_torch(name):
    got, expected = both(VERSION_SEQUENCES[name])
    assert got == expected


# ---------------------------------------------------------------- saved tensors
SAVED = {
    "output saved by exp": lambda lib, x: (lambda y: (y.sum(), y.add_(1)))(x.exp()),
    "input saved by mul": lambda lib, x: (lambda y: ((y * y).sum(), y.mul_(2)))(x * 1),
    "modified through a view": lambda lib, x: (lambda y: ((y * y).sum(), y[1:].zero_()))(x * 1),
    "modified by setitem": lambda lib, x: (lambda y: (y.exp().sum() + (y * y).sum(),
                                                      y.__setitem__(0, 1.0)))(x * 1),
    "base modified, view saved": lambda lib, x: (lambda y: ((y[1:] ** 2).sum(), y.add_(1)))(
        x * 1),
}


@pytest.mark.parametrize("name", list(SAVED))
def test_backward_after_modifying_a_saved_tensor_is_an_error(name):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        loss, _ = SAVED[name](lib, x)
        try:
            loss.backward()
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            return "error"
        return as_numpy(x.grad).tolist()
    got, expected = both(run)
    assert got == expected


def test_the_error_names_the_tensor_its_version_and_the_fix():
    x = learntorch.ones(2, 3, requires_grad=True)
    y = x.exp()
    z = y * 2
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    message = str(info.value)
    assert "[2, 3]" in message and "version 1" in message and "version 0" in message
    assert "clone()" in message


# ---------------------------------------------------------------- leaves and grad mode
@pytest.mark.parametrize("op", [lambda x: x.add_(1), lambda x: x.zero_(), lambda x: x.fill_(2),
                                lambda x: x.copy_(x.detach() * 2), lambda x: x.mul_(2),
                                lambda x: x.__setitem__(0, 3.0)])
def test_in_place_on_a_leaf_that_requires_grad_is_refused_with_torchs_message(op):
    for lib in (learntorch, require_torch()):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                               "in an in-place operation"):
            op(x)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            op(x[1:])
        assert x._version == 0


def test_in_place_on_a_leaf_is_allowed_under_no_grad_and_stays_a_leaf():
    got = both(lambda lib: _optimizer_step(lib))
    assert got[0] == got[1]


def _optimizer_step(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with lib.no_grad():
        w.sub_(0.5 * w.grad)
        w[0] = w[0] * 2
        w.grad.zero_()
    return w.tolist(), w.is_leaf, w.requires_grad, w.grad_fn is None, w._version


# ---------------------------------------------------------------- gradients through in-place ops
NON_LEAF = {
    "add_ then mul_": lambda lib, y: (y.add_(1), y.mul_(y.detach() + 0)),
    "mul_ by itself": lambda lib, y: y.mul_(y),
    "ops chain": lambda lib, y: (y.sub_(0.5), y.div_(2), y.pow_(2), y.exp_()),
    "activations": lambda lib, y: (y.sigmoid_(), y.tanh_(), y.relu_()),  # torch refuses
    "activations, then a copy": lambda lib, y: (y.sigmoid_(), y.relu_(), y.tanh_()),
    "clamp_ and neg_": lambda lib, y: (y.clamp_(-0.5, 0.5), y.neg_()),
    "masked_fill_": lambda lib, y: y.masked_fill_(y > 0, 0.0),
    "zero_ then add_": lambda lib, y: (y.zero_(), y.add_(y.detach() + 1)),
    "fill_ with a tensor": lambda lib, y: y.fill_(y[0, 1].detach() * 3),
    "mul_ by a detached alias (torch refuses)": lambda lib, y: (y.add_(1), y.mul_(y.detach())),
    "saved output changed (torch refuses)": lambda lib, y: (y.sigmoid_(), y.add_(1)),
    "partly overlapping operand (torch refuses)": lambda lib, y: y.view(-1)[1:].add_(
        y.view(-1)[:-1]),
    "copy_ broadcast": lambda lib, y: y.copy_(y[0].detach() * 2),
    "view add_": lambda lib, y: y[1:].add_(1),
    "view mul_ by base values": lambda lib, y: y[:, 0].mul_(y[:, 1].detach().clone()),
    "transposed view mul_": lambda lib, y: y.t()[0].mul_(10),
    "view of view": lambda lib, y: y[1:][:, 1:].mul_(3),
    "setitem after view op": lambda lib, y: (y[0].mul_(2), y.__setitem__((1, 0), 0.0)),
    "unsqueezed view exp_": lambda lib, y: y.unsqueeze(0)[0, 1].exp_(),
}


@pytest.mark.parametrize("name", list(NON_LEAF))
def test_gradients_through_in_place_ops_on_non_leaves_match_torch(name):
    a = np.array([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]])
    weight = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]])

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        y = x * 2
        NON_LEAF[name](lib, y)
        (y * lib.tensor(weight)).sum().backward()
        return y.detach(), x.grad
    assert_same_tensors(*both(run), ("values", "grad"))


VIEWS = [lambda y: y[1:], lambda y: y.t(), lambda y: y[:, ::2], lambda y: y[0],
         lambda y: y.unsqueeze(1)[:, 0], lambda y: y.view(-1)[2:5]]
OPS = [lambda v, w: v.mul_(w), lambda v, w: v.add_(w, alpha=2), lambda v, w: v.copy_(w),
       lambda v, w: v.div_(w * w + 1), lambda v, w: v.fill_(w.sum())]


@given(st.data())
def test_in_place_through_views_of_graph_tensors_matches_torch(data):
    a = data.draw(arrays(shape=(3, 4)), label="a")
    view_of = data.draw(st.sampled_from(VIEWS), label="view")
    op = data.draw(st.sampled_from(OPS), label="op")
    w_shape = tuple(view_of(torch.zeros(3, 4)).shape)
    w_arr = data.draw(arrays(shape=w_shape), label="w")

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        w = lib.tensor(w_arr, requires_grad=True)
        y = x * 1
        op(view_of(y), w)
        (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum().backward()
        return y.detach(), x.grad, w.grad
    assert_same_tensors(*both(run), ("values", "grad of x", "grad of w"))


STALE_VIEWS = {
    "base changed after the view was taken": lambda lib, y: (y[:, :2], y.mul_(3))[0],
    "another view changed the base": lambda lib, y: (y[0], y[:, 1].mul_(5))[0],
    "view of a view, base changed": lambda lib, y: (y.t()[1:][0], y.exp_())[0],
    "setitem on the base": lambda lib, y: (y[1], y.__setitem__((1, 2), 7.0))[0],
    "two changes": lambda lib, y: (y.view(-1)[::2], y.add_(1), y[0].mul_(y[1].detach()))[0],
}


@pytest.mark.parametrize("name", list(STALE_VIEWS))
def test_a_view_taken_before_an_in_place_change_of_its_base_sees_the_new_history(name):
    # the view's values changed with the base, so its gradient must follow the new history
    def run(lib):
        x = lib.tensor([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]], requires_grad=True)
        y = x * 2
        view = STALE_VIEWS[name](lib, y)
        (view * lib.arange(view.numel(), dtype=lib.float32).reshape(view.shape)).sum().backward()
        return view.detach(), x.grad
    assert_same_tensors(*both(run), ("view values", "grad"))


def test_in_place_on_a_view_of_a_plain_tensor_with_a_graph_operand_makes_the_base_a_graph_tensor():
    def run(lib):
        base = lib.zeros(2, 3)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        row, column = base[1], base[:, 0]
        row.add_(w * w)
        (base * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return base.tolist(), w.grad.tolist(), base.is_leaf, column.requires_grad
    got, expected = both(run)
    assert got == expected


def test_in_place_on_a_detached_view_leaves_the_bases_history_alone():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 1
        d = y[1:].detach()
        w = lib.full((2,), 2.0, requires_grad=True)
        d.mul_(w)  # changes y's values, not its history
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), w.grad is None, y.grad_fn.name()
    got, expected = both(run)
    assert got == expected


def test_overwriting_infinities_gives_the_new_values_not_nan():
    # zero_/fill_/copy_ on a graph tensor must not be computed as "old * 0 + value"
    def run(lib):
        x = lib.tensor([1.0, float("inf"), float("nan")], requires_grad=True)
        out = []
        for write in (lambda y: y.zero_(), lambda y: y.fill_(2.0),
                      lambda y: y.copy_(lib.ones(3))):
            y = x * 1
            write(y)
            y.sum().backward()
            out.append((y.tolist(), x.grad.tolist()))
            x.grad = None
        return out
    got, expected = both(run)
    assert got == expected
    assert got[1] == ([2.0] * 3, [0.0] * 3)


# ---------------------------------------------------------------- zero_ / fill_ / copy_
COPIES = {
    "fill_ float": lambda lib: lib.zeros(2, 3).fill_(2.5),
    "fill_ int tensor with float": lambda lib: lib.zeros(3, dtype=lib.int64).fill_(2.7),
    "fill_ with 0-d tensor": lambda lib: lib.zeros(3).fill_(lib.tensor(4, dtype=lib.int64)),
    "fill_ bool": lambda lib: lib.zeros(3, dtype=lib.bool).fill_(1),
    "zero_ on a strided view": lambda lib: (lambda x: (x.t()[1:].zero_(), x)[1])(
        lib.arange(6.0).reshape(2, 3)),
    "copy_ broadcasts src": lambda lib: lib.zeros(2, 3).copy_(lib.tensor([1, 2, 3])),
    "copy_ casts float to int": lambda lib: lib.zeros(3, dtype=lib.int64).copy_(
        lib.tensor([1.7, -2.7, 3.2])),
    "copy_ float64 into float32": lambda lib: lib.zeros(2).copy_(
        lib.tensor([0.1, 1e-9], dtype=lib.float64)),
    "copy_ into bool": lambda lib: lib.zeros(3, dtype=lib.bool).copy_(lib.tensor([0.0, 2, -1])),
    "copy_ overlapping memory": lambda lib: (lambda x: (x[1:].copy_(x[:-1]), x)[1])(
        lib.arange(5.0)),
    "copy_ wrong shape": lambda lib: lib.zeros(2, 3).copy_(lib.ones(2)),
    "fill_ with 1-D tensor": lambda lib: lib.zeros(2).fill_(lib.ones(1)),
}


@pytest.mark.parametrize("name", list(COPIES))
def test_zero_fill_and_copy_match_torch(name):
    got, expected = both(lambda lib: (lambda t: (as_numpy(t).tolist(), str(t.dtype)[-7:]))(
        COPIES[name](lib)))
    assert got == expected


def test_gradients_through_fill_and_copy_match_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        s = lib.tensor([[1.0], [2.0]], dtype=lib.float64, requires_grad=True)
        y = (x * 1).fill_(v)
        z = lib.zeros(2, 3).copy_(s)  # a plain tensor becomes part of the graph
        (y * lib.arange(3.0)).sum().backward()
        (z * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return x.grad.tolist(), v.grad.tolist(), s.grad.tolist(), str(s.grad.dtype)[-7:]
    got, expected = both(run)
    assert got == expected


@pytest.mark.parametrize("op", [lambda x: x.add_(1), lambda x: x.mul_(2), lambda x: x.exp_(),
                                lambda x: x.copy_(x.detach() * 0 + 1), lambda x: x.clamp_(0, 1),
                                lambda x: x.__setitem__(0, 5.0)])
def test_writing_into_an_expanded_view_is_a_runtime_error(op):
    for lib in (learntorch, require_torch()):
        x = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError, match="single memory location"):
            op(x)


def test_fill_and_zero_of_an_expanded_view_write_the_shared_memory_like_torch():
    got = both(lambda lib: (lambda base: (base.expand(3, 4).fill_(2), base.tolist())[1])(
        lib.zeros(3, 1)))
    assert got[0] == got[1] == [[2.0], [2.0], [2.0]]


@pytest.mark.parametrize("op, error", [
    (lambda lib: lib.ones(3, dtype=lib.int64).add_(1.5), RuntimeError),
    (lambda lib: lib.ones(3, dtype=lib.bool).add_(1), RuntimeError),
    (lambda lib: lib.ones(3).add_(lib.ones(2, 3)), RuntimeError),
    (lambda lib: lib.ones(3).copy_([1, 2, 3]), TypeError),
])
def test_in_place_results_that_do_not_fit_the_tensor_are_refused(op, error):
    for lib in (learntorch, require_torch()):
        with pytest.raises(error):
            op(lib)


def test_in_place_keeps_the_tensors_dtype():
    got = both(lambda lib: [str(t.dtype)[-7:] for t in (
        lib.ones(3).add_(lib.ones(3, dtype=lib.float64)),
        lib.ones(3, dtype=lib.int64).mul_(lib.tensor([2, 3, 4], dtype=lib.int32)),
        lib.ones(3, dtype=lib.float64).mul_(lib.ones(3, dtype=lib.float16)))])
    assert got[0] == got[1]
