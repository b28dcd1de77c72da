"""The autograd side of ``Tensor``: requires_grad, detach, retain_grad, hooks,
``.grad`` and ``.data`` -- the same programs run in learntorch and torch."""
import warnings

import numpy as np
import pytest

import learntorch
from oracle import assert_same, both, as_numpy, require_torch




def error_type(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__


# ---------------------------------------------------------------- requires_grad
def test_integer_and_bool_tensors_cannot_require_grad():
    def program(m):
        return [error_type(lambda: m.tensor([1, 2]).requires_grad_()),
                error_type(lambda: setattr(m.tensor([True]), "requires_grad", True)),
                error_type(lambda: m.tensor([1, 2], requires_grad=True)),
                error_type(lambda: m.zeros(2, dtype=m.int64, requires_grad=True)),
                m.tensor([1, 2]).requires_grad_(False).requires_grad]
    assert_same(*both(program))
    with pytest.raises(RuntimeError, match=r"floating point.*int64.*\.float\(\)"):
        learntorch.tensor([1, 2]).requires_grad_()


def test_requires_grad_of_a_non_leaf_can_only_be_set_through_requires_grad_true():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        return [y.requires_grad_(True) is y,
                error_type(lambda: y.requires_grad_(False)),
                error_type(lambda: setattr(y, "requires_grad", False)),
                error_type(lambda: setattr(y, "requires_grad", True))]
    assert_same(*both(program))


def test_a_leaf_made_under_no_grad_can_start_requiring_grad():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.no_grad():
            w = x * 2
        w.requires_grad = True
        (w * w).sum().backward()
        return w.is_leaf, w.grad, x.grad
    assert_same(*both(program))


def test_is_leaf_and_grad_fn():
    def program(m):
        x = m.tensor([1.0], requires_grad=True)
        c = m.tensor([1.0])
        y = x * 2
        return [x.is_leaf, x.grad_fn is None, c.is_leaf, y.is_leaf, y.grad_fn is None,
                (c * 2).is_leaf, y.grad_fn.name()]
    assert_same(*both(program))


# ---------------------------------------------------------------- detach / data
def test_detach_shares_memory_and_version_counter_but_not_history():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        d.add_(1)  # visible through y, and counted in y's version
        return [d.requires_grad, d.is_leaf, d.grad_fn is None, y, d._version, y._version]
    assert_same(*both(program))


def test_detach_in_place_turns_a_result_into_a_leaf():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        same = y.detach_() is y
        return [same, y.requires_grad, y.is_leaf, y.grad_fn is None]
    assert_same(*both(program))


def test_data_shares_memory_but_changes_through_it_are_not_versioned():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        d = x.data
        d.mul_(2)
        before = x._version
        x.data = m.tensor([5.0, 6.0])
        return [d.requires_grad, d.is_leaf, before, x, x._version, x.requires_grad]
    assert_same(*both(program))


# ---------------------------------------------------------------- retain_grad and .grad
def test_retain_grad_keeps_the_gradient_of_a_non_leaf_and_accumulates_it():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        x.retain_grad()  # a no-op on leaves
        (y * y).sum().backward(retain_graph=True)
        first = y.grad.clone()
        (y * 1).sum().backward()
        return [y.retains_grad, x.retains_grad, first, y.grad, x.grad]
    assert_same(*both(program))


def test_reading_grad_of_a_non_leaf_warns_and_gives_none():
    def program(m):
        x = m.tensor([1.0], requires_grad=True)
        y = x * 2
        y.sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = y.grad
        return value, [w.category.__name__ for w in caught]
    lt, th = both(program)
    assert_same(lt, th)
    assert lt[1] == ["UserWarning"]


def test_grad_setter_checks_type_shape_and_dtype():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        errors = [error_type(lambda: setattr(x, "grad", m.tensor([1.0, 2.0, 3.0]))),
                  error_type(lambda: setattr(x, "grad", m.tensor([1, 2]))),
                  error_type(lambda: setattr(x, "grad", m.tensor([1.0, 2.0], dtype=m.float64))),
                  error_type(lambda: setattr(x, "grad", [1.0, 2.0]))]
        x.grad = m.tensor([0.5, 0.5])
        (x * 2).sum().backward()  # accumulates onto the assigned gradient
        return errors, x.grad
    assert_same(*both(program))
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"size '\[3\]'.*size '\[2\]'"):
        x.grad = learntorch.tensor([1.0, 2.0, 3.0])


# ---------------------------------------------------------------- hooks
def test_hooks_on_leaf_and_non_leaf_can_replace_the_gradient_and_be_removed():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        hx = x.register_hook(lambda g: g * 10)
        y = x * 2
        hy = y.register_hook(lambda g: g + 1)
        y.register_hook(lambda g: seen.append(g.clone()))  # returning None keeps the gradient
        y.sum().backward()
        hooked = x.grad.clone()
        hx.remove()
        hy.remove()
        x.grad = None
        (x * 2).sum().backward()
        return hooked, seen, x.grad
    assert_same(*both(program))


def test_hook_sees_the_gradient_summed_over_every_path_once():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: calls.append(g.clone()))
        y = x * 1
        y.register_hook(lambda g: calls.append(g.clone()))
        (y * 2 + y * 3 + x).sum().backward()
        return calls
    assert_same(*both(program))


def test_leaf_hooks_also_run_for_autograd_grad():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 10)
        return m.autograd.grad((x * 2).sum(), x)
    assert_same(*both(program))


def test_retained_grad_is_stored_after_all_hooks_whatever_the_order():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g * 100)  # registered later, still runs first
        (y * y).sum().backward()
        return y.grad, x.grad
    assert_same(*both(program))


def test_register_hook_needs_requires_grad():
    def program(m):
        return error_type(lambda: m.tensor([1.0]).register_hook(lambda g: g))
    assert_same(*both(program))


@pytest.mark.parametrize("change", ["size", "dtype"])
def test_a_hook_may_not_change_the_gradients_shape_or_dtype(change):
    def program(m):
        def reshaping_hook(g):
            return g[:1] if change == "size" else g.double()
        x = m.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(reshaping_hook)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        return str(info.value).split(" (")[0].split(":")[0]
    lt, th = both(program)
    assert lt == th  # "hook 'reshaping_hook' has changed the size/type of value"
