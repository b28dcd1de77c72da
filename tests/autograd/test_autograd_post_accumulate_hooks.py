"""register_post_accumulate_grad_hook: called with the leaf once its .grad holds the sum."""
import pytest

import learntorch
from tests.oracle import require_torch


def _run(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    y = x * x + x * 3.0            # x used twice: one call, with the summed gradient
    y.sum().backward()
    (x * 2.0).sum().backward()     # a second backward accumulates, and calls again
    handle.remove()
    (x * 2.0).sum().backward()     # removed: no call
    lib.autograd.grad((x * 5.0).sum(), x)  # grad() accumulates nothing: no call either
    return seen


def test_hook_sees_the_accumulated_gradient_once_per_backward():
    assert _run(learntorch) == [[5.0, 7.0], [7.0, 9.0]]


def test_hook_calls_match_torch():
    torch = require_torch()
    assert _run(learntorch) == _run(torch)


def test_hook_on_a_non_leaf_is_refused_as_in_torch():
    x = learntorch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_hooks_run_in_registration_order_after_accumulation():
    x = learntorch.tensor([1.0], requires_grad=True)
    order = []
    x.register_post_accumulate_grad_hook(lambda t: order.append(("first", t.grad.item())))
    x.register_post_accumulate_grad_hook(lambda t: order.append(("second", t.grad.item())))
    (x * 4.0).sum().backward()
    assert order == [("first", 4.0), ("second", 4.0)]
