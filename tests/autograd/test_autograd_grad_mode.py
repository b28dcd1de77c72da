"""no_grad / enable_grad / set_grad_enabled / inference_mode, as torch's."""
import pytest

import learntorch
from oracle import require_torch


def both(program):
    return program(learntorch), program(require_torch())


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """A failing test must not leave recording switched off for the tests after it."""
    yield
    learntorch.set_grad_enabled(True)


def test_context_managers_nest_and_restore():
    def program(m):
        x = m.tensor([1.0], requires_grad=True)
        seen = [m.is_grad_enabled()]
        with m.no_grad():
            seen.append(m.is_grad_enabled())
            y = x * 2
            with m.enable_grad():
                seen.append(m.is_grad_enabled())
                z = x * 2
            seen.append(m.is_grad_enabled())
        seen.append(m.is_grad_enabled())
        return seen, (y.requires_grad, y.grad_fn is None, y.is_leaf), (z.requires_grad,
                                                                        z.grad_fn is None)
    lt, th = both(program)
    assert lt == th == ([True, False, True, False, True], (False, True, True), (True, False))


def test_mode_is_restored_after_an_exception():
    def program(m):
        # set_grad_enabled(False) switches at construction, so each is built right here
        for make in (m.no_grad, lambda: m.set_grad_enabled(False), m.inference_mode):
            with pytest.raises(ValueError):
                with make():
                    raise ValueError("boom")
            assert m.is_grad_enabled()
        with m.no_grad():
            with pytest.raises(KeyError):
                with m.enable_grad():
                    raise KeyError
            assert not m.is_grad_enabled()
        return m.is_grad_enabled()
    assert both(program) == (True, True)


def test_decorators_with_and_without_parentheses_also_on_recursion():
    def program(m):
        @m.no_grad()
        def countdown(n, x):
            return (x * 2, m.is_grad_enabled()) if n == 0 else countdown(n - 1, x)

        @m.no_grad
        def bare():
            return m.is_grad_enabled()

        @m.enable_grad()
        def enabled():
            return m.is_grad_enabled()

        x = m.tensor([1.0], requires_grad=True)
        y, inside = countdown(5, x)
        with m.no_grad():
            inner = enabled()
            after_inner = m.is_grad_enabled()
        return y.requires_grad, inside, bare(), inner, after_inner, m.is_grad_enabled(), \
            countdown.__name__
    lt, th = both(program)
    assert lt == th == (False, False, False, True, False, True, "countdown")


def test_decorated_function_restores_mode_when_it_raises():
    def program(m):
        @m.no_grad()
        def fails():
            raise RuntimeError("inside")
        with pytest.raises(RuntimeError):
            fails()
        return m.is_grad_enabled()
    assert both(program) == (True, True)


def test_set_grad_enabled_as_a_call_a_context_and_a_decorator():
    def program(m):
        seen = []
        m.set_grad_enabled(False)
        seen.append(m.is_grad_enabled())
        m.set_grad_enabled(True)
        seen.append(m.is_grad_enabled())
        with m.set_grad_enabled(False):
            seen.append(m.is_grad_enabled())
        seen.append(m.is_grad_enabled())

        @m.set_grad_enabled(False)
        def off():
            return m.is_grad_enabled()
        seen.append(m.is_grad_enabled())  # decorating must not switch the mode
        seen.append(off())
        seen.append(m.is_grad_enabled())
        with m.no_grad():
            with m.set_grad_enabled(True):
                seen.append(m.is_grad_enabled())
            seen.append(m.is_grad_enabled())
        return seen
    lt, th = both(program)
    assert lt == th == [False, True, False, True, True, False, True, True, False]


def test_inference_mode_switches_recording_off_and_false_is_a_no_op():
    def program(m):
        x = m.tensor([1.0], requires_grad=True)
        with m.inference_mode():
            off = (m.is_grad_enabled(), (x * 2).requires_grad)
        with m.inference_mode(False):
            kept = m.is_grad_enabled()
        return off, kept
    assert both(program) == (((False, False), True), ((False, False), True))


def test_results_under_no_grad_are_leaves_without_history():
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    with learntorch.no_grad():
        y = (x * 2).exp().sum()
    assert (y.requires_grad, y.grad_fn, y.is_leaf) == (False, None, True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_grad_mode_is_per_thread_like_torch():
    """A no_grad block (or an op's forward) in one thread must not stop recording in another."""
    import threading
    failures = []
    start = threading.Barrier(2)

    def record():
        start.wait()
        for _ in range(300):
            x = learntorch.randn(3, requires_grad=True)
            y = (x * 2).sum()
            if not y.requires_grad:
                failures.append("an op in the recording thread was not recorded")
                return
            y.backward()

    def no_grad_loop():
        start.wait()
        for _ in range(3000):
            with learntorch.no_grad():
                learntorch.ones(2) * 2

    seen_in_thread = []
    t1, t2 = threading.Thread(target=record), threading.Thread(target=no_grad_loop)
    t1.start(), t2.start()
    t1.join(), t2.join()
    with learntorch.no_grad():
        t3 = threading.Thread(target=lambda: seen_in_thread.append(learntorch.is_grad_enabled()))
        t3.start()
        t3.join()
    assert failures == []
    assert seen_in_thread == [True]  # a new thread starts with grad mode on, as in torch
    assert learntorch.is_grad_enabled()
